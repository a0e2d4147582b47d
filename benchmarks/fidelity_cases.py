"""The fidelity cases: real, published Graphcore figures and their expression in ipu-teach (issue 20).

``fidelity_cases.json`` holds one entry per published configuration: its source (repository, path, commit,
the quoted line), the hardware, the configuration as published, the figures it prints, and how it is
written with ipu-teach's Keras API (PopTorch and PopXL programs mapped to Keras, the mapping stated).
Cases of the ``calibration`` set are the Keras tutorial's logs the cost model was fitted to; ``validation``
cases fitted nothing. This module builds each case's model (``MODELS``), simulates its figures without
training (:func:`simulate`: the program is compiled with ``DeviceConnectionType.PRE_COMPILE``, which lowers
and times it exactly as a run would, without the numpy numerics) and checks the file's structure
(:func:`problems`), for ``bench_fidelity.py`` and the tests.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import pathlib

import numpy as np

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from benchmarks import poptorch_cases
from ipu_teach import examples, hardware, ipu
from ipu_teach.ipu import compile_time, memory_layout, popart_program
from ipu_teach.ipu.executor import IPUExecutor
from ipu_teach.ipu.ipu_tensorflow_addons.keras import layers as addons_layers
from ipu_teach.keras.engine import polling_thread
from ipu_teach.keras.progbar import Progbar

CASES_FILE = pathlib.Path(__file__).with_name("fidelity_cases.json")
SETS = ("calibration", "validation", "sizing")
KINDS = {
    "step_time": "s",
    "throughput": "items/s",
    "first_epoch_time": "s",
    "compile_time": "s",
    "device_cycles": "cycles",
    "tile_memory": "bytes",
    "total_memory": "bytes",
    "category_memory": "bytes",
    "compute_sets": "count",
    "graph_elements": "count",
    "accuracy": "fraction",
    "run_time": "s",
}
"""Every kind of figure a case may publish, with its unit."""
TIMING_KINDS = ("step_time", "throughput", "device_cycles", "run_time")
MEMORY_KINDS = ("tile_memory", "total_memory", "category_memory")
REQUIRED = ("id", "set", "title", "source", "hardware", "configuration", "figures", "expressible")


def load(path=CASES_FILE) -> list:
    """Returns the cases of the file, in its order."""
    return json.loads(pathlib.Path(path).read_text())["cases"]


def input_pipelines(path=CASES_FILE) -> dict:
    """The file's named input pipelines (``{name: {"samples_per_second": ..., ...}}``) that cases run by workers."""
    return json.loads(pathlib.Path(path).read_text())["input_pipelines"]


def input_pipeline(spec, path=CASES_FILE):
    """``(samples_per_second, overlapped)`` of the host loop a case's ``ipu_teach`` entry names, or None for a
    host that keeps up: a rate of its own (``samples_per_second``, ``overlapped``), or one of the file's
    ``input_pipelines`` run by ``workers`` processes (0: in the caller's thread, at one process's rate)."""
    entry = spec.get("input_pipeline")
    if entry is None:
        return None
    if "pipeline" not in entry:
        return entry["samples_per_second"], entry["overlapped"]
    rate = input_pipelines(path)[entry["pipeline"]]["samples_per_second"]
    workers = entry["workers"]
    return (rate, False) if workers == 0 else (rate * workers, True)


# ----- the models, as the sources write them (in Keras) -----------------------------------------------


def _stage(stages, index):
    """The pipeline stage context of layer group ``index`` (no stage when the model is not pipelined)."""
    return keras.ipu.PipelineStage(index) if stages else contextlib.nullcontext()


def keras_tutorial_cnn(stages=0):
    """Graphcore's Keras tutorial MNIST CNN (the calibration model), split in two stages where it splits it."""
    from ipu_teach.examples import tutorial_model_fn

    return keras.Model(*tutorial_model_fn(stages=bool(stages)))


