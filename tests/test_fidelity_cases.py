"""The fidelity cases file (benchmarks/fidelity_cases.json, issue 20): its structure, not its ratios.

Every case says where its figures come from (a repository, path and commit or a URL, and the quoted line),
on what hardware and configuration; every expressible case builds in ipu-teach and its program compiles to
the figures bench_fidelity.py compares. Whether the ratios are good is the benchmark's business, not a test's.
"""

import contextlib
import math

import pytest
from helpers.scripts import load_script

import ipu_teach.keras as keras
from ipu_teach import hardware, ipu

fidelity_cases = load_script("benchmarks/fidelity_cases.py")

CASES = fidelity_cases.load()
EXPRESSIBLE = [case for case in CASES if case.get("expressible")]
VALIDATION = [case for case in EXPRESSIBLE if case["set"] == "validation"]
FRONT_END = [case for case in EXPRESSIBLE if "poptorch_run" in case["ipu_teach"]]
"""Cases run through ipu-teach's PopTorch front end (benchmarks/poptorch_cases.py), not written in Keras."""
LOOPS = [case for case in EXPRESSIBLE if "poptorch_loop" in case["ipu_teach"]]
"""Tutorials' training loops over an asynchronous DataLoader, run through the front end too."""


def test_the_file_has_both_sets_and_enough_validation_cases():
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)), "case ids are unique"
    assert {case["set"] for case in CASES} == {"calibration", "validation", "sizing"}
    timing = [
        f
        for case in VALIDATION
        for f in case["figures"]
        if f["kind"] in fidelity_cases.TIMING_KINDS and "calibrates" not in f  # fitted figures are calibration
    ]
    assert len(VALIDATION) >= 10 and len(timing) >= 10


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_every_case_has_its_source_quote_and_configuration(case):
    assert fidelity_cases.problems(case) == []


def test_problems_names_what_a_case_lacks():
    case = dict(VALIDATION[0], source={"repository": "graphcore/examples"}, expressible=False)
    case["figures"] = [dict(case["figures"][0], quote="", unit="ms")]
    found = fidelity_cases.problems(case)
    assert any("commit" in p for p in found) and any("quoted" in p for p in found)
    assert any("unit" in p for p in found) and any("reason" in p for p in found)
    assert fidelity_cases.problems({"id": "x"})[0] == "missing 'set'"


@pytest.mark.parametrize("marks", [{"check_set": ""}, {"check_set": "a check", "calibrates": "a fit"}])
def test_problems_names_a_check_set_figure_that_says_nothing_or_was_fitted(marks):
    case = dict(VALIDATION[0])
    case["figures"] = [dict(case["figures"][0], **marks)]
    assert any("check_set says what it checks" in p for p in fidelity_cases.problems(case))


KERAS_EXPRESSED = [case for case in EXPRESSIBLE if case not in FRONT_END + LOOPS]


@pytest.mark.parametrize("case", KERAS_EXPRESSED, ids=[case["id"] for case in KERAS_EXPRESSED])
def test_expressible_cases_build_in_ipu_teach(case):
    sized = ipu.utils.shape_only_weights() if case["set"] == "sizing" else contextlib.nullcontext()
    with ipu.ipu_strategy.IPUStrategy().scope(), sized:  # a real model's weights only as shapes, as size() builds it
        model = fidelity_cases.build(case["ipu_teach"])
    assert isinstance(model, keras.Model) and model.count_params() > 0
    shapes = model.output_shape if isinstance(model.output_shape, list) else [model.output_shape]
    assert all(shape[0] is None for shape in shapes)  # batches of any size, as the case's data comes in


@pytest.mark.parametrize("case", VALIDATION, ids=[case["id"] for case in VALIDATION])
def test_validation_cases_compile_to_every_figure_they_compare(case):
    simulated = fidelity_cases.simulate(case)
    assert set(simulated) == {figure["name"] for figure in case["figures"]}
    trained = {f["name"] for f in case["figures"] if f["kind"] == "accuracy" and case in FRONT_END}
    assert all(simulated[name] is None for name in trained)  # needs training: bench_fidelity does it
    assert all(math.isfinite(value) and value > 0 for name, value in simulated.items() if name not in trained)


