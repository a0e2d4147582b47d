"""The low-level engine: BSP cost per superstep, loops, several IPUs, host and IPU-Link steps, errors."""

import re

import numpy as np
import pytest

from ipu_teach import bsp
from ipu_teach.hardware import HOST, HOST_APIS, MK2, TEACHING_IPU

T = TEACHING_IPU  # 16 tiles


def random_step(rng, name, shape=(T.tiles,)):
    cycles = rng.integers(0, 1_000, shape)
    exchange = bsp.Exchange(rng.integers(0, 400, shape), rng.integers(0, 400, shape), name=f"{name} in")
    return bsp.ComputeSuperstep(bsp.CostedComputeSet(name, cycles), exchange), cycles, exchange


def test_one_superstep_costs_max_w_plus_l_plus_g_max_h():
    step, cycles, exchange = random_step(np.random.default_rng(0), "cs")
    timeline = bsp.CostEngine(step, T).run()
    h = np.maximum(exchange.received, exchange.sent).max()
    expected = cycles.max() + T.sync_cycles_on_chip + -(-h // T.exchange_bytes_per_cycle)
    assert timeline.total_cycles() == expected
    assert timeline.totals() == {
        "compute": cycles.max(),
        "sync": T.sync_cycles_on_chip,
        "exchange": -(-h // T.exchange_bytes_per_cycle),
    }
    assert timeline.seconds() == pytest.approx(expected / T.clock_hz)
    np.testing.assert_array_equal(timeline.tile_busy[0], cycles)
    assert timeline.utilisation() == pytest.approx(cycles.sum() / (T.tiles * expected))


def test_balanced_work_beats_the_same_work_on_one_tile_by_the_tile_count():
    work = 16_000
    balanced = bsp.ComputeSuperstep(
        bsp.CostedComputeSet("balanced", np.full(T.tiles, work // T.tiles)), sync=bsp.SyncKind.ON_CHIP
    )
    lopsided = np.zeros(T.tiles, dtype=np.int64)
    lopsided[3] = work
    imbalanced = bsp.ComputeSuperstep(bsp.CostedComputeSet("imbalanced", lopsided))
    fast, slow = (bsp.CostEngine(p, T).run().totals()["compute"] for p in (balanced, imbalanced))
    assert slow / fast == T.tiles


def test_sequence_and_repeat_count_rows_without_repeating_work():
    rng = np.random.default_rng(1)
    (a, *_), (b, *_) = random_step(rng, "a"), random_step(rng, "b")
    once = bsp.CostEngine(bsp.Sequence(a, b), T).run()
    program = bsp.Sequence(a, bsp.Repeat(3, bsp.Sequence([b, bsp.Repeat(2, a)])))
    timeline = bsp.CostEngine(program, T).run()
    assert timeline.labels == ("a", "b") and timeline.counts.tolist() == [7, 3]
    assert timeline.schedule == (0, (3, (1, (2, (0,)))))
    assert list(timeline.execution_order()) == [0] + [1, 0, 0] * 3
    cost_a, cost_b = once.superstep_cycles()
    assert timeline.total_cycles() == 7 * cost_a + 3 * cost_b


def test_a_billion_repeats_cost_one_costing():
    step, *_ = random_step(np.random.default_rng(2), "step")
    one = bsp.CostEngine(step, T).run().total_cycles()
    timeline = bsp.CostEngine(bsp.Repeat(10**9, step), T).run()
    assert timeline.rows == 1 and timeline.total_cycles() == 10**9 * one
    assert timeline.first_supersteps(5) == [0] * 5


def test_runs_are_deterministic():
    rng = np.random.default_rng(3)
    program = bsp.Sequence([random_step(rng, f"s{i}", (2, T.tiles))[0] for i in range(4)])
    first, second = bsp.CostEngine(program, T, ipus=2).run(), bsp.CostEngine(program, T, ipus=2).run()
    assert first.records() == second.records()
    np.testing.assert_array_equal(first.tile_busy, second.tile_busy)


def test_cross_ipu_sync_makes_every_ipu_wait_for_the_slowest():
    cycles = np.zeros((2, T.tiles), dtype=np.int64)
    cycles[0, :] = 100
    cycles[1, 5] = 1_000
    timeline = bsp.CostEngine(bsp.ComputeSuperstep(bsp.CostedComputeSet("cs", cycles)), T, ipus=2).run()
    assert timeline.compute[0].tolist() == [100, 1_000]
    assert timeline.sync[0].tolist() == [T.sync_cycles_cross_ipu + 900, T.sync_cycles_cross_ipu]
    assert timeline.ipu_cycles().tolist() == [1_000 + T.sync_cycles_cross_ipu] * 2
    on_chip = bsp.CostEngine(
        bsp.ComputeSuperstep(bsp.CostedComputeSet("cs", cycles), sync=bsp.SyncKind.ON_CHIP), T, ipus=2
    ).run()
    assert on_chip.ipu_cycles().tolist() == [100 + T.sync_cycles_on_chip, 1_000 + T.sync_cycles_on_chip]


def test_per_tile_arrays_of_shape_tiles_apply_to_every_ipu():
    cycles = np.arange(T.tiles)
    timeline = bsp.CostEngine(bsp.ComputeSuperstep(bsp.CostedComputeSet("cs", cycles)), T, ipus=3).run()
    assert timeline.compute[0].tolist() == [T.tiles - 1] * 3
    np.testing.assert_array_equal(timeline.tile_busy, np.tile(cycles, (3, 1)))


def test_host_streams_cost_a_host_sync_latency_and_bandwidth():
    nbytes = 3_200_000
    timeline = bsp.CostEngine(bsp.Sequence(bsp.HostToDevice(nbytes), bsp.DeviceToHost(0)), MK2).run()
    # one IPU: the narrowest of its link, its machine's host link and the host's staging of the bytes
    bandwidth = min(MK2.host_link_bytes_per_s, MK2.machine_host_link_bytes_per_s, HOST.stream_staging_bytes_per_s)
    link = -(-nbytes * MK2.clock_hz // bandwidth) + MK2.seconds_to_cycles(MK2.host_link_latency_s)
    assert timeline.kinds == ("host->device", "device->host")
    assert timeline.exchange[0, 0] == link
    assert timeline.sync[:, 0].tolist() == [MK2.sync_cycles_host] * 2
    assert timeline.exchange[1, 0] == 0  # nothing to send: no latency either
    assert timeline.compute.sum() == 0 and timeline.utilisation() == 0.0


@pytest.mark.parametrize("ipus, sharing", [(1, 1), (2, 2), (4, 4), (16, 4)])
def test_ipus_streaming_at_once_share_their_machines_host_link_and_each_is_staged_by_the_host(ipus, sharing):
    """An IPU-M2000's 4 IPUs share its 100 Gbps host link (a POD16's four machines each have their own); the host
    stages each IPU's stream at hardware.HostSpec.stream_staging_bytes_per_s, the narrower for up to 2 IPUs."""
    nbytes = 1_250_000
    timeline = bsp.CostEngine(bsp.HostToDevice(nbytes), MK2, ipus=ipus).run()
    bandwidth = min(
        MK2.host_link_bytes_per_s, MK2.machine_host_link_bytes_per_s / sharing, HOST.stream_staging_bytes_per_s
    )
    expected = -(-nbytes * MK2.clock_hz // bandwidth) + MK2.seconds_to_cycles(MK2.host_link_latency_s)
    assert timeline.exchange[0].tolist() == [expected] * ipus


def test_a_host_sync_grows_with_the_ipus_it_spans():
    syncs = [int(bsp.CostEngine(bsp.HostToDevice(8), MK2, ipus=n).run().sync[0, 0]) for n in (1, 2, 4, 16)]
    assert syncs[0] == MK2.sync_cycles_host
    assert syncs == [MK2.sync_cycles_host + MK2.sync_cycles_cross_ipu * levels for levels in (0, 1, 2, 4)]


def test_a_host_call_costs_its_front_ends_seconds_per_execution():
    seconds = {api: bsp.CostEngine(bsp.HostCall(api), MK2).run().seconds() for api in HOST_APIS}
    assert seconds == pytest.approx({api: HOST.execution_seconds(api) for api in HOST_APIS}, abs=1 / MK2.clock_hz)
    assert len(set(seconds.values())) == len(HOST_APIS)  # the front ends' costs per call differ
    four = bsp.CostEngine(bsp.HostCall("keras"), MK2, ipus=4).run()
    growth = HOST.sync_cycles(MK2, 4) - HOST.sync_cycles(MK2, 1)
    assert four.sync[0].tolist() == [MK2.seconds_to_cycles(HOST.execution_overhead_s) + growth] * 4
    assert four.kinds == ("host call",)
    with pytest.raises(bsp.GraphError, match=r"api 'popart' is not one of \('keras', 'custom_loop', 'poptorch'\)"):
        bsp.HostCall("popart")


def test_a_host_wait_is_time_the_device_spends_waiting():
    timeline = bsp.CostEngine(bsp.Repeat(3, bsp.HostWait(2e-6)), MK2, ipus=2).run()
    assert timeline.kinds == ("host wait",) and timeline.labels == ("StreamCopyBegin (host late)",)
    assert timeline.totals() == {"compute": 0, "sync": 3 * MK2.seconds_to_cycles(2e-6), "exchange": 0}
    for bad in (-1e-6, float("nan"), "1", True):
        with pytest.raises(bsp.GraphError, match="seconds must be a number >= 0"):
            bsp.HostWait(bad)


def test_ipu_link_copy_uses_the_links_given():
    nbytes = np.array([320_000, 0])
    all_links, one_link = (bsp.CostEngine(bsp.IPULinkCopy(nbytes, links=k), MK2, ipus=2).run() for k in (None, 1))
    latency = MK2.seconds_to_cycles(MK2.ipu_link_latency_s)
    assert all_links.exchange[0].tolist() == [1_330 + latency, 0]
    assert one_link.exchange[0, 0] == 13_300 + latency
    assert all_links.sync[0, 1] == all_links.sync[0, 0] + 1_330 + latency


def test_copy_is_an_exchange_only_superstep():
    exchange = bsp.Exchange(np.full(T.tiles, 8), name="halo")
    timeline = bsp.CostEngine(bsp.ExchangeSuperstep(exchange), T).run()
    assert (timeline.labels, timeline.kinds) == (("halo",), ("exchange",))
    assert timeline.exchange[0, 0] == 2 and timeline.compute[0, 0] == 0


def test_barrel_scheduled_threads():
    # 7 vertices of 10 instructions on tile 0: six barrel-scheduled workers, so one runs two (20 instructions,
    # each issued once every 6 cycles); tile 1's lone vertex still waits its turn among 6 slots
    tiles = np.array([0] * 7 + [1])
    np.testing.assert_array_equal(bsp.tile_cycles_from_vertices(tiles, np.full(8, 10), 3, 6), [120, 60, 0])


def test_summary_mentions_simulated_totals():
    step, *_ = random_step(np.random.default_rng(4), "matmul")
    text = bsp.CostEngine(bsp.Repeat(4, step), T).run().summary()
    assert "matmul" in text and "simulated" in text and "tile utilisation" in text


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: bsp.CostEngine(bsp.ComputeSuperstep(bsp.CostedComputeSet("mm", np.ones(5))), T),
            r"compute set 'mm': shape \(5,\) does not fit the device; expected \(tiles,\) = \(16,\)",
        ),
        (
            lambda: bsp.CostEngine(bsp.ComputeSuperstep(bsp.CostedComputeSet("mm", np.ones((3, 16)))), T, ipus=2),
            r"compute set 'mm': shape \(3, 16\) does not fit",
        ),
        (
            lambda: bsp.CostEngine(
                bsp.ComputeSuperstep(bsp.CostedComputeSet("mm", np.ones(16)), bsp.Exchange(np.ones(4, int), name="x")),
                T,
            ),
            r"exchange 'x' of step 'mm': shape \(4,\) does not fit",
        ),
        (lambda: bsp.CostedComputeSet("neg", np.array([1, -2])), r"compute set 'neg': cycles must be >= 0"),
        (lambda: bsp.CostedComputeSet("flat", np.ones((1, 2, 3))), r"compute set 'flat': cycles must have shape"),
        (lambda: bsp.CostedComputeSet("nan", np.array([np.nan])), r"compute set 'nan': cycles must be finite"),
        (lambda: bsp.Exchange(np.ones(3, int), np.ones(4, int), name="ex"), r"exchange 'ex': received \(3,\) and sent"),
        (lambda: bsp.Exchange(np.ones(3), name="ex"), r"exchange 'ex' \(received\): bytes must be integers"),
        (lambda: bsp.Repeat(-1, bsp.HostToDevice(1)), r"Repeat 'repeat': count must be a non-negative integer"),
        (lambda: bsp.Sequence(bsp.HostToDevice(1), "oops"), r"Sequence 'sequence': expected programs, got str"),
        (
            lambda: bsp.CostEngine(bsp.HostToDevice([1, 2, 3]), T, ipus=2),
            r"stream 'host->device': 3 values given for 2 IPU",
        ),
        (lambda: bsp.HostToDevice(-5), r"stream 'host->device': bytes must be a non-negative integer"),
        (
            lambda: bsp.CostEngine(bsp.HostToDevice(1), T, ipus=0),
            r"Engine: the number of IPUs must be a positive integer, got 0",
        ),
        (lambda: bsp.CostEngine("program", T), r"Engine needs a program"),
        (lambda: bsp.IPULinkCopy(1, links=0), r"IPU-Link copy 'ipu-link copy': links must be a positive integer"),
    ],
)
def test_bad_input_is_a_clear_error_naming_the_object(make, message):
    with pytest.raises(bsp.GraphError, match=message):
        make()


def test_per_tile_values_above_int32_are_refused():
    with pytest.raises(bsp.GraphError, match=r"compute set 'huge': cycles per tile must be below 2\*\*31"):
        bsp.CostedComputeSet("huge", np.array([2**40]))


def test_a_loop_beyond_the_cycles_a_timeline_counts_is_refused_naming_its_count():
    step, *_ = random_step(np.random.default_rng(4), "step")
    cycles = re.escape(f"{2**60 * bsp.CostEngine(step, T).run().total_cycles():.3g}")
    with pytest.raises(bsp.GraphError, match=rf"Repeat 'loop' \(count 1,152,921,504,606,846,976\) would run {cycles}"):
        bsp.CostEngine(bsp.Repeat(2**60, step, label="loop"), T)  # wrapped to a wrong total in int64 before
    nested = bsp.Repeat(2**40, bsp.Repeat(2**40, step, label="inner"), label="outer")
    with pytest.raises(bsp.GraphError, match=r"Repeat 'outer' \(count 1,099,511,627,776\) would run .* use a smaller"):
        bsp.CostEngine(nested, T)
    two_halves = bsp.Sequence(bsp.Repeat(2**62 // 1_000, step), bsp.Repeat(2**62 // 1_000, step))
    with pytest.raises(bsp.GraphError, match=r"the program would run .* more than the 9,223,372,036,854,775,807"):
        bsp.CostEngine(two_halves, T)


def test_counts_up_to_the_limit_give_exact_totals():
    step, *_ = random_step(np.random.default_rng(5), "step")
    one = bsp.CostEngine(step, T).run().total_cycles()
    count = (2**63 - 1) // one
    timeline = bsp.CostEngine(bsp.Repeat(count, step), T).run()
    assert timeline.total_cycles() == count * one and timeline.supersteps == count
    assert sum(timeline.totals().values()) == count * one
    assert 0 < timeline.utilisation() <= 1
    empty = bsp.CostEngine(bsp.Repeat(2**80, bsp.Sequence(bsp.Repeat(2**80, bsp.Sequence()))), T).run()
    assert empty.total_cycles() == 0 and empty.supersteps == 0 and empty.first_supersteps(10) == []


def test_parallel_runs_each_ipus_own_program_then_waits_for_the_slowest():
    rng = np.random.default_rng(3)
    steps = [[random_step(rng, f"ipu{i}/step{k}")[0] for k in range(k_steps)] for i, k_steps in enumerate((3, 1, 0))]
    alone = [bsp.CostEngine(bsp.Sequence(s), T).run().total_cycles() for s in steps]
    block = bsp.Parallel([bsp.Sequence(s) for s in steps], label="slot")
    timeline = bsp.CostEngine(bsp.Repeat(2, block), T, ipus=3).run()
    expected = 2 * (max(alone) + T.sync_cycles_cross_ipu)
    assert timeline.ipu_cycles().tolist() == [expected] * 3
    sync_row = timeline.labels.index("slot/sync")
    waits = [max(alone) - a + T.sync_cycles_cross_ipu for a in alone]
    assert timeline.sync[sync_row].tolist() == waits and timeline.kinds[sync_row] == "sync"
    # a step computes on its own IPU only: the others' rows and tiles are idle
    row = timeline.labels.index("ipu1/step0")
    assert timeline.compute[row].tolist()[::2] == [0, 0] and timeline.tile_busy[2].sum() == 0


@pytest.mark.parametrize(
    "program, message",
    [
        (bsp.Parallel(bsp.Sequence()), "1 program(s) for 2 IPU(s)"),
        (bsp.Parallel(bsp.HostToDevice(64), bsp.Sequence()), "inside a Parallel block, which holds on-chip"),
        (bsp.Parallel(bsp.Parallel(bsp.Sequence(), bsp.Sequence()), bsp.Sequence()), "inside another Parallel"),
    ],
)
def test_parallel_blocks_that_cannot_run_are_named(program, message):
    with pytest.raises(bsp.GraphError, match=re.escape(message)):
        bsp.CostEngine(program, T, ipus=2)


def test_summary_never_cuts_a_label_so_rows_stay_distinct():
    """A reduction's stages differ only at the end of their names: the table keeps them whole and aligned."""
    labels = ["loss/SoftmaxCrossEntropy:11/reduction1", "loss/SoftmaxCrossEntropy:11/reduction1/stage1"]
    program = bsp.Sequence(
        *(bsp.ComputeSuperstep(bsp.CostedComputeSet(label, np.ones(16, np.int64))) for label in labels)
    )
    header, *rows = bsp.CostEngine(program, T).run().summary().splitlines()[:3]
    assert [row.split()[0] for row in rows] == labels
    runs_ends = {re.match(r"\S+\s+\d+", row).end() for row in rows}
    assert runs_ends == {header.index("runs") + len("runs")}  # the runs column lines up under its heading