def poptorch_classification(image=28, stages=0):
    """The PopTorch tutorials' ``ClassificationModel`` (basics, efficient data loading, System Analyser).

    PyTorch's GroupNorm(3, 12) is the op PopART runs for it, popnn's group norm: ``ipu_tensorflow_addons``'
    GroupNormalization(3, strided_channel_grouping=False) records it (``autograd.ops.group_normalization``), with
    neighbouring channels grouped as torch groups them.
    LogSoftmax + NLLLoss is a softmax Dense with sparse categorical cross-entropy."""
    inputs = keras.Input(shape=(image, image, 1))
    x = keras.layers.Conv2D(5, 3, activation="relu")(inputs)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(12, 5, activation="relu")(x)
    x = addons_layers.GroupNormalization(3, strided_channel_grouping=False)(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(100, activation="relu")(x)
    return keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(x))


def poptorch_mnist(stages=0):
    """The PopTorch MNIST simple application's ``Network`` (two conv blocks, Dense 128, dropout, Dense 10)."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = inputs
    for filters in (32, 64):
        x = keras.layers.Conv2D(filters, 3)(x)
        x = keras.layers.MaxPooling2D(2)(x)
        x = keras.layers.ReLU()(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    x = keras.layers.Dropout(0.5)(x)
    return keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(x))


def poptorch_pipelined_mnist(stages=4):
    """The PopTorch pipelining tutorial's ``Network``: blocks B1-B4, one pipeline stage each."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = inputs
    for index, filters in enumerate((10, 20)):
        with _stage(stages, index):
            x = keras.layers.Conv2D(filters, 5)(x)
            x = keras.layers.MaxPooling2D(2)(x)
            x = keras.layers.ReLU()(x)
    with _stage(stages, 2):
        x = keras.layers.Flatten()(x)
        x = keras.layers.Dense(256, activation="relu")(x)
    with _stage(stages, 3):
        outputs = keras.layers.Dense(10, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def popxl_mlp(stages=0):
    """The PopXL tutorials' MNIST ``Net``: 784 -> 512 -> 512 -> 512 -> 10 with GELU, images of 28 x 28."""
    inputs = keras.Input(shape=(28, 28))
    x = keras.layers.Flatten()(inputs)
    for _ in range(3):
        x = keras.layers.Dense(512, activation="gelu")(x)
    return keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(x))


