"""``ipu.config.IPUConfig`` with Graphcore's option names, and ``configure_ipu_system``.

Options are grouped as in Graphcore's TensorFlow port (``config.device_connection.type``,
``config.ipu_model.tiles_per_ipu``...). Setting an option that does not exist is an error that
names the closest one, instead of being silently ignored.

Example:

>>> config = ipu.config.IPUConfig()
>>> config.auto_select_ipus = 1
>>> config.ipu_model.tiles_per_ipu = 64
>>> config.matmuls.poplar_options = {"availableMemoryProportion": "0.3"}
>>> config.configure_ipu_system()
>>> ipu.system.current().spec.tiles
64
"""

from __future__ import annotations

import difflib
import enum
import os

from ..validation import boolean


class DeviceConnectionType(enum.Enum):
    """When the IPUs are attached: ``IPUConfig.device_connection.type``, Graphcore's enum.

    ``ALWAYS`` (the default) attaches when the system is configured, ``ON_DEMAND`` when first used (so
    several processes can share a machine). ``PRE_COMPILE`` and ``NEVER`` compile without running, and
    fill the executable cache: on the real system a way to compile without an IPU; in the course, a quick
    way to get simulated times and memory without training (the weights do not change).

    Example:

    >>> config = ipu.config.IPUConfig()
    >>> config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    >>> config.device_connection.type.name
    'PRE_COMPILE'
    >>> [member.name for member in ipu.config.DeviceConnectionType]
    ['ALWAYS', 'ON_DEMAND', 'PRE_COMPILE', 'NEVER']
    """

    ALWAYS = "always"
    ON_DEMAND = "on_demand"
    PRE_COMPILE = "pre_compile"
    NEVER = "never"


class SelectionOrder(enum.Enum):
    AUTO = "auto"
    ZIGZAG = "zigzag"
    SNAKE = "snake"
    HOOF = "hoof"


def _ipu_counts(owner, name, value):
    """``auto_select_ipus`` / ``select_ipus``: a whole number, or a list or tuple of them."""
    items = value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(n, bool) or not isinstance(n, int) for n in items):
        raise TypeError(
            f"{owner}.{name} must be a whole number (or a list of them), got {value!r}; "
            f"write e.g. {owner}.{name} = {int(value) if isinstance(value, float) else 1}"
        )
    return list(value) if isinstance(value, tuple) else value


class OptionKindError(TypeError, ValueError):
    """An option given a value of the wrong kind (a TypeError, and the ValueError Graphcore raises)."""


def _checked(owner, name, default, value):
    """``value`` if it has the kind of ``default`` (switches are True/False, never strings like "no")."""
    if name in ("auto_select_ipus", "select_ipus"):
        return _ipu_counts(owner, name, value)
    if isinstance(default, bool):
        return boolean(f"{owner}.{name}", value)
    if isinstance(default, enum.Enum) and not isinstance(value, type(default)):
        takes_bool = hasattr(type(default), "from_bool")  # Graphcore's esr takes True / False too
        if takes_bool and isinstance(value, bool):
            return value
        raise OptionKindError(
            f"{owner}.{name} must be an ipu.config.{type(default).__name__} "
            f"({', '.join(m.name for m in type(default))}){' or a bool' if takes_bool else ''}, "
            f"got {value!r}"
        )
    if isinstance(default, dict) and not isinstance(value, dict):
        raise OptionKindError(
            f"{owner}.{name} must be a dict of Poplar option names to strings, "
            f"e.g. {{'availableMemoryProportion': '0.3'}}, got {value!r}"
        )
    if isinstance(default, str) and not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{owner}.{name} must be a string, got {value!r}")
    if default is None and value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{owner}.{name} must be a whole number or None, got {value!r}")
    return value


