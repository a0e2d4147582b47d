"""The simulated IPU system (an IPU-POD16 by default) and the IPUs a configuration selects.

Devices are numbered as ``gc-info -l`` numbers them: on a Pod16 IDs 0-15 are single IPUs, 16-23
pairs, 24-27 groups of four, 28-29 of eight, 30 all sixteen. Multi-IPU devices come in powers of
two, which is why ``auto_select_ipus=3`` is an error.

Example:

>>> config = ipu.config.IPUConfig()
>>> config.auto_select_ipus = 3
>>> config.configure_ipu_system()
Traceback (most recent call last):
...
ValueError: ...
>>> config.auto_select_ipus = 2
>>> config.configure_ipu_system()
>>> ipu.system.current().device_id
16
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from .. import hardware
from ..session import on_reset, runtime
from . import attachments, host, poplar_log, poplar_options
from .config import DeviceConnectionType, IPUConfig, StochasticRoundingBehaviour
from .io_tiles import IOTiles
from .matrix_plan import DEFAULT_OPTIONS, MatrixOptions

SYSTEMS = {"IPU-M2000": 4, "IPU-POD16": 16, "IPU-POD64": 64}
DEFAULT_SYSTEM = "IPU-POD16"
VERSIONS = {"ipu2": hardware.MK2, "ipu21": hardware.BOW}


def device_table(total_ipus: int) -> list:
    """``(device id, first IPU, number of IPUs)`` for every device of the system, as gc-info lists them."""
    table, size = [], 1
    while size <= total_ipus:
        for first in range(0, total_ipus, size):
            table.append((len(table), first, size))
        size *= 2
    return table


@dataclass(frozen=True)
class SystemConfiguration:
    """What ``configure_ipu_system`` attached: the IPU spec, how many IPUs, and the options."""

    spec: hardware.IPUSpec
    num_ipus: int
    device_id: int
    connection: DeviceConnectionType
    allow_recompute: bool
    profiling: dict
    system: str = DEFAULT_SYSTEM
    cross_replica_sum_buffer_bytes: int = 0
    conv_options: MatrixOptions = DEFAULT_OPTIONS
    matmul_options: MatrixOptions = DEFAULT_OPTIONS
    stochastic_rounding: bool = False
    rounding_rng: np.random.Generator = field(default=None, compare=False, repr=False)
    """The generator of stochastic rounding, seeded (``ipu.utils.reset_ipu_seed``) so runs repeat."""
    io_tiles: IOTiles = IOTiles()
    remote_buffers: bool = True
    """Whether the program may use Poplar remote buffers (Streaming Memory): a real device says so; a compile-only
    one (PRE_COMPILE / NEVER) has them with ``IPUConfig.device_connection.enable_remote_buffers``."""

    @property
    def total_ipus(self) -> int:
        return SYSTEMS[self.system]

    @property
    def runs(self) -> bool:
        """False for PRE_COMPILE / NEVER: programs compile (and are cached) but do not execute."""
        return self.connection in (DeviceConnectionType.ALWAYS, DeviceConnectionType.ON_DEMAND)


def reseed_rounding(seed: int) -> None:
    """Seed stochastic rounding from now on, and in the configured system at once."""
    runtime.rounding_seed = int(seed)
    if runtime.configured is not None and runtime.configured.rounding_rng is not None:
        runtime.configured.rounding_rng.bit_generator.state = np.random.default_rng(int(seed)).bit_generator.state


def _stochastic_rounding(behaviour) -> bool:
    """``floating_point_behaviour.esr`` as Graphcore takes it: the enum, or a bool."""
    if behaviour.set_all:
        return True
    esr = behaviour.esr
    if isinstance(esr, bool):
        esr = StochasticRoundingBehaviour.from_bool(esr)
    if not isinstance(esr, StochasticRoundingBehaviour):
        raise ValueError(
            "IPUConfig.floating_point_behaviour.esr must be an ipu.config.StochasticRoundingBehaviour "
            f"(ON, OFF, REPLICA_IDENTICAL_ONLY) or a bool, got {esr!r}"
        )
    return esr is not StochasticRoundingBehaviour.OFF


def use_system(name: str) -> None:
    """Chooses the simulated machine the IPUs are selected from (ipu-teach only; default IPU-POD16).

    On a real system this is the machine you log in to; here it bounds ``auto_select_ipus`` (an IPU-M2000
    has 4 IPUs, an IPU-POD16 16, an IPU-POD64 64). It applies to the next ``configure_ipu_system``.

    Args:
      name: The system's name, one of ``ipu.system.SYSTEMS``: ``"IPU-M2000"``, ``"IPU-POD16"``, ``"IPU-POD64"``.

    Raises:
      ValueError: for an unknown name (the message lists the known ones).

    Example:

    >>> ipu.system.use_system("IPU-POD64")
    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 32
    >>> config.configure_ipu_system()
    >>> ipu.system.current().system, ipu.system.current().num_ipus
    ('IPU-POD64', 32)
    """
    if name not in SYSTEMS:
        raise ValueError(f"Unknown system {name!r}; choose one of {', '.join(SYSTEMS)}")
    runtime.system_name = name


def system_name() -> str:
    """The simulated machine ``configure_ipu_system`` selects IPUs from (ipu-teach only; see :func:`use_system`).

    Example:

    >>> ipu.system.system_name()
    'IPU-POD16'
    >>> ipu.system.use_system("IPU-M2000")
    >>> ipu.system.system_name()
    'IPU-M2000'
    >>> ipu.system.reset()
    """
    return runtime.system_name or DEFAULT_SYSTEM


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _select(config: IPUConfig, total: int):
    auto, select = config.auto_select_ipus, config.select_ipus
    auto_list = [auto] if isinstance(auto, int) else list(auto or [])
    select_list = [select] if isinstance(select, int) else list(select or [])
    if auto_list and select_list:
        raise ValueError("IPUConfig: set either auto_select_ipus or select_ipus, not both")
    if not auto_list and not select_list:
        raise ValueError(
            "IPUConfig: no IPUs selected; set config.auto_select_ipus = 1 (or the number of IPUs "
            "you need) before configure_ipu_system()"
        )
    table = device_table(total)
    if select_list:
        for device_id in select_list:
            if not isinstance(device_id, int) or not 0 <= device_id < len(table):
                raise ValueError(
                    f"IPUConfig.select_ipus: device {device_id!r} does not exist; the simulated "
                    f"{system_name()} has device IDs 0 to {len(table) - 1} (see `ipu-teach info`)"
                )
        return table[select_list[0]][2], select_list[0]
    for n in auto_list:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"IPUConfig.auto_select_ipus: expected a positive number of IPUs, got {n!r}")
        if not _is_power_of_two(n):
            lower, upper = 1 << (n.bit_length() - 1), 1 << n.bit_length()
            raise ValueError(
                f"IPUConfig.auto_select_ipus={n}: multi-IPU devices come in powers of two; "
                f"select {lower} or {upper} IPUs"
            )
    if sum(auto_list) > total:
        raise ValueError(
            f"IPUConfig.auto_select_ipus={auto!r} asks for {sum(auto_list)} IPUs but the simulated "
            f"system (an {system_name()}) has {total}; select fewer IPUs, or a bigger system with "
            "ipu.system.use_system('IPU-POD64')"
        )
    first = auto_list[0]
    device_id = next(i for i, _, size in table if size == first)
    return first, device_id


def configure(config: IPUConfig) -> SystemConfiguration:
    version = config.ipu_model.version
    if version not in VERSIONS:
        raise ValueError(
            f"IPUConfig.ipu_model.version: unknown IPU version {version!r}; choose one of {sorted(VERSIONS)}"
        )
    spec = VERSIONS[version]
    tiles = config.ipu_model.tiles_per_ipu
    if tiles is not None:
        if isinstance(tiles, bool) or not isinstance(tiles, int) or not 1 <= tiles <= spec.tiles:
            raise ValueError(f"IPUConfig.ipu_model.tiles_per_ipu: expected 1 to {spec.tiles} tiles, got {tiles!r}")
        if tiles != spec.tiles:
            spec = spec.with_tiles(tiles)
    num_ipus, device_id = _select(config, SYSTEMS[system_name()])
    buffer = config.optimizations.maximum_cross_replica_sum_buffer_size
    if isinstance(buffer, bool) or not isinstance(buffer, int) or buffer < 0:
        raise ValueError(
            "IPUConfig.optimizations.maximum_cross_replica_sum_buffer_size: expected a number of "
            f"bytes >= 0 (0: all-reduce each gradient on its own), got {buffer!r}"
        )
    configuration = SystemConfiguration(
        spec,
        num_ipus,
        device_id,
        config.device_connection.type,
        bool(config.allow_recompute),
        config.profiling.as_dict(),
        system_name(),
        buffer,
        poplar_options.parse(config.convolutions.poplar_options, "IPUConfig.convolutions.poplar_options"),
        poplar_options.parse(config.matmuls.poplar_options, "IPUConfig.matmuls.poplar_options"),
        _stochastic_rounding(config.floating_point_behaviour),
        np.random.default_rng(runtime.rounding_seed),
        IOTiles.from_config(config.io_tiles, spec),
        bool(config.device_connection.enable_remote_buffers)
        or config.device_connection.type in (DeviceConnectionType.ALWAYS, DeviceConnectionType.ON_DEMAND),
    )
    runtime.configured = configuration
    if configuration.runs:  # PRE_COMPILE and NEVER compile without attaching, as on a real system
        first = device_table(SYSTEMS[system_name()])[device_id][1]
        attachments.attach(system_name(), device_id, range(first, first + num_ipus), spec.name, spec.clock_hz)
    else:
        attachments.detach()
    poplar_log.attached(configuration)
    return configuration


def current() -> SystemConfiguration | None:
    """Returns what ``configure_ipu_system`` attached, or None when no IPU system is configured (ipu-teach only).

    The configuration holds the IPU ``spec`` (every figure with its source in ``ipu_teach.hardware``),
    ``num_ipus``, the ``device_id`` as ``gc-info`` numbers it, the simulated ``system`` and the options.

    Example:

    >>> ipu.system.current() is None
    True
    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 1
    >>> config.configure_ipu_system()
    >>> attached = ipu.system.current()
    >>> attached.num_ipus, attached.device_id, attached.spec.tiles
    (1, 0, 1472)
    """
    return runtime.configured


@on_reset(runtime=True)
def reset() -> None:
    """Detaches the simulated IPUs and goes back to the default system, as a new Python process starts.

    Useful between experiments in one notebook: the next ``configure_ipu_system`` starts from scratch
    (the default IPU-POD16, stochastic rounding seed 0, a host whose input pipeline keeps up).

    Example:

    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 1
    >>> config.configure_ipu_system()
    >>> ipu.system.reset()
    >>> ipu.system.current() is None, ipu.system.system_name()
    (True, 'IPU-POD16')
    """
    runtime.configured = None
    attachments.detach()
    runtime.system_name = None
    runtime.rounding_seed = 0
    host.simulate_input_pipeline(None)


@contextlib.contextmanager
def restored_afterwards():
    """A block that may configure other IPUs; afterwards the IPUs configured before it are back (ipu-teach only).

    For an experiment inside a notebook (an exercise's solution, a compile-only measurement) that must not
    change what the notebook's own cells run on: the configured IPUs, the simulated system, the stochastic
    rounding seed and the simulated host's input pipeline are restored, also when the block raises.

    Example:

    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 1
    >>> config.configure_ipu_system()
    >>> with ipu.system.restored_afterwards():
    ...     config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    ...     config.configure_ipu_system()
    ...     ipu.system.current().runs
    False
    >>> ipu.system.current().runs
    True
    """
    saved = (
        runtime.configured,
        runtime.system_name,
        runtime.rounding_seed,
        host.input_pipeline_rate(),
        host.input_pipeline_overlapped(),
    )
    try:
        yield
    finally:
        runtime.configured, runtime.system_name, runtime.rounding_seed = saved[:3]
        host.simulate_input_pipeline(saved[3], overlapped=saved[4])