def test_device_cycles_leave_out_the_host_streams():
    case = next(case for case in VALIDATION if any(f["kind"] == "device_cycles" for f in case["figures"]))
    timeline = fidelity_cases.compile_case(case["ipu_teach"]).timeline
    host = [row for row, kind in enumerate(timeline.kinds) if kind in ("host->device", "device->host")]
    assert host, "the case's program streams its input in and its output out"
    host_cycles = sum(int(timeline.counts[row]) * int(timeline.superstep_cycles()[row]) for row in host)
    assert fidelity_cases.device_cycles(timeline) == timeline.total_cycles() - host_cycles


def test_error_factor_and_ratio_directions():
    assert fidelity_cases.error_factor([2.0, 0.5]) == pytest.approx(2.0)
    assert fidelity_cases.error_factor([1.0]) == 1.0
    assert fidelity_cases.ratio(2.0, 1.0, "step_time") == 2.0
    assert fidelity_cases.ratio(2.0, 1.0, "throughput") == 0.5  # twice the items/s: half the time


def test_problems_names_a_bad_host_loop():
    spec = dict(VALIDATION[0]["ipu_teach"], host_api="popxl", input_pipeline={"samples_per_second": 10})
    found = fidelity_cases.problems(dict(VALIDATION[0], ipu_teach=spec))
    assert any("host_api 'popxl'" in p for p in found)
    assert any("overlapped" in p for p in found)
    spec["input_pipeline"] = {"pipeline": "no-such-loader", "workers": 2}
    assert any("input_pipeline names one of" in p for p in fidelity_cases.problems(dict(VALIDATION[0], ipu_teach=spec)))


def test_a_loader_of_workers_runs_beside_the_device_and_none_in_the_callers_thread():
    rate = fidelity_cases.input_pipeline(
        {"input_pipeline": {"pipeline": "torchvision-mnist-per-process", "workers": 0}}
    )
    assert rate[1] is False and rate[0] > 0
    assert fidelity_cases.input_pipeline(
        {"input_pipeline": {"pipeline": "torchvision-mnist-per-process", "workers": 16}}
    ) == (16 * rate[0], True)
    assert fidelity_cases.input_pipeline({}) is None


def test_a_case_is_costed_with_its_front_ends_call_and_its_loading():
    """The same PopXL program called from Keras, from PopTorch, and from PopTorch with loading in the caller's
    thread: the differences are exactly the host's figures, the device program unchanged."""
    [case] = [c for c in VALIDATION if c["id"] == "popxl-mnist-sgd"]
    spec = case["ipu_teach"]
    plain = {k: v for k, v in spec.items() if k not in ("host_api", "input_pipeline")}
    keras_run = fidelity_cases.compile_case(plain)
    poptorch_run = fidelity_cases.compile_case(dict(plain, host_api="poptorch"))
    loaded_run = fidelity_cases.compile_case(spec)
    assert poptorch_run.timeline.seconds() == keras_run.timeline.seconds() == loaded_run.timeline.seconds()
    host = hardware.HOST
    assert keras_run.seconds_per_execution - poptorch_run.seconds_per_execution == pytest.approx(
        host.execution_seconds("keras") - host.execution_seconds("poptorch"), abs=1e-9
    )
    rate, overlapped = fidelity_cases.input_pipeline(spec)
    assert overlapped is False
    assert loaded_run.seconds_per_execution - poptorch_run.seconds_per_execution == pytest.approx(
        spec["batch"] * spec["steps_per_execution"] / rate, abs=1e-9
    )