class StochasticRoundingBehaviour(enum.Enum):
    """How the IPU rounds fp16 results: Graphcore's values for ``IPUConfig.floating_point_behaviour.esr``.

    The IPU can round each fp16 result stochastically in hardware, up or down with probabilities that
    make the rounding exact on average: a small weight update that round-to-nearest would lose keeps its
    effect over many steps (notebook 06). ON: stochastic rounding; OFF (default): to nearest.
    REPLICA_IDENTICAL_ONLY rounds stochastically only where every replica computes the same values;
    ipu-teach simulates stochastic rounding where fp16 weights are written, which replicas do identically,
    so it acts as ON. ``from_bool`` maps True / False as Graphcore's config does (``esr = True`` works too).

    Example:

    >>> config = ipu.config.IPUConfig()
    >>> config.floating_point_behaviour.esr = ipu.config.StochasticRoundingBehaviour.ON
    >>> ipu.config.StochasticRoundingBehaviour.from_bool(False)
    <StochasticRoundingBehaviour.OFF: 'off'>
    """

    OFF = "off"
    ON = "on"
    REPLICA_IDENTICAL_ONLY = "replica_identical_only"

    @staticmethod
    def from_bool(value):
        return StochasticRoundingBehaviour.ON if value else StochasticRoundingBehaviour.OFF


class _Options:
    """An attribute group that refuses unknown names and values of the wrong kind."""

    _defaults: dict = {}
    _groups: tuple = ()
    _path: str = ""
    """How the user reaches the group (``IPUConfig.profiling``), for messages."""

    def __init__(self):
        for name, value in self._defaults.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        owner = self._path or type(self).__name__
        if name not in self._defaults:
            close = difflib.get_close_matches(name, self._defaults, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise AttributeError(f"{owner} has no option {name!r}.{hint} Options: {', '.join(sorted(self._defaults))}")
        if name in self._groups:
            raise AttributeError(
                f"{owner}.{name} is a group of options: set them one by one ({owner}.{name}.<option> = ...)"
            )
        object.__setattr__(self, name, _checked(owner, name, self._defaults[name], value))

    def as_dict(self) -> dict:
        return {
            name: (value.as_dict() if isinstance(value, _Options) else value)
            for name, value in ((n, getattr(self, n)) for n in self._defaults)
        }

    def __repr__(self):
        return f"{type(self).__name__}({self.as_dict()})"


class DeviceConnectionOptions(_Options):
    _path = "IPUConfig.device_connection"
    _defaults = {"type": DeviceConnectionType.ALWAYS, "version": "", "enable_remote_buffers": False}


class IPUModelOptions(_Options):
    """The simulated IPU: ``tiles_per_ipu`` (None: all 1,472) and ``version`` ('ipu2' Mk2, 'ipu21' Bow)."""

    _defaults = {"tiles_per_ipu": None, "version": "ipu2", "compile_ipu_code": True}
    _path = "IPUConfig.ipu_model"


class ProfilingOptions(_Options):
    """Reports (PopVision-like): ipu-teach's own shortcut, not one of Graphcore's options. Graphcore's
    ``IPUConfig`` has no ``profiling`` group: on a real IPU reports are turned on with
    ``POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}'``, which
    ipu-teach reads too. Code meant for a real IPU should use the environment variable."""

    _defaults = {"auto_report": False, "directory": "./report", "allow_out_of_memory": False}
    _path = "IPUConfig.profiling"


class OptimizationOptions(_Options):
    """``maximum_cross_replica_sum_buffer_size``: the bytes of gradients that may wait to be all-reduced
    together. Graphcore's default 0 all-reduces each variable's gradient on its own as soon as it is
    ready, paying each collective's latency; Graphcore's applications set it to several MB so the
    gradients go in a few large collectives (graphcore/tensorflow ``IPUConfig.optimizations``)."""

    _defaults = {"maximum_cross_replica_sum_buffer_size": 0}


class FloatingPointBehaviourOptions(_Options):
    """``IPUConfig.floating_point_behaviour`` (graphcore/tensorflow ``_FloatingPointBehaviourConfig``): ``esr``
    turns on stochastic rounding (a StochasticRoundingBehaviour, or a bool); ``set_all`` turns on every
    option. The exception flags (inv, div0, oflo, nanoo) are accepted; ipu-teach does not trap on them."""

    _defaults = {
        "inv": False,
        "div0": False,
        "oflo": False,
        "esr": StochasticRoundingBehaviour.OFF,
        "nanoo": False,
        "set_all": False,
    }


class ConvolutionOptions(_Options):
    """``IPUConfig.convolutions.poplar_options``: Poplar's convolution options as strings, of which ipu-teach
    simulates ``availableMemoryProportion`` (temporary memory vs speed) and ``partialsType``."""

    _defaults = {"poplar_options": {}}

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "poplar_options", {})


class MatmulOptions(ConvolutionOptions):
    """``IPUConfig.matmuls.poplar_options`` (and ``clear_pass_type``, accepted), as for convolutions."""

    _defaults = {"poplar_options": {}, "clear_pass_type": False}