def infeed_tutorial_mlp(stages=0):
    """The TF2 infeed/outfeed tutorial's model: Flatten, Dense 128 relu, Dense 10 softmax, on 28 x 28 images."""
    return keras.Sequential(
        [
            keras.layers.Flatten(input_shape=(28, 28)),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )


def tensorboard_cnn(stages=2):
    """The TF2 TensorBoard tutorial's CNN, stage 0 (two conv blocks) and stage 1 (conv block, dense)."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = inputs
    for index, filters in enumerate((32, 64, 32)):
        with _stage(stages, 0 if index < 2 else 1):
            x = keras.layers.Conv2D(filters, 3, activation="relu")(x)
            x = keras.layers.MaxPooling2D(2)(x)
    with _stage(stages, 1):
        x = keras.layers.Flatten()(x)
        x = keras.layers.Dropout(0.5)(x)
        outputs = keras.layers.Dense(10, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def poplar_tut4_matmuls(stages=0):
    """Poplar tutorial 4's two products, m1 (900 x 600) @ m2 (600 x 300) @ m3 (300 x 200), as two Dense layers
    without bias on batches of 600 features (m1's rows are the batch)."""
    return keras.Sequential(
        [
            keras.Input(shape=(600,)),
            keras.layers.Dense(300, use_bias=False),
            keras.layers.Dense(200, use_bias=False),
        ]
    )


def dense_layer(stages=0):
    """One Dense layer, 4,096 -> 1,024 features: the layer Graphcore's auto-pipelining profiler compiles alone
    in its test of PopVision's per-layer figures (ipu_tensorflow_addons' pva_utils_test.py)."""
    inputs = keras.Input(shape=(4096,))
    return keras.Model(inputs, keras.layers.Dense(1024)(inputs))


def keras_application(function, stages=0, checkpoints_after=(), eight_bit_input=False, **arguments):
    """A ``keras.applications`` model (``function``: ``"ResNet50"``, ``"MobileNetV2"``), untrained (``weights=None``):
    what a user sizing a real model builds. Not pipelined (``stages`` 0). ``checkpoints_after`` names the layers
    after which a ``RecomputationCheckpoint`` goes (recomputed with ``allow_recompute``); ``eight_bit_input`` feeds it
    uint8 images rescaled to [-1, 1] on the device (``examples.with_recomputation_checkpoints``)."""
    if stages:
        raise ValueError("keras_application cases are not pipelined: set pipeline_stages to 0")
    model = getattr(keras.applications, function)(weights=None, **arguments)
    if not (checkpoints_after or eight_bit_input):
        return model
    rescaling = keras.layers.Rescaling(1 / 127.5, offset=-1.0) if eight_bit_input else None
    return examples.with_recomputation_checkpoints(
        model, list(checkpoints_after), "uint8" if eight_bit_input else None, rescaling
    )


def bert_pretraining(
    stages=0, vocabulary=30522, masked_tokens=20, stage_layers=(4, 4, 4), checkpoints=False, **dimensions
):
    """BERT pre-training as Graphcore's TF2 application builds it (graphcore/examples nlp/bert/tensorflow2): the
    encoder of ``examples.bert_encoder`` and its two heads: masked-language-model logits over the vocabulary for
    ``masked_tokens`` positions (the masked positions' gather taken as the first ``masked_tokens`` tokens, the same
    shapes) after a gelu Dense and LayerNormalization, and next-sentence logits from a tanh pooler on the first
    token. With ``stages`` (5), pipelined as the config's pipeline_stages: the embeddings, then ``stage_layers``
    encoder layers a stage, then the heads; ``checkpoints``: a recomputation checkpoint after every encoder layer;
    ``dimensions``: the encoder's other sizes (``layers``, ``hidden``, ``heads``, ``intermediate``: BERT-Base's
    unless given)."""
    encoded = examples.bert_encoder(vocabulary=vocabulary, recomputation_checkpoints=checkpoints, **dimensions)
    x = encoded.outputs[0]
    masked = keras.layers.Lambda(lambda t: t[:, :masked_tokens], name="mlm_gather")(x)
    h = keras.layers.Dense(encoded.output_shape[-1], activation="gelu", name="mlm_transform")(masked)
    mlm = keras.layers.Dense(vocabulary, name="mlm_logits")(keras.layers.LayerNormalization(name="mlm_norm")(h))
    first = keras.layers.Lambda(lambda t: t[:, 0], name="nsp_first_token")(x)
    pooled = keras.layers.Dense(encoded.output_shape[-1], activation="tanh", name="nsp_pooler")(first)
    model = keras.Model(encoded.inputs, [mlm, keras.layers.Dense(2, name="nsp_logits")(pooled)], name="bert")
    if stages:
        if stages != len(stage_layers) + 2:
            raise ValueError(
                f"bert_pretraining: {len(stage_layers) + 2} stages (embeddings, layers, heads), not {stages}"
            )
        last_of_stage = np.cumsum(stage_layers)  # the encoder layers (0-based) that end each stage
        assignment, layer = [], -1
        for call in model.get_pipeline_stage_assignment():
            layer += isinstance(call.layer, keras.layers.MultiHeadAttention)  # a layer starts with its attention
            heads = call.layer.name.startswith(("mlm_", "nsp_"))
            assignment.append(
                stages - 1 if heads else 0 if layer < 0 else 1 + int(np.searchsorted(last_of_stage, layer + 1))
            )
        model.set_pipeline_stage_assignment(assignment)
    return model


def bert_question_answering(stages=0, vocabulary=30522):
    """BERT fine-tuned for SQuAD as Hugging Face's BertForQuestionAnswering is (the model PopRT's BERT-Base
    benchmark exports): the encoder of ``examples.bert_encoder`` and a Dense of 2 logits (start, end) on every
    token. Not pipelined (``stages`` 0)."""
    if stages:
        raise ValueError("bert_question_answering cases are not pipelined: set pipeline_stages to 0")
    encoded = examples.bert_encoder(vocabulary=vocabulary)
    logits = keras.layers.Dense(2, name="qa_outputs")(encoded.outputs[0])
    return keras.Model(encoded.inputs, logits, name="bert_squad")


MODELS = {
    f.__name__: f
    for f in (
        bert_pretraining,
        bert_question_answering,
        dense_layer,
        keras_application,
        keras_tutorial_cnn,
        poptorch_classification,
        poptorch_mnist,
        poptorch_pipelined_mnist,
        popxl_mlp,
        tensorboard_cnn,
        infeed_tutorial_mlp,
        poplar_tut4_matmuls,
    )
}


def build(spec) -> keras.Model:
    """The Keras model of a case's ``ipu_teach`` entry (in the current strategy scope)."""
    return MODELS[spec["model"]](stages=spec.get("pipeline_stages", 0), **spec.get("model_args", {}))


def optimizer(settings):
    """The optimizer a case names: ``{"name": "sgd", "learning_rate": ..., ...}``."""
    settings = dict(settings)
    name = settings.pop("name")
    classes = {"sgd": keras.optimizers.SGD, "adam": keras.optimizers.Adam, "rmsprop": keras.optimizers.RMSprop}
    return classes[name](**settings)


# ----- simulating a case ---------------------------------------------------------------------------------


def metrics(spec) -> list:
    """The metrics a case compiles its model with: names, or ``{"class": ..., "args": {...}}`` of
    ``keras.metrics`` (Graphcore's Keras computes them on the device in every step)."""
    return [
        name if isinstance(name, str) else getattr(keras.metrics, name["class"])(**name.get("args", {}))
        for name in spec.get("metrics", [])
    ]


@contextlib.contextmanager
def _poplar_flags(synthetic):
    """``TF_POPLAR_FLAGS=--use_synthetic_data`` while the case compiles, if it uses synthetic data."""
    saved = os.environ.get("TF_POPLAR_FLAGS")
    if synthetic:
        os.environ["TF_POPLAR_FLAGS"] = "--use_synthetic_data"
    else:
        os.environ.pop("TF_POPLAR_FLAGS", None)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TF_POPLAR_FLAGS", None)
        else:
            os.environ["TF_POPLAR_FLAGS"] = saved


def _data(model, samples, spec):
    """Zeros shaped like the model's input and the case's labels: the program's shapes are all that count."""
    x = np.zeros((samples,) + tuple(model.input_shape[1:]), np.float32)
    sparse = spec["loss"].startswith("sparse")
    y = np.zeros((samples,), np.int32) if sparse else keras.utils.to_categorical(np.zeros(samples), 10)
    return x, y


def fresh_config(spec):
    """A new session (names, seed 0, no IPU system) and an IPUConfig selecting the IPUs a case runs on:
    replicas x pipeline stages."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    ipu.system.reset()
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = spec.get("replicas", 1) * spec.get(
        "ipus_per_replica", max(spec.get("pipeline_stages", 0), 1)
    )
    return config


def compile_case(spec):
    """Compiles a case's program for the simulated IPU without running it; returns its ``Executable``.

    One execution's worth of data (steps_per_execution x batch x replicas samples) goes through ``fit``,
    ``evaluate`` or ``predict`` with ``DeviceConnectionType.PRE_COMPILE``: the program is lowered, costed
    and its memory laid out as for a run, and the numerics are skipped.
    """
    return _compile(spec)[0]


def _compile(spec):
    """:func:`compile_case`'s executable and the setup it runs in (``executor.Setup``: the host's side)."""
    stages = spec.get("pipeline_stages", 0)
    replicas = spec.get("replicas", 1)
    config = fresh_config(spec)
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    config.ipu_model.version = spec.get("ipu", "ipu2")  # "ipu21": a Bow
    mode = spec["mode"]
    spe = spec["steps_per_execution"]
    with _poplar_flags(spec.get("synthetic_data", False)), contextlib.redirect_stdout(io.StringIO()):
        config.configure_ipu_system()
        with ipu.ipu_strategy.IPUStrategy().scope():
            model = build(spec)
            if stages:
                model.set_pipelining_options(gradient_accumulation_steps_per_replica=spec.get("accumulation", 1))
            elif spec.get("accumulation", 1) > 1:
                model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=spec["accumulation"])
            model.compile(optimizer(spec["optimizer"]), spec["loss"], metrics(spec), steps_per_execution=spe)
            model.set_asynchronous_callbacks(spec.get("asynchronous_callbacks", False))
            # the front end calling each execution: PopTorch and PopXL programs are costed as PopTorch calls; the
            # framework building the program is the front end's own (PopART for PopTorch) unless the case names it
            model.device_executor = IPUExecutor(
                model, host_api=spec.get("host_api", "keras"), program_builder=spec.get("program_builder")
            )
            pipeline = input_pipeline(spec)
            if pipeline is not None:
                ipu.host.simulate_input_pipeline(*pipeline)
            x, y = _data(model, spe * spec["batch"] * replicas, spec)
            if mode == "train":
                model.fit(x, y, batch_size=spec["batch"], epochs=1, verbose=0)
            elif mode == "test":
                model.evaluate(x, y, batch_size=spec["batch"], verbose=0)
            else:
                model.predict(x, batch_size=spec["batch"], verbose=0)
        return model.get_ipu_executable(mode), model.device_executor.prepared[mode].setup


def _graphs(executable) -> list:
    """The lowered graph of each IPU of one replica (one per pipeline stage)."""
    return [executable.graph] if executable.pipeline is None else executable.pipeline.stage_graphs


def memory_by_category(executable) -> dict:
    """``{category: bytes}`` summed over every tile of one replica's IPUs, as PopVision's memory report
    (``total_memory`` is not their sum but the bytes live at the fullest program step, as PopVision's total
    in its liveness view: tensors never live together share memory)."""
    totals = {}
    for graph in _graphs(executable):
        for item in graph.memory:
            totals[item.category] = totals.get(item.category, 0) + int(item.per_tile.sum())
    return totals


def device_cycles(timeline) -> int:
    """Cycles of the run's on-device supersteps (compute, exchange, IPU-Links) on its busiest IPU, leaving out
    host streams, host calls and waits: the counterpart of a trace of a program whose tensors live on the device."""
    on_device = np.array(
        [kind not in ("host->device", "device->host", "host call", "host wait") for kind in timeline.kinds]
    )
    per_ipu = timeline.counts[on_device] @ (timeline.compute + timeline.sync + timeline.exchange)[on_device]
    return int(per_ipu.max(initial=0))


def shown_step_seconds(executable, callback_seconds_per_step=None) -> float:
    """The time per step Keras' progress bar shows for an execution after the first: the execution over its
    steps, or, with callbacks run per step beside it (``set_asynchronous_callbacks``), the pace of the polling
    thread, the first step left out as Keras' Progbar leaves it out once steps arrive one by one."""
    seconds, spe = executable.seconds_per_execution, executable.steps_per_execution
    if callback_seconds_per_step is None:
        return seconds / spe
    bar = Progbar(spe, verbose=0)
    arrivals = executable.step_arrivals(seconds)
    for step, finished in enumerate(polling_thread.completions(arrivals, callback_seconds_per_step), start=1):
        bar.update(step, elapsed=finished)
    return bar.seconds_per_step


def simulated_figures(spec, executable, callback_seconds_per_step=None) -> dict:
    """Every figure kind a compiled case gives: the simulated counterpart of what the sources print
    (``category_memory`` is per category: see :func:`simulated_figure`); ``callback_seconds_per_step`` is the
    setup's when the callbacks run per step."""
    seconds = executable.seconds_per_execution
    spe = spec["steps_per_execution"]
    samples = spe * spec["batch"] * spec.get("replicas", 1)
    return {
        "step_time": shown_step_seconds(executable, callback_seconds_per_step),
        "throughput": samples / seconds,
        "compile_time": executable.compile_seconds,
        "device_cycles": device_cycles(executable.timeline) / spe,
        "tile_memory": int(max(int(graph.tile_memory().max()) for graph in _graphs(executable))),
        "total_memory": sum(memory_layout.ipu_peak(g.memory, len(g.steps)) for g in _graphs(executable)),
        "compute_sets": executable.graph.compute_sets,
        "graph_elements": graph_elements(executable),
    }


def graph_elements(executable) -> int:
    """Vertices and edges of the compiled graph as ipu-teach's compile time counts them (``ipu.compile_time``):
    one vertex per working tile-step and the tensor windows of the products' vertices; the counterpart of the
    "Number of vertices" plus "Number of edges" of a Graph Analyser summary."""
    size = compile_time.graph_size(
        executable.graph, None if executable.pipeline is None else executable.pipeline.stage_graphs
    )
    return size.working_tile_steps + size.tensor_windows


def simulated_figure(figure, spec, executable, callback_seconds_per_step=None):
    """The simulated counterpart of one published figure."""
    if figure["kind"] == "category_memory":
        return memory_by_category(executable).get(figure["category"], 0)
    return simulated_figures(spec, executable, callback_seconds_per_step)[figure["kind"]]


def simulate(case) -> dict:
    """``{figure name: simulated value}`` for each figure of an expressible validation case."""
    spec = case["ipu_teach"]
    if "poptorch_run" in spec:  # through ipu-teach's PopTorch front end; the accuracy needs training (None here)
        return poptorch_cases.figures(case, poptorch_cases.simulate(spec))
    if "poptorch_loop" in spec:  # a tutorial's loop over an asynchronous DataLoader, through the front end
        rate = input_pipelines()[spec["poptorch_loop"]["loader"]["pipeline"]]["samples_per_second"]
        simulated = poptorch_cases.simulate_loop(spec, rate)
        return {figure["name"]: simulated[figure["measure"]] for figure in case["figures"]}
    if "custom_loop" in spec:
        return {figure["name"]: custom_loop_run_time(spec) for figure in case["figures"]}
    executable, setup = _compile(spec)
    per_step = setup.callback_seconds_per_step
    return {figure["name"]: simulated_figure(figure, spec, executable, per_step) for figure in case["figures"]}


# ----- sizing a real model (set "sizing") -----------------------------------------------------------------------


def size(case) -> ipu.utils.Estimate:
    """``ipu.utils.estimate`` of a sizing case at its published configuration: its model built under the case's
    dtype policy (``"float16"`` for Graphcore's 16.16) with shape-only weights, its replicas on the case's IPU
    version, its recomputation, Poplar options, pipeline (``pipelining``: device mapping, schedule, reduction),
    gradient accumulation, the optimizer state's offloading and ``steps_per_execution``; traced from shapes only,
    so a ResNet-50 takes seconds."""
    spec = case["ipu_teach"]
    config = fresh_config(spec)
    config.ipu_model.version = spec.get("ipu", "ipu2")
    config.allow_recompute = spec.get("allow_recompute", False)
    config.convolutions.poplar_options = spec.get("convolution_options", {})
    config.matmuls.poplar_options = spec.get("matmul_options", {})
    config.optimizations.maximum_cross_replica_sum_buffer_size = spec.get("cross_replica_sum_buffer", 0)
    config.io_tiles.num_io_tiles = spec.get("io_tiles", 0)  # tiles that only stream data (PopRT's num_io_tiles)
    config.io_tiles.place_ops_on_io_tiles = bool(config.io_tiles.num_io_tiles)
    with contextlib.redirect_stdout(io.StringIO()):
        config.configure_ipu_system()
    keras.mixed_precision.set_global_policy(spec.get("policy", "float32"))
    try:
        with ipu.utils.shape_only_weights(), ipu.ipu_strategy.IPUStrategy().scope():
            model = build(spec)
            if spec.get("pipeline_stages"):
                pipelining = spec.get("pipelining", {})
                model.set_pipelining_options(
                    gradient_accumulation_steps_per_replica=spec["accumulation"],
                    device_mapping=pipelining.get("device_mapping"),
                    pipeline_schedule=getattr(
                        ipu.ops.pipelining_ops.PipelineSchedule, pipelining.get("schedule", "Grouped")
                    ),
                    gradient_accumulation_reduction_method=pipelining.get("reduction", "sum"),
                    recomputation_mode=getattr(
                        ipu.ops.pipelining_ops.RecomputationMode, pipelining.get("recomputation_mode", "Auto")
                    ),
                    offload_weight_update_variables=spec.get("offload_weight_update_variables"),
                )
            elif spec.get("accumulation", 1) > 1:
                model.set_gradient_accumulation_options(
                    gradient_accumulation_steps_per_replica=spec["accumulation"],
                    offload_weight_update_variables=spec.get("offload_weight_update_variables"),
                )
            if spec["mode"] != "predict":
                model.compile(
                    optimizer(spec["optimizer"]), spec["loss"], steps_per_execution=spec["steps_per_execution"]
                )
            else:
                model.compile(steps_per_execution=spec["steps_per_execution"])
            with contextlib.redirect_stdout(io.StringIO()):  # Graphcore's INFO lines: the table says the same
                return ipu.utils.estimate(model, spec["batch"], spec["mode"])
    finally:
        keras.mixed_precision.set_global_policy("float32")


def sized_figure(figure, estimate) -> float:
    """The simulated counterpart of a sizing case's published figure (a throughput, a time per step or a compile
    time)."""
    if figure["kind"] == "throughput":
        return estimate.samples_per_second
    if figure["kind"] == "step_time":
        return estimate.seconds_per_step
    if figure["kind"] == "compile_time":
        return estimate.compile_seconds
    raise ValueError(f"sizing figures are throughputs, step times or compile times, not {figure['kind']!r}")


# ----- custom training loops (the TF2 infeed/outfeed tutorial's two scripts) -------------------------------


def _training_step(features, labels, model, optimizer):
    """The step both of the tutorial's scripts write out: the loss under a tape, its gradients applied."""
    with tf.GradientTape() as tape:
        predictions = model(features, training=True)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, predictions))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function(experimental_compile=True)