def test_a_case_with_asynchronous_callbacks_shows_the_slower_of_the_device_step_and_the_hosts_work_per_step():
    """The TF2 TensorBoard tutorial's evaluate runs its callbacks per step (set_asynchronous_callbacks): its step
    time is the polling thread's pace, not the execution's time over its steps."""
    [case] = [c for c in VALIDATION if c["id"] == "tf2-tensorboard-pipelined-evaluate"]
    spec = case["ipu_teach"]
    assert spec["asynchronous_callbacks"] is True
    executable = fidelity_cases.compile_case(spec)
    device_step = executable.timeline.seconds() / spec["steps_per_execution"]
    [shown] = fidelity_cases.simulate(case).values()
    assert shown == pytest.approx(max(device_step, hardware.HOST.callback_step_s), rel=1e-9)
    assert fidelity_cases.shown_step_seconds(executable) == pytest.approx(
        executable.seconds_per_execution / spec["steps_per_execution"]
    )


SIZING = [case for case in EXPRESSIBLE if case["set"] == "sizing"]


@pytest.mark.parametrize("case", SIZING, ids=[case["id"] for case in SIZING])
def test_sizing_cases_are_estimated_at_their_published_configuration(case):
    spec = case["ipu_teach"]
    estimate = fidelity_cases.size(case)
    configuration = case["configuration"]
    assert (estimate.micro_batch, estimate.replicas, estimate.accumulation) == (
        configuration["micro_batch"],
        configuration["replicas"],
        configuration["gradient_accumulation"],
    )
    assert estimate.mode == spec["mode"] and estimate.steps_per_execution == spec["steps_per_execution"]
    parameters = fidelity_cases.build(spec).count_params()
    bytes_per_value = 2 if spec["policy"] == "float16" else 4  # 16.16: the weights are float16 too
    assert estimate.memory_by_category["variables"] == bytes_per_value * parameters
    tiles = ipu.system.VERSIONS[spec["ipu"]].tiles - spec.get("io_tiles", 0)  # I/O tiles only stream data
    ipus_per_replica = case["hardware"]["ipus"] // estimate.replicas
    assert [len(per_tile) for per_tile in estimate.tile_bytes] == [tiles] * ipus_per_replica
    assert keras.mixed_precision.global_policy().name == "float32", "the case's policy does not leak"
    for figure in case["figures"]:
        assert (
            math.isfinite(fidelity_cases.sized_figure(figure, estimate))
            and fidelity_cases.sized_figure(figure, estimate) > 0
        )


def test_sizing_refuses_what_it_cannot_compare_or_build():
    with pytest.raises(ValueError, match="not 'tile_memory'"):
        fidelity_cases.sized_figure({"kind": "tile_memory"}, None)
    with pytest.raises(ValueError, match="set pipeline_stages to 0"):
        fidelity_cases.keras_application("ResNet50", stages=2)
    with pytest.raises(ValueError, match="set pipeline_stages to 0"):
        fidelity_cases.bert_question_answering(stages=2)


def test_the_workshop_slides_basics_run_is_a_front_end_case_with_every_printed_figure():
    """The slides' PopTorch basics run (issue 23): the five figures it prints, as published, each measured through
    the PopTorch front end; 5 epochs are the training compilation plus 18,750 calls, which a PopTorch call and
    its device step cost (nothing fitted to it)."""
    [case] = [case for case in FRONT_END if case["id"] == "poptorch-basics-slides-front-end"]
    assert case["set"] == "validation" and case["source"]["lines"] == "1850-1859"
    published = {f["measure"]: (f["kind"], f["real"]) for f in case["figures"]}
    assert published == {
        "training compile": ("compile_time", 39.0),
        "epochs": ("run_time", 81.0),
        "evaluation compile": ("compile_time", 19.0),
        "inference compile": ("compile_time", 9.0),
        "accuracy": ("accuracy", 0.8925),
    }
    spec = case["ipu_teach"]
    assert spec["host_api"] == "poptorch" and spec["input_pipeline"] == {
        "pipeline": "torchvision-mnist-per-process",
        "workers": 20,
    }
    simulated = fidelity_cases.poptorch_cases.simulate(spec)
    compile_s, per_call = simulated["training"]
    assert per_call >= hardware.HOST.poptorch_execution_s and simulated["inference"] < simulated["evaluation"]
    figures = fidelity_cases.poptorch_cases.figures(case, simulated, accuracy=0.5)
    assert figures["5 epochs (compile included)"] == pytest.approx(compile_s + 5 * 3750 * per_call)
    assert figures["eval accuracy"] == 0.5 and figures["training compile"] == compile_s


