"""Where PopTorch keeps tensors: ``poptorch.TensorLocationSettings`` and ``Options.TensorLocations``
(python/options.py of graphcore/poptorch).

Off-chip (remote buffer) storage, replicated tensor sharding and I/O tiles are recorded as set and checked as
PopTorch checks them. The optimizer state off chip is simulated: with gradient accumulation each weight update
loads its state from streaming memory and stores it back (``optimizer_off_chip``; :mod:`ipu_teach.ipu.offloading`
costs the copies); every other tensor stays on chip, so the other settings change no simulated figure.

Example:

>>> from ipu_teach import poptorch
>>> opts = poptorch.Options()
>>> opts.TensorLocations.setOptimizerLocation(poptorch.TensorLocationSettings().useOnChipStorage(False))
<...>
>>> opts.TensorLocations.locations, opts.TensorLocations.optimizer_off_chip
({'optimizer': {'onChip': False}}, True)
"""


def _checked(name, value, kind):
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{name} expects {'a bool' if kind is bool else 'an int'}, got {value!r}")
    return value


class TensorLocationSettings:
    """How one kind of tensor is stored: on chip or in remote buffers, sharded over replicas, through I/O tiles."""

    def __init__(self):
        self.settings = {}

    def minElementsForOffChip(self, min_elements: int):  # noqa: N802 (PopTorch's names)
        self.settings["minElementsForOffChip"] = _checked("minElementsForOffChip", min_elements, int)
        return self

    def minElementsForReplicatedTensorSharding(self, min_elements: int):  # noqa: N802
        name = "minElementsForReplicatedTensorSharding"
        self.settings[name] = _checked(name, min_elements, int)
        return self

    def useOnChipStorage(self, use: bool = True):  # noqa: N802
        self.settings["onChip"] = _checked("useOnChipStorage", use, bool)
        return self

    def useReplicatedTensorSharding(self, use: bool = True):  # noqa: N802
        self.settings["useReplicatedTensorSharding"] = _checked("useReplicatedTensorSharding", use, bool)
        return self

    def useIOTilesToLoad(self, use: bool = True):  # noqa: N802
        self.settings["useIOTilesToLoad"] = _checked("useIOTilesToLoad", use, bool)
        return self

    def useIOTilesToStore(self, use: bool = True):  # noqa: N802
        self.settings["useIOTilesToStore"] = _checked("useIOTilesToStore", use, bool)
        return self


class TensorLocationOptions:
    """``Options.TensorLocations``: the settings of activations, weights, optimizer state and accumulators, and
    the number of I/O tiles."""

    def __init__(self):
        self.locations, self.num_io_tiles = {}, 0

    def numIOTiles(self, num_tiles: int):  # noqa: N802
        _checked("numIOTiles", num_tiles, int)
        if not (32 <= num_tiles <= 192 and num_tiles % 2 == 0):
            raise ValueError(f"numIOTiles must be an even number between 32 and 192, got {num_tiles}")
        self.num_io_tiles = num_tiles
        return self

    @property
    def optimizer_off_chip(self) -> bool:
        """Whether the optimizer state lives in streaming memory: ``useOnChipStorage(False)`` set for it."""
        return self.locations.get("optimizer", {}).get("onChip") is False

    def _set(self, kind, location):
        if not isinstance(location, TensorLocationSettings):
            raise TypeError(f"expected a poptorch.TensorLocationSettings, got {type(location).__name__}")
        self.locations[kind] = dict(location.settings)
        return self

    def setActivationLocation(self, location):  # noqa: N802
        return self._set("activation", location)

    def setWeightLocation(self, location):  # noqa: N802
        return self._set("weight", location)

    def setOptimizerLocation(self, location):  # noqa: N802
        return self._set("optimizer", location)

    def setAccumulatorLocation(self, location):  # noqa: N802
        return self._set("accumulator", location)