def _loop_with_feeds(iterator, outfeed_queue, model, optimizer, steps_per_execution):
    """The tutorial's ``training_loop``: ``steps_per_execution`` steps from the infeed in one call."""
    for _ in tf.range(steps_per_execution):
        features, labels = next(iterator)
        outfeed_queue.enqueue(_training_step(features, labels, model, optimizer))


_step_without_feeds = tf.function(_training_step, experimental_compile=True)
"""The tutorial's ``training_step``: one step per call, its batch given as arguments."""


def custom_loop_run_time(spec, calls_simulated=2) -> float:
    """Simulated seconds of a custom loop's whole run, as its script times it (compilation included): the loop
    is run for ``calls_simulated`` calls on zeros (every call costs the same), then its compile time plus
    ``spec["custom_loop"]["calls"]`` calls at the simulated seconds per call."""
    loop = spec["custom_loop"]
    batch, steps = spec["batch"], loop["steps_per_call"]
    config = fresh_config(spec)
    ipu.custom_loop.clear_timings()
    with contextlib.redirect_stdout(io.StringIO()):
        config.configure_ipu_system()
        x = np.zeros((batch * steps * calls_simulated, 28, 28), np.float32)
        dataset = tf.data.Dataset.from_tensor_slices((x, np.zeros(len(x), np.int32))).batch(batch, drop_remainder=True)
        strategy = ipu.ipu_strategy.IPUStrategy(enable_dataset_iterators=loop["feeds"])
        with strategy.scope():
            model, opt = build(spec), optimizer(spec["optimizer"])
            if loop["feeds"]:
                outfeed, iterator = ipu.ipu_outfeed_queue.IPUOutfeedQueue(), iter(dataset.repeat())
                for _ in range(calls_simulated):
                    strategy.run(_loop_with_feeds, args=[iterator, outfeed, model, opt, steps])
            else:
                for features, labels in dataset:
                    strategy.run(_step_without_feeds, args=[features, labels, model, opt])
    [timing] = ipu.custom_loop.timings().values()
    per_call = (timing.seconds - timing.compile_seconds) / timing.calls
    return timing.compile_seconds + loop["calls"] * per_call