def test_problems_names_a_front_end_figure_without_its_measure():
    [case] = FRONT_END
    broken = dict(case, figures=[dict(case["figures"][0], measure="throughput")])
    assert fidelity_cases.problems(broken) == [
        f"figure 'training compile': measure is not one of {fidelity_cases.poptorch_cases.MEASURES}"
    ]
    assert "model 'resnet' is not one of ['basics_classification', 'pipelining_network']" in fidelity_cases.problems(
        dict(case, ipu_teach=dict(case["ipu_teach"], model="resnet"))
    )


def test_the_pipelining_tutorials_epochs_are_its_calls_and_its_asynchronous_loaders_fill():
    """The PopTorch pipelining tutorial through the front end, with the README's options: one call is 10 device
    iterations of 10 micro-batches of 40 on a 4-stage pipeline; an epoch of 60,000 images is 15 calls, each batch of
    4,000 made by one of the DataLoader's 16 workers at one process's rate, so the epoch is host-bound."""
    [case] = [case for case in LOOPS if case["id"] == "poptorch-pipelining-mnist-train"]
    spec = case["ipu_teach"]
    loop = spec["poptorch_loop"]
    assert (loop["batch"], loop["device_iterations"], loop["gradient_accumulation"]) == (40, 10, 10)
    assert loop["loader"] == {"pipeline": "torchvision-mnist-per-process", "workers": 16}
    rate = fidelity_cases.input_pipelines()["torchvision-mnist-per-process"]["samples_per_second"]
    simulated = fidelity_cases.poptorch_cases.simulate_loop(spec, rate)
    [timing] = ipu.custom_loop.timings().values()
    executable = timing.executable
    assert executable.steps_per_execution == 100 and executable.graph.micro_batch == 40
    assert len(executable.pipeline.stage_graphs) == 4
    per_call = executable.seconds_per_execution
    assert per_call >= executable.timeline.seconds() + hardware.HOST.poptorch_execution_s  # a PopTorch call
    expected = ipu.host.asynchronous_epoch_seconds(15, per_call, 4000 / rate, 16)
    assert simulated["epoch throughput"] == pytest.approx(60_000 / expected)
    assert simulated["epoch throughput"] < 0.5 * 4000 / per_call  # the loader's fill, not the calls, sets the pace
    assert simulated["training compile"] == timing.compile_seconds
    assert fidelity_cases.simulate(case) == {
        "training throughput (epochs 2-3)": simulated["epoch throughput"],
        "compile time": simulated["training compile"],
    }


def test_problems_names_a_loop_without_its_loader_or_measure():
    [case] = [case for case in LOOPS if case["id"] == "poptorch-pipelining-mnist-train"]
    loop = dict(case["ipu_teach"]["poptorch_loop"], loader={"pipeline": "torchvision-mnist-per-process", "workers": 0})
    found = fidelity_cases.problems(dict(case, ipu_teach=dict(case["ipu_teach"], poptorch_loop=loop)))
    assert found == [
        "poptorch_loop's loader names one of ['torchvision-mnist-per-process'] and its workers (at least 1)"
    ]
    broken = dict(case, figures=[dict(case["figures"][0], measure="epochs")])
    measures = fidelity_cases.poptorch_cases.LOOP_MEASURES
    assert fidelity_cases.problems(broken) == [
        f"figure 'training throughput (epochs 2-3)': measure is not one of {measures}"
    ]
