"""Synthetic data: ``TF_POPLAR_FLAGS=--use_synthetic_data``, the real SDK's way to find out whether a
model is I/O-bound.

Graphcore's flags (graphcore/tensorflow ``tensorflow/compiler/plugin/poplar/driver/poplar_xla_flags``
and its docs "Using synthetic data"): ``--use_synthetic_data`` stops every data transfer between the
host and the IPUs; ``--synthetic_data_categories=infeed,outfeed`` stops only some (a selective
alternative: don't give both); ``--synthetic_data_initializer`` fills the inputs on the IPU with
``uniform`` or ``normal`` random numbers or a constant, and without it their content is undefined.

So the program loses its infeed and outfeed host syncs and transfers (the step gets faster by exactly
what host I/O cost) and the model trains on data made on the device, not on the dataset: the losses
and weights it produces mean nothing, as on the real system. Undefined content is zeros here, so runs
repeat; "uniform" is [0, 1) here. Integer inputs (class indices) get the constant, or 0 for a random
initializer, so that they stay valid class indices (a real IPU would read whatever the memory held).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import messages, poplar_flags

CATEGORIES = ("seed", "hostembedding", "parameters", "infeed", "outfeed")
"""Graphcore's synthetic data categories; ipu-teach streams only the infeed and the outfeed."""
RANDOM_INITIALIZERS = ("uniform", "random", "normal")


@dataclass(frozen=True)
class SyntheticData:
    """Which host streams are synthetic, and how the IPU fills the synthetic inputs."""

    infeed: bool = False
    outfeed: bool = False
    initializer: str = ""

    @classmethod
    def from_flags(cls, flags: dict | None = None) -> "SyntheticData":
        """Read from ``TF_POPLAR_FLAGS`` (or the parsed ``flags``); bad values are a ValueError."""
        flags = poplar_flags.flags() if flags is None else flags
        everything = _switch(flags.get("use_synthetic_data", False))
        categories = _categories(flags.get("synthetic_data_categories"))
        if everything and categories:
            messages.warning(
                "TF_POPLAR_FLAGS: --synthetic_data_categories is a selective alternative to "
                "--use_synthetic_data; with both, every category is synthetic"
            )
        chosen = set(CATEGORIES) if everything else categories
        initializer = flags.get("synthetic_data_initializer", "")
        initializer = "" if initializer is True else str(initializer)
        if initializer and initializer not in RANDOM_INITIALIZERS:
            try:
                float(initializer)
            except ValueError:
                raise ValueError(
                    f"TF_POPLAR_FLAGS: --synthetic_data_initializer={initializer!r} must be 'uniform', "
                    "'normal' or a number"
                ) from None
        return cls("infeed" in chosen, "outfeed" in chosen, initializer)

    @property
    def active(self) -> bool:
        return self.infeed or self.outfeed

    def describe(self) -> dict:
        """What of it shapes the compiled program (for the executable cache key)."""
        return {"infeed": self.infeed, "outfeed": self.outfeed, "initializer": self.initializer}

    def tell(self, model_name: str) -> None:
        streams = " and ".join(name for name, on in (("infeed", self.infeed), ("outfeed", self.outfeed)) if on)
        made = (
            f"filled with {self.initializer!r}"
            if self.initializer
            else "not initialised (undefined on a real IPU, zeros here)"
        )
        data = (
            f" `{model_name}` runs on data made on the IPU ({made}), not on your dataset: its losses and "
            "weights mean nothing."
            if self.infeed
            else ""
        )
        messages.info(
            f"TF_POPLAR_FLAGS asks for synthetic data: the {streams} of `{model_name}` stay on the IPU, "
            f"off the host link.{data} Use it to time the model without host I/O."
        )

    def inputs(self, arrays, rng: np.random.Generator):
        """The synthetic version of one batch's arrays, nested as given (lists, tuples, dicts of arrays;
        None stays None), each of the same shape and dtype."""
        if arrays is None:
            return None
        if isinstance(arrays, dict):
            return {name: self.inputs(value, rng) for name, value in arrays.items()}
        if isinstance(arrays, (list, tuple)):
            return type(arrays)(self.inputs(value, rng) for value in arrays)
        return self._fill(np.asarray(arrays), rng)

    def _fill(self, array, rng):
        integer = np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_
        if self.initializer in ("uniform", "random") and not integer:
            return rng.random(array.shape).astype(array.dtype)
        if self.initializer == "normal" and not integer:
            return rng.standard_normal(array.shape).astype(array.dtype)
        value = float(self.initializer) if self.initializer not in ("",) + RANDOM_INITIALIZERS else 0.0
        return np.full(array.shape, int(value) if integer else value, dtype=array.dtype)


NO_SYNTHETIC_DATA = SyntheticData()
"""Every stream crosses the host link (no TF_POPLAR_FLAGS synthetic data)."""


def _switch(value) -> bool:
    if value is True:
        return True
    if str(value).lower() in ("true", "1"):
        return True
    if str(value).lower() in ("false", "0"):
        return False
    raise ValueError(f"TF_POPLAR_FLAGS: --use_synthetic_data takes no value (or true/false), got {value!r}")


def _categories(value) -> set:
    if value is None:
        return set()
    if value is True or not str(value).strip():
        raise ValueError(
            "TF_POPLAR_FLAGS: --synthetic_data_categories needs a comma-separated list of "
            f"{', '.join(CATEGORIES)}, e.g. --synthetic_data_categories=infeed,outfeed"
        )
    names = {name.strip() for name in str(value).split(",")}
    unknown = sorted(names - set(CATEGORIES))
    if unknown:
        raise ValueError(
            f"TF_POPLAR_FLAGS: unknown synthetic data categor{'ies' if len(unknown) > 1 else 'y'} "
            f"{', '.join(map(repr, unknown))}: choose from {', '.join(CATEGORIES)}"
        )
    return names
