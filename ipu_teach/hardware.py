"""IPU hardware specs: one place to tune every figure the simulator uses.

Each figure is a field of the frozen dataclass :class:`IPUSpec` and carries its source in the
field's metadata (``source``), so notebooks and ``ipu-teach info`` can print where a number comes
from. Figures derived from others say how; figures nobody publishes say "approximate".
Variants are made with :func:`dataclasses.replace`, e.g. ``replace(MK2, tiles=16)``.

Example:

>>> from ipu_teach import hardware
>>> hardware.MK2.tiles, hardware.MK2.sram_per_tile, hardware.MK2.threads_per_tile
(1472, 638976, 6)
>>> hardware.HOST.execution_overhead_s
0.00283
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

HALF_NAMES = ("float16", "half", "fp16")


def is_half(dtype) -> bool:
    """True for fp16 however it is named (a numpy dtype, "float16", Poplar's "half")."""
    return str(getattr(dtype, "name", dtype)) in HALF_NAMES


SLIDES_BOW = "workshop slides (Bow IPU), ../shared/seeds/ipu-workshop-slides.txt"
KIB = 1024


def _figure(source: str, **kwargs):
    """A dataclass field whose metadata records where its value comes from."""
    return field(metadata={"source": source}, **kwargs)


@dataclass(frozen=True)
class IPUSpec:
    """One IPU model: per-tile resources, clock, sync costs and links. All times in cycles or seconds."""

    name: str = _figure("name of the part")
    tiles: int = _figure("1472 independent IPU-Tiles per IPU (Mk2 and Bow slides)")
    threads_per_tile: int = _figure("8832 program threads / 1472 tiles = 6 worker threads per tile (slides)")
    sram_per_tile: int = _figure("624 KiB per tile; x 1472 tiles = 897 MiB, the slides' '900MB per IPU'")
    clock_hz: float = _figure("approximate: 1.33 GHz (Mk2 GC200, press figures)")
    fp32_flops_per_cycle: int = _figure(
        "derived: 62.5 TFLOPS fp32 / (1472 tiles x 1.33 GHz) = 31.9, rounded to 32 FLOPs/cycle/tile"
    )
    fp16_flops_per_cycle: int = _figure(
        "derived: 250 TFLOPS fp16 / (1472 tiles x 1.33 GHz) = 127.7, rounded to 128 FLOPs/cycle/tile. This is "
        "fp16 in and fp16 out (half partials): 16 conv units x 4 half inputs a cycle x 2 (poplibs "
        "getPerfectCycleCount takes the largest of the ConvUnitsPerTile figures for the peak)"
    )
    fp16_float_partials_flops_per_cycle: int = _figure(
        "poplibs: fp16 inputs with float partials (Poplar's default partialsType) run on half the conv units, 8 "
        "against 16 with half partials (PerformanceEstimation.hpp getNumConvUnits: Fp16InFp32OutConvUnitsPerTile "
        "vs Fp16InFp16OutConvUnitsPerTile; the Mk2 codelet conv_partial_1x1_half_float_8_and_half_half_h16.S): "
        "8 x 4 half inputs a cycle x 2 = 64 FLOPs/cycle/tile, 125 TFLOPS per IPU, half the fp16.16 figure",
    )
    exchange_bytes_per_cycle: int = _figure(
        "derived: 8 TB/s all-to-all exchange / 1472 tiles / 1.33 GHz = 4.09, rounded to 4 bytes/cycle/tile"
    )
    memory_bytes_per_s: float = _figure("47.5 TB/s In-Processor-Memory bandwidth per IPU (slides)")
    sync_cycles_on_chip: int = _figure("approximate: ~150 cycles for a sync of all tiles of one IPU")
    sync_cycles_cross_ipu: int = _figure("approximate: ~1,500 cycles (~1 us) for a sync over IPU-Links/Sync-Links")
    sync_cycles_host: int = _figure("approximate: ~13,000 cycles (~10 us) for a sync with the host")
    ipu_links: int = _figure("10 IPU-Links per IPU (slides)")
    ipu_link_bytes_per_s: float = _figure("320 GB/s chip to chip over 10 IPU-Links (slides)")
    ipu_link_latency_s: float = _figure("approximate: ~1 us per IPU-Link transfer")
    host_link_bytes_per_s: float = _figure(
        "per IPU: x8 PCIe Gen4 from the IPU to its machine's gateway, 32 GB/s (slides' machine diagram) = 16 GB/s "
        "in each direction; the machine's 100 Gbps host link, shared by its IPUs, is usually the narrower"
    )
    host_link_latency_s: float = _figure("approximate: ~5 us per host transfer (PCIe round trip and DMA set-up)")
    ipus_per_machine: int = _figure("4 IPUs per IPU-M2000 / Bow-2000 (slides)")
    vector_flops_per_cycle: int = _figure(
        "approximate: the tile's 64-bit vector unit does 2 fp32 operations per cycle, the rate of a matrix "
        "product the planner runs on the vector units instead of the AMP (element-wise ops and reductions are "
        "priced per codelet: VectorCosts)",
        default=2,
    )
    amp_channel_group: int = _figure(
        "approximate: the AMP takes input channels in groups of 8 in fp32 (output channels: amp_conv_units): a "
        "layer with fewer channels pays for a whole group (poplibs ConvPlan inChansPerGroup: a conv unit's chain "
        "holds CONV_UNIT_INPUT_LOAD_ELEMS_FLOAT = 2 inputs x 4 stages, TileConstants.hpp)",
        default=8,
    )
    amp_channel_group_fp16: int = _figure(
        "approximate: in fp16 the AMP takes channels in groups of 16 (poplibs TileConstants.hpp: "
        "CONV_UNIT_INPUT_LOAD_ELEMS_HALF = 4 against _FLOAT = 2, so each conv unit loads twice the channels; "
        "poplibs' planner picks inChansPerGroup 16 for half AMP convolutions), so a thin layer wastes more",
        default=16,
    )
    vertex_overhead_cycles: int = _figure(
        "approximate: a vertex's fixed cost before its loops, ~50-95 supervisor cycles in poplibs' cycle "
        "estimators (lib/poplin/PerformanceEstimation.hpp: supervisorNonloopOverhead 50, convNx1Overhead 95)",
        default=80,
    )
    amp_conv_units: int = _figure(
        "16 conv units make one AMP pass's output channels with fp32 inputs (the Mk2's f32sisov2amp, poplibs "
        "lib/poplin/codelets/asm/conv_partial_1x1_float_float_16.S and conv_partial_nx1_float_float_16.S; "
        "Fp32InFp32OutConvUnitsPerTile) and with fp16 inputs and half partials; fp16 with float partials uses 8 "
        "(fp16_float_partials_flops_per_cycle). 16 x 8 fp32 inputs per position every 8 worker cycles = the "
        "32 FLOPs/cycle of fp32_flops_per_cycle",
        default=16,
    )
    worker_cycles: int = _figure(
        "the 6 worker threads are barrel-scheduled: each issues one instruction every 6 cycles, so a loop of n "
        "instructions on one worker lasts 6n tile cycles (IPU programmer's guide; poplibs' estimators multiply "
        "worker cycles by numWorkerContexts)",
        default=6,
    )
    links_between_neighbours: int = _figure(
        "approximate: IPU-Links joining two neighbouring IPUs (a pipeline's next stage, a ring all-reduce's next "
        "replica); each IPU's 10 links are shared among ~4 neighbours in its machine and the POD's ladder, so ~2. "
        "One link is an x16 IPU-Link, 64 GB/s both ways (slides' machine diagram) = 32 GB/s each way",
        default=2,
    )
    machine_host_link_bytes_per_s: float = _figure(
        "100 Gbps Host-Link (100GE RoCE) from the Poplar server to each IPU-M2000 / Bow-2000, shared by its 4 IPUs "
        "(slides' machine diagram) = 12.5 GB/s",
        default=12.5e9,
    )
    source_notes: tuple = _figure(
        "(figure, source) pairs that override the default sources above", default=(), repr=False
    )

    def __post_init__(self):
        for name in (
            "tiles",
            "threads_per_tile",
            "sram_per_tile",
            "fp32_flops_per_cycle",
            "fp16_flops_per_cycle",
            "fp16_float_partials_flops_per_cycle",
            "vector_flops_per_cycle",
            "amp_channel_group",
            "amp_channel_group_fp16",
            "amp_conv_units",
            "worker_cycles",
            "links_between_neighbours",
            "exchange_bytes_per_cycle",
            "ipu_links",
            "ipus_per_machine",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"IPUSpec {self.name!r}: {name} must be a positive integer, got {value!r}")
        for name in (
            "clock_hz",
            "memory_bytes_per_s",
            "ipu_link_bytes_per_s",
            "host_link_bytes_per_s",
            "machine_host_link_bytes_per_s",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"IPUSpec {self.name!r}: {name} must be positive, got {getattr(self, name)!r}")
        for name in (
            "sync_cycles_on_chip",
            "sync_cycles_cross_ipu",
            "sync_cycles_host",
            "vertex_overhead_cycles",
            "ipu_link_latency_s",
            "host_link_latency_s",
        ):
            if not getattr(self, name) >= 0:
                raise ValueError(f"IPUSpec {self.name!r}: {name} must be >= 0, got {getattr(self, name)!r}")

    def flops_per_cycle(self, dtype, partials_type: str = "float") -> int:
        """Returns the peak FLOPs per cycle of one tile's AMP for ``dtype`` inputs and ``partials_type`` sums.

        Poplar picks the AMP's conv units by the partials type (poplibs ``getNumConvUnits``): on a Mk2, fp16
        inputs with half partials use 16 units (4x fp32, Graphcore's 250 TFLOPS), with float partials
        (Poplar's default ``partialsType``) 8 units (2x fp32). fp32 inputs always sum in fp32 (poplibs
        promotes half partials to float for float inputs).

        Args:
          dtype: ``"float16"`` or ``"float32"`` (other types count as fp32).
          partials_type: Poplar's ``partialsType``, ``"float"`` (default, as Poplar's) or ``"half"``.

        Example:

        >>> from ipu_teach import hardware
        >>> mk2 = hardware.MK2
        >>> mk2.flops_per_cycle("float32"), mk2.flops_per_cycle("float16"), mk2.flops_per_cycle("float16", "half")
        (32, 64, 128)
        """
        if not is_half(dtype):
            return self.fp32_flops_per_cycle
        return self.fp16_flops_per_cycle if is_half(partials_type) else self.fp16_float_partials_flops_per_cycle

    def channel_group(self, dtype) -> int:
        """Returns how many input channels the AMP takes at once for ``dtype``: 16 in fp16, 8 in fp32.

        A convolution's channels are padded up to whole groups (poplibs' convolution planner), which is
        why a 1-channel first layer runs far below the AMP's peak.

        Args:
          dtype: ``"float16"`` or ``"float32"`` (other types count as fp32).

        Example:

        >>> from ipu_teach import hardware
        >>> from ipu_teach.integers import ceil_div
        >>> group = hardware.MK2.channel_group("float32")
        >>> [ceil_div(channels, group) * group for channels in (1, 8, 9)]  # the channels the AMP works on
        [8, 8, 16]
        """
        return self.amp_channel_group_fp16 if is_half(dtype) else self.amp_channel_group

    def output_channel_group(self, dtype, partials_type: str = "float") -> int:
        """Returns how many output channels one AMP pass produces: one per conv unit.

        poplibs' planner sets ``partialChansPerGroup`` to the number of conv units (ConvVertexType.cpp): 16 with
        fp32 inputs and with fp16 inputs and half partials, 8 with fp16 inputs and float partials (Poplar's
        default), so float partials need twice the passes of half partials.

        Example:

        >>> from ipu_teach import hardware
        >>> [hardware.MK2.output_channel_group(*types) for types in [("float32",), ("float16", "half"), ("float16",)]]
        [16, 16, 8]
        """
        float_partials_on_half = is_half(dtype) and not is_half(partials_type)
        return self.amp_conv_units // 2 if float_partials_on_half else self.amp_conv_units

    def host_stream_bytes_per_s(self, streaming_ipus: int = 1) -> float:
        """Returns the bytes per second of one IPU's host stream while ``streaming_ipus`` IPUs of its machine stream.

        Its own PCIe link or its share of the machine's 100 Gbps host link, whichever is narrower: replicas
        that stream their batches at the same time share the host link.

        Args:
          streaming_ipus: Integer, IPUs of the machine streaming at once. Default: 1.

        Example:

        >>> from ipu_teach import hardware
        >>> hardware.MK2.host_stream_bytes_per_s(1) / 1e9, hardware.MK2.host_stream_bytes_per_s(4) / 1e9
        (12.5, 3.125)
        """
        sharing = max(1, min(int(streaming_ipus), self.ipus_per_machine))
        return min(self.host_link_bytes_per_s, self.machine_host_link_bytes_per_s / sharing)

    @property
    def neighbour_bytes_per_s(self) -> float:
        """Bandwidth each way between two neighbouring IPUs: their links' share of the IPU's total."""
        return self.ipu_link_bytes_per_s * self.links_between_neighbours / self.ipu_links

    def peak_flops(self, dtype="float32", partials_type: str = "float") -> float:
        """Peak FLOP/s of the whole IPU: tiles x FLOPs per cycle x clock (see ``flops_per_cycle``)."""
        return self.tiles * self.flops_per_cycle(dtype, partials_type) * self.clock_hz

    @property
    def total_threads(self) -> int:
        return self.tiles * self.threads_per_tile

    @property
    def total_sram(self) -> int:
        """The SRAM of the whole IPU in bytes: tiles times SRAM per tile (about 900 MB on a Mk2).

        Example:

        >>> from ipu_teach import hardware
        >>> hardware.MK2.total_sram, hardware.MK2.total_sram // 2**20
        (940572672, 897)
        """
        return self.tiles * self.sram_per_tile

    @property
    def exchange_bytes_per_s(self) -> float:
        """The bandwidth of the on-chip exchange in bytes per second: every tile receiving at once (about 8 TB/s).

        Example:

        >>> from ipu_teach import hardware
        >>> round(hardware.MK2.exchange_bytes_per_s / 1e12, 2)
        7.83
        """
        return self.tiles * self.exchange_bytes_per_cycle * self.clock_hz

    def seconds_to_cycles(self, seconds: float) -> int:
        """Whole cycles (rounded up) that ``seconds`` last at this IPU's clock."""
        return math.ceil(seconds * self.clock_hz)

    def with_tiles(self, tiles: int) -> "IPUSpec":
        """The same IPU with another tile count, as ``IPUConfig.ipu_model.tiles_per_ipu`` asks for."""
        note = ("tiles", f"chosen: {self.name} cut down to {tiles} tiles (a simulated IPUModel)")
        return dataclasses.replace(
            self, name=f"{self.name} ({tiles} tiles)", tiles=tiles, source_notes=self.source_notes + (note,)
        )


def sources(spec) -> dict:
    """``{field name: (value, source)}`` for every figure of ``spec`` (an IPUSpec, HostSpec or CodeSizes),
    in declaration order."""
    notes = dict(getattr(spec, "source_notes", ()))
    return {
        f.name: (getattr(spec, f.name), notes.get(f.name, f.metadata["source"]))
        for f in dataclasses.fields(spec)
        if f.name != "source_notes"
    }


def _aligned(rows) -> str:
    """Rows of (name, value, note) as lines whose columns line up, however long a name or value is."""
    rows = [(name, str(value), note) for name, value, note in rows]
    name_width = max(len(name) for name, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    return "\n".join(f"{name:<{name_width}} {value:>{value_width}}  {note}".rstrip() for name, value, note in rows)


def figure_table(spec) -> str:
    """One line per figure: name, value, source."""
    return _aligned((name, value, source) for name, (value, source) in sources(spec).items())


def describe(spec: IPUSpec) -> str:
    """Returns a plain-text table of an IPU spec's figures with their sources, plus the per-IPU totals they imply.

    Every number the simulator uses has a source or a stated reason; this is the table ``ipu-teach info``
    prints.

    Args:
      spec: An ``IPUSpec`` (``hardware.MK2``, ``hardware.BOW``).

    Example:

    >>> from ipu_teach import hardware
    >>> print(hardware.describe(hardware.MK2))
    name                            GC200 (Mk2)  name of the part
    tiles                                  1472  1472 independent IPU-Tiles per IPU (Mk2 and Bow slides)
    ...
    """
    rows = [(name, value, source) for name, (value, source) in sources(spec).items()]
    rows += [
        ("= threads per IPU", f"{spec.total_threads:,}", ""),
        ("= SRAM per IPU (MiB)", f"{spec.total_sram / KIB**2:,.1f}", ""),
        ("= peak fp16 TFLOPS", f"{spec.peak_flops('float16', 'half') / 1e12:,.1f}", "half partials"),
        ("= peak fp16 TFLOPS", f"{spec.peak_flops('float16') / 1e12:,.1f}", "float partials (Poplar's default)"),
        ("= peak fp32 TFLOPS", f"{spec.peak_flops('float32') / 1e12:,.1f}", ""),
        ("= exchange TB/s", f"{spec.exchange_bytes_per_s / 1e12:,.2f}", ""),
    ]
    return _aligned(rows)


MK2 = IPUSpec(
    name="GC200 (Mk2)",
    tiles=1472,
    threads_per_tile=6,
    sram_per_tile=624 * KIB,
    clock_hz=1.33e9,
    fp32_flops_per_cycle=32,
    fp16_flops_per_cycle=128,
    fp16_float_partials_flops_per_cycle=64,
    exchange_bytes_per_cycle=4,
    memory_bytes_per_s=47.5e12,
    sync_cycles_on_chip=150,
    sync_cycles_cross_ipu=1_500,
    sync_cycles_host=13_000,
    ipu_links=10,
    ipu_link_bytes_per_s=320e9,
    ipu_link_latency_s=1e-6,
    host_link_bytes_per_s=16e9,
    host_link_latency_s=5e-6,
    ipus_per_machine=4,
)

_BOW_NOTES = (
    ("clock_hz", "approximate: 1.85 GHz (Bow, press figures)"),
    (
        "fp32_flops_per_cycle",
        "approximate: Bow keeps the Mk2 tile: 32 FLOPs/cycle/tile (x 1472 x 1.85 GHz = 87 TFLOPS)",
    ),
    ("fp16_flops_per_cycle", "derived: 350 TFLOPS fp16 / (1472 tiles x 1.85 GHz) = 128.5, rounded to 128"),
    (
        "fp16_float_partials_flops_per_cycle",
        "as the Mk2: the same tile, 8 conv units for fp16 inputs with float partials (x 1472 x 1.85 GHz = 174 TFLOPS)",
    ),
    ("exchange_bytes_per_cycle", "derived: 11 TB/s all-to-all exchange (slides) / 1472 tiles / 1.85 GHz = 4.04, so 4"),
    ("memory_bytes_per_s", "65 TB/s In-Processor-Memory bandwidth per IPU (" + SLIDES_BOW + ")"),
)


BOW = dataclasses.replace(MK2, name="Bow", clock_hz=1.85e9, memory_bytes_per_s=65e12, source_notes=_BOW_NOTES)
"""The Bow IPU: the Mk2 die wafer-on-wafer stacked, clocked faster (same tiles, SRAM, links)."""

TEACHING_IPU = MK2.with_tiles(16)
"""A 16-tile IPU with Mk2 tiles: small enough to draw every tile in a figure."""

SPECS = {"MK2": MK2, "BOW": BOW, "TEACHING": TEACHING_IPU}


HOST_APIS = ("keras", "custom_loop", "poptorch")
"""The front ends that call a compiled program, each with its own cost per call (:meth:`HostSpec.execution_seconds`):
Keras' ``fit`` / ``evaluate`` / ``predict``, a TensorFlow custom loop (``strategy.run`` over infeeds) and PopTorch."""


@dataclass(frozen=True)
class HostSpec:
    """The host side of a run, a part of its own: what the framework costs per execution, what staging a stream's
    bytes costs, how a host sync grows with the IPUs it spans, and what compiling a program costs.

    These are not chip figures. The BSP engine reads them when it costs a ``bsp.HostCall`` (one execution's call
    from the framework) and the host streams (``bsp.HostToDevice``, ``bsp.DeviceToHost``); the figures fitted to
    the Keras tutorial's logs (the calibration set, ``benchmarks/bench_fidelity.py``) say which figures.

    Example:

    >>> from ipu_teach import hardware
    >>> [round(hardware.HOST.execution_seconds(api) * 1e3, 2) for api in hardware.HOST_APIS]
    [2.83, 1.0, 1.9]
    """

    execution_overhead_s: float = _figure(
        "fitted: 2.83 ms per execution of a Keras fit / evaluate / predict program, on the Keras tutorial's "
        "1-step-per-execution log (3 ms/step) minus ipu-teach's simulated device step with its streams "
        "(~0.17 ms: see stream_staging_bytes_per_s). It "
        "covers the Python call, Keras' callbacks and progress bar, and TensorFlow's launch of the program",
        default=2.83e-3,
    )
    custom_loop_execution_s: float = _figure(
        "approximate: ~1 ms per call of a tf.function running strategy.run over infeeds (issue 20's estimate of "
        "0.8-2 ms for the custom-loop, PopTorch and PopXL APIs: no Keras callbacks or progress bar); fitted to "
        "nothing, and validated by Graphcore's TF2 infeed/outfeed tutorial: its 10,000 steps with and without feeds "
        "land within 1.1x of the README's times (bench_fidelity.py, cases tf2-infeed-outfeed-*)",
        default=1.0e-3,
    )
    poptorch_execution_s: float = _figure(
        "fitted: ~1.9 ms per call of a poptorch model with little device work, to the PopVision System "
        "Analyser tutorial's PopTorch log (1.89 ms per call, ~0.1 ms on the IPU; benchmarks/fidelity_cases.json, "
        "poptorch-system-analyser-fashion-mnist, whose step time is in bench_fidelity's calibration table). "
        "The PopXL cases take it too (session.run is, like a PopTorch call, a Python call copying numpy arrays)",
        default=1.9e-3,
    )
    stream_staging_bytes_per_s: float = _figure(
        "fitted: 7.0 GB/s, how fast the host stages one IPU's stream (copies the bytes from the framework's "
        "tensors to the stream's buffer and hands them to the link). Fitted to the Keras tutorial's "
        "whole-epoch-per-execution log (170 us/step, a 203 KB infeed per step), which it lands at 1.00x: with the "
        "device's work costed as poplibs does (the vector work; a product's partial sums added at poplin's "
        "ReduceAdd estimate), the machine's 100 Gbps host link (12.5 GB/s) alone lands it at 0.92x (a 4.3 GB/s fit "
        "made before the vector work was costed put the tutorial at 1.25-1.34x). A host that is "
        "slower than this, as with PopTorch's DataLoader in Graphcore's efficient-data-loading tutorial (~27 ms per "
        "call for 52 MB, 1.9 GB/s; graphcore/examples tutorials/tutorials/pytorch/efficient_data_loading/README.md), "
        "is its input pipeline: simulate it with ipu.host.simulate_input_pipeline (with overlapped=False when, as in "
        "that tutorial's timed loop, the loading and the calls take turns in one thread: at the DataLoader's own "
        "measured rate it lands the tutorial's real-data throughputs at 0.94x and 0.70x)",
        default=7.0e9,
    )
    compile_base_s: float = _figure(
        "approximate: the fixed part of a compilation (framework graph construction, Poplar's start, loading the "
        "executable); fitted with the four below by benchmarks/fit_compile_time.py to the Keras tutorial's eight "
        "compile times (training ~30-32 s, evaluation ~14 s, 1 IPU, 2 replicas and a 2-IPU pipeline: 36 s and "
        "17 s), first-epoch time less the epoch's logged run time",
        default=6.77,
    )
    compile_s_per_working_tile_step: float = _figure(
        "approximate: per compute set and tile working in it, the vertices, their state and the exchange code "
        "Poplar generates (ipu_teach.ipu.compile_time); fitted with compile_base_s",
        default=8.01e-5,
    )
    compile_s_per_tensor_window: float = _figure(
        "approximate: per tensor window a convolution's or product's vertex connects (ipu_teach.ipu.compile_time): "
        "taken as a vertex's cost, compile_s_per_working_tile_step; fitted with it as one, since the tutorial's "
        "eight compiles (one model) cannot tell them apart",
        default=8.01e-5,
    )
    compile_s_per_tensor_region: float = _figure(
        "approximate: per tensor and tile holding part of it, the Poplar variable region laid out and allocated "
        "there (ipu_teach.ipu.compile_time): taken as a vertex's cost, compile_s_per_working_tile_step, and fitted "
        "with it as one, as compile_s_per_tensor_window is",
        default=8.01e-5,
    )
    compile_s_per_program_tile_step: float = _figure(
        "approximate: per superstep of the program and tile of each IPU of a replica, the control code and sync "
        "every tile holds, working or not (why a pipeline's IPUs add compile time); fitted with compile_base_s",
        default=3.93e-5,
    )
    executable_load_s: float = _figure(
        "approximate: loading a cached executable and attaching the device, ~1 s", default=1.0
    )
    callback_step_s: float = _figure(
        "measured: 765 us of host work per step when Keras' callbacks run once per step on Graphcore's polling "
        "thread (model.set_asynchronous_callbacks(True)): what Graphcore's outfeed iterator does per step (it "
        "dequeues every step's results at once and cuts each step's logs out with an eager result[i] per log: "
        "tensorflow/python/ipu/ipu_outfeed_queue.py @b2127bb, IPUOutfeedQueueIterator.__next__), then tf-keras' "
        "on_test_batch_begin/end with ProgbarLogger and History and four scalar logs converted for the progress bar. "
        "Median processor time of 7 runs of 128 steps (720-803 us; 753 us wall-clock) with TensorFlow and tf-keras "
        "2.21 on the 2-core laptop ipu-teach is developed on, idle, by benchmarks/measure_callback_step.py; fitted to "
        "nothing. (The earlier stand-in, one iterator next() per step without the slicing, measured 145 us when the "
        "machine was quiet and 271 us in the same runs as this figure.) It runs beside the device: a step shows "
        "the slower of the two",
        default=765e-6,
    )
    async_loader_buffer_size: int = _figure(
        "PopTorch's default: the ring buffer of an asynchronous DataLoader (DataLoaderMode.Async) holds 3 combined "
        "batches, the one a model call is using included (AsynchronousDataAccessor's buffer_size=3, graphcore/poptorch "
        "python/__init__.py @c2a8b17; the worker process needs a free slot to write a batch or the end of an epoch, "
        "python/_dataloader.py)",
        default=3,
    )
    loader_prefetch_factor: int = _figure(
        "PyTorch's default: a torch DataLoader hands each worker process up to 2 batches' indices ahead "
        "(torch.utils.data.DataLoader prefetch_factor=2); each worker makes a whole batch, which for a poptorch "
        "DataLoader is the combined batch of one model call",
        default=2,
    )

    def execution_seconds(self, api: str = "keras") -> float:
        """Seconds the host spends per execution of a program called from ``api`` (one of ``HOST_APIS``).

        Each front end calls a program its own way (Keras' ``fit`` loop, a custom loop's ``strategy.run``, a
        PopTorch model call); every execution pays this once, however many steps it runs.

        Example:

        >>> from ipu_teach import hardware
        >>> hardware.HOST.execution_seconds("poptorch") < hardware.HOST.execution_seconds("keras")
        True
        """
        costs = {
            "keras": self.execution_overhead_s,
            "custom_loop": self.custom_loop_execution_s,
            "poptorch": self.poptorch_execution_s,
        }
        if api not in costs:
            raise ValueError(f"host API {api!r} is not one of {HOST_APIS}: say which front end calls the program")
        return costs[api]

    def stream_bytes_per_s(self, spec: IPUSpec, streaming_ipus: int = 1) -> float:
        """Bytes per second of one IPU's host stream while ``streaming_ipus`` IPUs stream at once: the narrower of
        the host's staging of it and its share of the link (``IPUSpec.host_stream_bytes_per_s``).

        Example:

        >>> from ipu_teach import hardware
        >>> [round(hardware.HOST.stream_bytes_per_s(hardware.MK2, n) / 1e9, 3) for n in (1, 2, 4)]
        [7.0, 6.25, 3.125]
        """
        return min(spec.host_stream_bytes_per_s(streaming_ipus), self.stream_staging_bytes_per_s)

    @staticmethod
    def sync_cycles(spec: IPUSpec, ipus: int = 1) -> int:
        """Cycles of a sync between the host and ``ipus`` IPUs: the host sync, plus one cross-IPU sync per level
        of the tree the IPUs join it through (approximate: their Sync-Links gather the IPUs in pairs before the
        host answers, so a sync of more IPUs takes longer, by ~1 us per doubling on a Mk2).

        Example:

        >>> from ipu_teach import hardware
        >>> [hardware.HOST.sync_cycles(hardware.MK2, n) for n in (1, 2, 4, 16)]
        [13000, 14500, 16000, 19000]
        """
        return spec.sync_cycles_host + spec.sync_cycles_cross_ipu * math.ceil(math.log2(max(1, int(ipus))))

    def compile_seconds(self, size) -> float:
        """Simulated seconds to compile a graph of ``size`` (an ``ipu_teach.ipu.compile_time.GraphSize``)."""
        return (
            self.compile_base_s
            + self.compile_s_per_working_tile_step * size.working_tile_steps
            + self.compile_s_per_tensor_window * size.tensor_windows
            + self.compile_s_per_tensor_region * size.tensor_regions
            + self.compile_s_per_program_tile_step * size.program_tile_steps
        )


CODE_CATEGORIES = (
    "vertex code",
    "control code",
    "internal exchange code",
    "host exchange code",
    "vertex instance state",
    "stack",
)
"""PopVision's memory categories that are code or runtime state rather than tensors (always live)."""

ALWAYS_LIVE_VARIABLES = "always-live variables"
NOT_ALWAYS_LIVE_VARIABLES = "not-always-live variables"
POPVISION_CATEGORIES = (ALWAYS_LIVE_VARIABLES, NOT_ALWAYS_LIVE_VARIABLES) + CODE_CATEGORIES
"""PopVision's categories of tile memory: tensors by liveness (its Liveness Report's always-live and
not-always-live variables), then code and runtime state (its Memory Report's vertex code, control code,
exchange code, vertex instances, stack). Every tensor also has a role (weights, activations, ...)."""


def popvision_category(role: str, always_live: bool) -> str:
    """PopVision's category of a memory item with ``role`` (``"activations"``, ``"vertex code"``, ...).

    Example:

    >>> from ipu_teach import hardware
    >>> hardware.popvision_category("activations", False), hardware.popvision_category("stack", True)
    ('not-always-live variables', 'stack')
    """
    if role in CODE_CATEGORIES:
        return role
    return ALWAYS_LIVE_VARIABLES if always_live else NOT_ALWAYS_LIVE_VARIABLES


TF_PROFILE_SUMMARY = (
    "Graphcore's TensorFlow docs, 'Reading the Poplar textual summary report' (graphcore/tensorflow "
    "tensorflow/compiler/plugin/poplar/docs/logging.rst at da240cc9d1b4, a Mk1 IPU with SDK 1.x)"
)
POPLIBS_ASM = "poplibs' assembly codelets (the 201 files of lib/*/codelets/asm at 7eac0f266ced)"


@dataclass(frozen=True)
class CodeSizes:
    """Bytes of code and runtime state per tile, by PopVision's memory categories.

    Each is counted per thing the program has (a codelet a tile runs, an exchange it takes part in and each
    message it sends or receives there, a program step, a compute set, a host stream, a vertex), mostly in
    instructions of ``instruction_bytes``, never per byte the program moves: code grows with the program, not
    with the batch.
    """

    vertex_code_bytes: int = _figure(
        "approximate: ~2 KiB of Poplar's runtime codelets on a tile that runs any vertex (the poplar_rt copy "
        "vertices, DstStridedCopy* and StridedCopy*, listed beside every model's codelets in "
        + TF_PROFILE_SUMMARY
        + "; its adder program, which copies nothing, holds only its seed codelet: 170,788 B over 1,216 tiles, "
        "140 B a tile). Checked, not fitted: with each tile's codelets counted by vertex type at "
        "vertex_code_bytes_per_codelet, the two Mk2 PopVision captures of the IPU workshop slides leave 1.95 KiB a "
        "tile (TF2 infeed tutorial: 6.0 MiB over 1,472 tiles, 5.8 codelets a tile) and 2.1 KiB (PopTorch basics: "
        "11.8 MiB, 15.7 codelets a tile)",
        default=2 * KIB,
    )
    vertex_code_bytes_per_codelet: int = _figure(
        "approximate: each distinct codelet (vertex type) a tile runs is loaded there once, whatever its number of "
        "vertices and whichever ops run it (Poplar user guide: a compute set compiles to one function calling its "
        "vertices' code; ipu.memory_layout.SHARED_CODELETS: every op's reductions run popops' Reduce, every product's "
        "partial sums poplin's ReduceAdd, every ADD pass one BinaryOp vertex); ~400 B, about 100 "
        "instructions of 4 B: in "
        + POPLIBS_ASM
        + " a file holds 71 instruction lines at the median and 113 at the upper quartile, and a supervisor vertex "
        "pairs a supervisor routine with a worker one",
        default=400,
    )
    instruction_bytes: int = _figure(
        "4 B: an IPU instruction is one 32-bit word (Tile Vertex ISA, docs.graphcore.ai/projects/isa); poplibs' "
        "own planners charge exchange code at 4 bytes an instruction (lib/popops/DynamicSlice.cpp@7eac0f2, "
        "exchangeCodeBytes = 4 x the setmux instructions of each exchange)",
        default=4,
    )
    control_code_bytes: int = _figure(
        "approximate: ~640 B of control code on every tile whatever the program (the engine's start, host syncs, "
        "program switch): "
        + TF_PROFILE_SUMMARY
        + " shows 851,272 B over 1,216 tiles, 700 B a tile, for a program of 3 additions on 2-element tensors "
        "(4 compute sets), of which its few steps' syncs and calls take ~60 B",
        default=640,
    )
    control_instructions_per_step: int = _figure(
        "1: every program step (a superstep: compute set, exchange and sync) puts a sync instruction in the control "
        "code of every tile, working in it or not, as Poplar's internal syncs are IPU-wide barriers (Poplar user "
        "guide, 'Program control': a tile that has nothing to do in a step still waits at its sync)",
        default=1,
    )
    control_instructions_per_compute_set: int = _figure(
        "approximate: 3 instructions on each tile that runs a compute set: point at its vertices' state, run the "
        "supervisor vertex, and wait for its workers (Poplar user guide: a compute set compiles to one call per "
        "tile of the vertices mapped there)",
        default=3,
    )
    exchange_instructions_per_exchange: int = _figure(
        "fitted: 10 instructions of set-up, timing and wind-down on each tile taking part in an exchange, once "
        "whether it sends, receives or both (one instruction stream a tile and exchange), whatever its messages. "
        "Fitted to "
        + TF_PROFILE_SUMMARY
        + ": 60,792 B of internal exchange code over 1,216 tiles, 50 B a tile, where the program's one exchange "
        "involving every tile brings each the seed its SetSeedSupervisor vertex reads (1,216 of its 1,219 vertices), "
        "one message from one tile: 12 instructions with the message's 2 (the few additions on 2-element tensors "
        "exchange on one or two tiles)",
        default=10,
    )
    exchange_instructions_per_message_received: int = _figure(
        "2 per message a tile receives, one message from each tile it receives from: the switch-control (setmux) "
        "instruction that listens to that sender (poplibs lib/popops/DynamicSlice.cpp@7eac0f2: 'the indices must be "
        "received from a set of tiles, so a number of setmux instructions are required', one per source tile) and "
        "one setting where the message lands (Graphcore's patent US12141092, 'Instruction set', claims 3 and 11: "
        "the receiver connects to the sender's wires at the compiled time and stores at its memory pointer)",
        default=2,
    )
    exchange_instructions_per_message_sent: int = _figure(
        "1 per message a tile sends: a send instruction names how many packets it sends from where (patent "
        "US12141092, claim 5), so a message of any length is one instruction",
        default=1,
    )
    host_exchange_code_bytes: int = _figure(
        "approximate: ~289 B of host exchange code on every tile whatever its data (the sync with the host and the "
        "exchange's set-up): "
        + TF_PROFILE_SUMMARY
        + " shows 351,328 B over 1,216 tiles, 289 B a tile, for a program whose 4 host streams (3 inputs, 1 result) "
        "of 8 bytes each sit on one tile",
        default=289,
    )
    host_exchange_code_bytes_per_stream: int = _figure(
        "fitted: 70 B (about 18 instructions: request, receive and where) on each tile a host stream's data is mapped "
        "to, for each stream: an input, label or result stream, and a variable's copy from and to the host (weights "
        "and optimizer state are loaded to the device and read back). Fitted to tile 201 of the PopTorch basics "
        "capture (IPU workshop slides, a Bow, SDK 3.3: 640 B with 5 streams' data there, (640 - 289) / 5); "
        "validated on the all-tile figures of that capture (924 KiB) and of the TF2 infeed tutorial's (595 KiB)",
        default=70,
    )
    vertex_state_bytes: int = _figure(
        "approximate: ~24 B of fields per vertex instance (pointers and counts of its edges and worklists); "
        + TF_PROFILE_SUMMARY
        + " shows 14,640 B of vertex instances for 1,219 simple vertices (12 B each); a convolution's or "
        "reduction's supervisor vertex holds more fields",
        default=24,
    )
    vertices_per_compute_set: int = _figure(
        "approximate: 2 vertices per tile per compute set it takes part in, but for an element-wise one "
        "(vertices_per_elementwise_compute_set): poplibs' AMP convolutions (ConvPartial1x1Out, ConvPartialnx1) "
        "are supervisor vertices, one per tile, and a copy vertex usually joins them (the same listing); a "
        "reduction splits a tile's outputs among its worker vertices (lib/popops/reduction/ReductionConnection.cpp)",
        default=2,
    )
    vertices_per_elementwise_compute_set: int = _figure(
        "1 vertex per tile of an element-wise compute set (an element-wise op, a weight's update): popops adds one "
        "1D MultiVertex (UnaryOp1D, BinaryOp1D, ScaledAdd's) on each tile whose part of the output is one "
        "contiguous region, and 2D worker vertices only for a tile holding several regions "
        "(lib/popops/ElementWise.cpp@7eac0f2, unaryOp and binaryOpGeneral: 'Single contiguous region, use "
        "MultiVertex'); a linearly mapped output is one region a tile. Approximate beyond popops: every compute set "
        "of a per-element pass takes it, popnn's pooling windows and the transposes included",
        default=1,
    )
    stack_bytes: int = _figure(
        "approximate: ~384 B per tile for the supervisor's and the 6 workers' stacks, which Poplar sizes from the "
        "deepest call chain of the codelets on the tile (Vertex Programming Guide, 'Worker stack and scratch "
        "space'; poplibs' codelets are mostly assembly that uses little stack). Of the order of the slides' capture "
        "(535 KiB over 1,472 tiles, 372 B: so that validation figure is not independent); SDK 1.x reserved a fixed "
        "3,168 B per tile (" + TF_PROFILE_SUMMARY + ", a Mk1)",
        default=384,
    )


POPOPS = "poplibs lib/popops/popopsCycleEstimators.{cpp,hpp}"
POPNN = "poplibs lib/popnn/PerformanceEstimation.hpp getNonLinearityOpCycles"


@dataclass(frozen=True)
class VectorCosts:
    """What the tiles' vector units cost: popops / popnn codelets per fp32 element, reductions, rearrangements.

    Every figure is tile cycles, read off poplibs' cycle estimators (github.com/graphcore/poplibs): a
    supervisor vertex splits its elements over the 6 workers, and a worker issues every 6th cycle, so a codelet
    that takes c worker cycles per vector of 2 floats (the 64-bit data path) costs c / 2 tile cycles per
    element. In fp16 a vector holds 4 values (``Target::getVectorWidth(HALF)``): half the cycles per element.
    """

    elementwise_vertex_cycles: int = _figure(
        "a supervisor element-wise vertex's fixed cost: 6 workers x 29 worker cycles + 11 supervisor cycles "
        f"(BinaryOp1D float, {POPOPS}; basicOpSupervisorOverhead 11)",
        default=185,
    )
    cast: float = _figure(
        f"0.5: float<->half conversion, 4 values per 2 worker cycles (castWorkerCycles, {POPOPS})", default=0.5
    )
    add: float = _figure(
        "1.5: ADD, SUBTRACT, MULTIPLY float: 1 cycle per vector of 2 + 2 cycles of load/store and loop "
        f"(binaryOpPerfInfo {{1, true}}, binaryOpInnerLoopCycles, {POPOPS})",
        default=1.5,
    )
    scaled_add: float = _figure(
        "1.5: a weight update's w += s * g (ScaledAdd) per element, as a binary op: one multiply-add per element "
        "(getScaledArithmeticSupervisorCycleEstimate, poplibs lib/popops/PerformanceEstimation.cpp)",
        default=1.5,
    )
    relu: float = _figure(f"0.5: RELU float, 1 worker cycle per vector of 2 ({POPNN})", default=0.5)
    nonlinearity_grad: float = _figure(
        "1.5: the gradient of RELU, SIGMOID or TANH from the saved output, 3 worker cycles per vector of 2 "
        "(poplibs lib/popnn/PerformanceEstimation.hpp getNonLinearityGradOpCycles)",
        default=1.5,
    )
    tanh: float = _figure(f"5: TANH and SIGMOID float, 10 worker cycles per vector of 2 ({POPNN})", default=5.0)
    gelu: float = _figure(f"5: GELU float, 10 worker cycles per vector of 2 ({POPNN})", default=5.0)
    exp: float = _figure(
        f"3: EXPONENT float, 6 worker cycles per 2 values (unaryOpPerfInfo {{6, false, 2}}, {POPOPS})", default=3.0
    )
    log: float = _figure(f"6: LOGARITHM float, 12 worker cycles per 2 values (unaryOpPerfInfo, {POPOPS})", default=6.0)
    divide: float = _figure(f"5: DIVIDE float, 10 worker cycles per 2 values (binaryOpPerfInfo, {POPOPS})", default=5.0)
    map_expression_op: float = _figure(
        "0.5: one op of a fused popops::map expression (a vertex popops generates for the whole expression), per "
        "element of each of its inputs: Poplar's estimate of that vertex is 20 cycles plus elements / vector width "
        "(2 floats) x its fused ops, summed over its inputs, in tile cycles for a MultiVertex (poplibs "
        "lib/popops/ExpressionGenerator.cpp @7eac0f26, lines 320-335: setPerfEstimate)",
        default=0.5,
    )
    reduce: float = _figure(
        "2.25: a vectorised ADD reduction of float partials: 9 worker cycles per accumulator vector of 4 (load "
        "2 + 2 + 4 / 2 data path, then 3 of compute and loop) (getCyclesEstimateForReduce, poplibs "
        "lib/popops/reduction/CycleEstimationFunctions.cpp)",
        default=2.25,
    )
    reduce_vertex_cycles: int = _figure(
        "366: a reduce vertex's fixed cost on each of the 6 workers: 7 entry/exit + 26 state + 28 per reduction "
        "(getCyclesEstimateForReduce, poplibs lib/popops/reduction/CycleEstimationFunctions.cpp)",
        default=366,
    )
    reduce_stage_factor: int = _figure(
        "64: popops adds an intermediate reduction stage (exchange then reduce) while more than 64 partials per "
        "output are left, splitting them in sqrt(partials) groups (reductionFactorThresholdToAddMoreStages, "
        "calculateSplit, poplibs lib/popops/reduction/ReductionPlan.{hpp,cpp})",
        default=64,
    )
    transpose: float = _figure(
        "0.75: rearranging an operand before a matrix product (poplin's regroup / weightsTranspose compute sets "
        "of lib/poplin/ConvProgramTree.hpp): a Transpose vertex moves a 2x2 float block in 3 worker cycles "
        "(getTransposeCycleEstimate, poplibs lib/popsparse/PerformanceEstimation.hpp)",
        default=0.75,
    )
    transpose_vertex_cycles: int = _figure(
        "181: a Transpose supervisor vertex's fixed cost, 7 + 6 workers x 29 (getTransposeCycleEstimate, poplibs "
        "lib/popsparse/PerformanceEstimation.hpp)",
        default=181,
    )

    def cycles_per_element(self, codelet: str, itemsize: int = 4) -> float:
        """Tile cycles per element of ``codelet`` (a field name) at ``itemsize`` bytes (2: fp16, twice as fast).

        Example:

        >>> from ipu_teach import hardware
        >>> hardware.VECTOR.cycles_per_element("add"), hardware.VECTOR.cycles_per_element("add", 2)
        (1.5, 0.75)
        """
        figure = getattr(self, codelet, None)
        if codelet.endswith("_cycles") or not isinstance(figure, float):
            raise ValueError(f"no vector codelet {codelet!r}: use one of {', '.join(VECTOR_CODELETS)}")
        return figure / 2 if itemsize == 2 else figure


HOST = HostSpec()
CODE = CodeSizes()
VECTOR = VectorCosts()
VECTOR_CODELETS = tuple(f.name for f in dataclasses.fields(VectorCosts) if f.type in (float, "float"))
"""The codelet names an op may give a VectorPass (hardware.VECTOR's per-element figures)."""