# ----- ratios and their summary ----------------------------------------------------------------------------


def ratio(simulated, real, kind="step_time") -> float:
    """Simulated over real; for a throughput, real over simulated, so that every timing ratio compares times:
    above 1 the simulator is slower (or holds more bytes, takes longer to compile), below 1 faster."""
    return real / simulated if kind == "throughput" else simulated / real


def error_factor(ratios) -> float:
    """The geometric-mean error factor exp(mean |log ratio|): 1 is exact, 2 is typically off by 2x."""
    return math.exp(sum(abs(math.log(r)) for r in ratios) / len(ratios)) if ratios else float("nan")


# ----- the file's structure ----------------------------------------------------------------------------------


def problems(case) -> list:
    """What a case lacks (an empty list when its structure is complete); the tests assert it is empty."""
    found = [f"missing {key!r}" for key in REQUIRED if key not in case]
    if found:
        return found
    if case["set"] not in SETS:
        found.append(f"set {case['set']!r} is not one of {SETS}")
    source = case["source"]
    if not (
        source.get("url")
        or (source.get("repository") and source.get("path") and source.get("commit"))
        or (source.get("document") and source.get("path"))
    ):
        found.append("source needs a url, a repository, path and commit, or a document and its path")
    if not case["hardware"].get("ipu") or not case["hardware"].get("ipus"):
        found.append("hardware needs the IPU (Mk2 / Bow) and the number of IPUs")
    configuration = case["configuration"]
    for key in ("framework", "model", "micro_batch", "replicas", "precision", "data"):
        if key not in configuration:
            found.append(f"configuration lacks {key!r}")
    if not case["figures"]:
        found.append("no figures")
    for figure in case["figures"]:
        if figure.get("kind") not in KINDS:
            found.append(f"figure {figure.get('name')!r}: kind {figure.get('kind')!r} is not one of {sorted(KINDS)}")
        elif figure.get("unit") != KINDS[figure["kind"]]:
            found.append(f"figure {figure.get('name')!r}: unit should be {KINDS[figure['kind']]!r}")
        if not isinstance(figure.get("real"), (int, float)) or figure["real"] <= 0:
            found.append(f"figure {figure.get('name')!r}: real must be a positive number")
        if not figure.get("quote"):
            found.append(f"figure {figure.get('name')!r}: no quoted line")
        if figure.get("kind") == "category_memory" and not figure.get("category"):
            found.append(f"figure {figure.get('name')!r}: category_memory names ipu-teach's category")
        if "calibrates" in figure and not figure["calibrates"]:
            found.append(f"figure {figure.get('name')!r}: calibrates names the figure it was fitted to")
        if "check_set" in figure and (not figure["check_set"] or "calibrates" in figure):
            found.append(f"figure {figure.get('name')!r}: check_set says what it checks, and nothing was fitted to it")
    if case["expressible"]:
        if "ipu_teach" not in case or not case.get("mapping"):
            found.append("an expressible case needs its ipu_teach entry and the mapping")
        else:
            found += _loop_problems(case["ipu_teach"])
            measures = (
                poptorch_cases.MEASURES
                if "poptorch_run" in case["ipu_teach"]
                else poptorch_cases.LOOP_MEASURES
                if "poptorch_loop" in case["ipu_teach"]
                else None
            )
            if measures:
                found += [
                    f"figure {f.get('name')!r}: measure is not one of {measures}"
                    for f in case["figures"]
                    if f.get("measure") not in measures
                ]
    elif not case.get("reason"):
        found.append("a case that is not expressible says why (reason)")
    return found