class IOTilesOptions(_Options):
    """``IPUConfig.io_tiles``: tiles kept for streaming data so transfers overlap the computation
    (``num_io_tiles`` with ``place_ops_on_io_tiles``; see ``ipu.io_tiles``)."""

    _defaults = {"num_io_tiles": 0, "place_ops_on_io_tiles": False, "io_tile_available_memory_proportion": 0.9}
    _path = "IPUConfig.io_tiles"


class IPUConfig(_Options):
    """The configuration of the IPU system, with Graphcore's option names (``ipu.config.IPUConfig``).

    Set its options, then call ``configure_ipu_system()`` before creating the ``IPUStrategy``: the
    simulated IPUs it selects are attached from then on. Options are grouped as in Graphcore's
    TensorFlow (``config.device_connection.type``, ``config.ipu_model.tiles_per_ipu``,
    ``config.io_tiles.num_io_tiles``, ``config.matmuls.poplar_options``...). An option that does not exist
    is an error naming the closest one, not silently ignored; a value of the wrong kind is refused.

    Attributes:
      auto_select_ipus: How many IPUs to attach (a power of two; a list for several devices). Each IPU
        runs a replica unless the model is pipelined over them.
      select_ipus: Device IDs to attach instead, as ``gc-info -l`` lists them.
      allow_recompute: Recompute activations in the backward pass instead of keeping them: a pipeline's from
        each stage's stashed input; a model that is not pipelined from its RecomputationCheckpoint layers.
      device_connection, ipu_model, optimizations, floating_point_behaviour, convolutions, matmuls,
        io_tiles, profiling: The groups of options.

    Example:

    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 2
    >>> config.configure_ipu_system()
    >>> ipu.system.current().num_ipus
    2
    >>> config.auto_select_ipu = 1
    Traceback (most recent call last):
    ...
    AttributeError: IPUConfig has no option 'auto_select_ipu'. Did you mean 'auto_select_ipus'? ...
    """

    _defaults = {
        "auto_select_ipus": [],
        "select_ipus": [],
        "selection_order": SelectionOrder.AUTO,
        "allow_recompute": False,
        "device_connection": None,
        "ipu_model": None,
        "profiling": None,
        "optimizations": None,
        "floating_point_behaviour": None,
        "convolutions": None,
        "matmuls": None,
        "io_tiles": None,
    }
    _groups = ("device_connection", "ipu_model", "profiling", "io_tiles")

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "device_connection", DeviceConnectionOptions())
        object.__setattr__(self, "ipu_model", IPUModelOptions())
        object.__setattr__(self, "profiling", ProfilingOptions())
        object.__setattr__(self, "optimizations", OptimizationOptions())
        object.__setattr__(self, "floating_point_behaviour", FloatingPointBehaviourOptions())
        object.__setattr__(self, "convolutions", ConvolutionOptions())
        object.__setattr__(self, "matmuls", MatmulOptions())
        object.__setattr__(self, "io_tiles", IOTilesOptions())

    def configure_ipu_system(self, device="cpu") -> None:
        """Configures the IPU system: attaches the simulated IPUs this config selects.

        Graphcore's method form of ``ipu.config.configure_ipu_system(config)``. Like Graphcore's, it returns
        nothing: ``ipu.system.current()`` describes what was attached. Calling it again (with this or
        another config) replaces the system configured before, for the models compiled from then on.

        Args:
          device: Accepted for Graphcore compatibility (``"cpu"``, where the configuration runs).

        Raises:
          ValueError: for an IPU count the system cannot give (not a power of two, or more IPUs than the
            simulated machine has; ``ipu.system.use_system`` picks a bigger one).

        Example:

        >>> config = ipu.config.IPUConfig()
        >>> config.auto_select_ipus = 4
        >>> config.configure_ipu_system()
        >>> attached = ipu.system.current()
        >>> attached.num_ipus, attached.device_id, attached.system
        (4, 24, 'IPU-POD16')
        """
        from .system import configure

        configure(self)


def configure_ipu_system(config: IPUConfig, device="cpu"):
    """Graphcore's function form of ``IPUConfig.configure_ipu_system``."""
    if not isinstance(config, IPUConfig):
        raise TypeError(f"configure_ipu_system expects an ipu.config.IPUConfig, got {type(config).__name__}")
    config.configure_ipu_system(device)