def _loop_problems(spec) -> list:
    """What is wrong with an ``ipu_teach`` entry's model and host loop (front end, input pipeline)."""
    found = []
    models = poptorch_cases.MODELS if "poptorch_run" in spec or "poptorch_loop" in spec else MODELS
    if spec["model"] not in models:
        found.append(f"model {spec['model']!r} is not one of {sorted(models)}")
    loader = spec.get("poptorch_loop", {}).get("loader")
    if loader is not None and (
        loader.get("pipeline") not in input_pipelines()
        or not isinstance(loader.get("workers"), int)
        or loader["workers"] < 1
    ):
        found.append(f"poptorch_loop's loader names one of {sorted(input_pipelines())} and its workers (at least 1)")
    if spec.get("host_api", "keras") not in hardware.HOST_APIS:
        found.append(f"host_api {spec['host_api']!r} is not one of {hardware.HOST_APIS}")
    if spec.get("program_builder", "tensorflow") not in popart_program.PROGRAM_BUILDERS:
        found.append(f"program_builder {spec['program_builder']!r} is not one of {popart_program.PROGRAM_BUILDERS}")
    entry = spec.get("input_pipeline")
    if entry is None:
        return found
    if "pipeline" in entry:
        known = input_pipelines()
        if entry["pipeline"] not in known or not isinstance(entry.get("workers"), int) or entry["workers"] < 0:
            found.append(f"input_pipeline names one of {sorted(known)} and its workers (0: the caller's thread)")
    elif not (
        entry.get("samples_per_second", 0) > 0 and isinstance(entry.get("overlapped"), bool) and entry.get("source")
    ):
        found.append("input_pipeline gives samples_per_second > 0, overlapped (true/false) and its source")
    return found
