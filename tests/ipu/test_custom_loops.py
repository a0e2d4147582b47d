"""Custom training loops on the simulated IPU: strategy.run of a tf.function, infeeds and outfeeds. Numerics are
the CPU's; the cost is the executor's: one program per function and trace, a host call per call (the custom_loop
front end), and a device loop of n infeed steps costing as Keras' steps_per_execution=n."""

import numpy as np
import pytest
from ipu_test_helpers import configure

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import bsp, hardware, ipu
from ipu_teach.not_simulated import NotSimulatedError


def _data(n=64, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    return x, ((x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0.5).astype(np.int32))


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential(
        [keras.layers.Dense(8, activation="relu", input_shape=(6,)), keras.layers.Dense(3, activation="softmax")]
    )


@tf.function(experimental_compile=True)
def training_loop(iterator, outfeed, model, optimizer, steps):
    for _ in tf.range(steps):
        features, labels = next(iterator)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, model(features, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        outfeed.enqueue(loss)


def _run_loop(steps, calls, infeed=True, dataset_iterators=True):
    """Trains on the IPU with ``calls`` calls of ``steps`` infeed steps (or, without an infeed, one batch per
    call as arguments); returns the model, the outfeed and the function's timing."""
    configure(1)
    x, y = _data()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True).repeat()
    strategy = ipu.ipu_strategy.IPUStrategy(enable_dataset_iterators=dataset_iterators)
    with strategy.scope():
        model, optimizer = _model(), keras.optimizers.SGD(0.1)
        outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
        if infeed:
            feed = ipu.ipu_infeed_queue.IPUInfeedQueue(dataset)
            for _ in range(calls):
                strategy.run(training_loop, args=[feed, outfeed, model, optimizer, steps])
        else:
            for (features, labels), _ in zip(dataset, range(calls)):
                strategy.run(training_step, args=[features, labels, model, optimizer])
    return model, outfeed, ipu.custom_loop.timings()["training_loop" if infeed else "training_step"]


@tf.function
def training_step(features, labels, model, optimizer):
    with tf.GradientTape() as tape:
        loss = keras.losses.SparseCategoricalCrossentropy()(labels, model(features, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def _keras_fit(steps_per_execution, epochs=1):
    configure(1)
    x, y = _data()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = _model()
        model.compile(
            keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", steps_per_execution=steps_per_execution
        )
        model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0)
    return model


def test_a_custom_loop_on_the_ipu_trains_as_fit_does(capsys):
    model, outfeed, timing = _run_loop(steps=4, calls=2)
    fitted = _keras_fit(4)
    for mine, theirs in zip(model.get_weights(), fitted.get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    losses = outfeed.dequeue()
    assert losses.shape == (8,) and losses.dtype == np.float32
    assert (timing.calls, timing.steps) == (2, 8)


def test_an_infeed_loop_of_n_steps_costs_on_the_device_as_steps_per_execution_n(capsys):
    _, _, timing = _run_loop(steps=4, calls=2)
    loop = timing.executable
    keras_executable = _keras_fit(4).get_ipu_executable("train")
    assert loop.steps_per_execution == 4 and loop.graph.mode == "train"
    # the same program, but for the loss metric that fit computes in every step (this loop keeps no metric)
    fit = keras_executable.timeline
    metric_rows = np.array([label.startswith("metrics/") for label in fit.labels])
    assert metric_rows.any() and not any(label.startswith("metrics/") for label in loop.timeline.labels)
    metric_cycles = int(fit.counts[metric_rows] @ fit.superstep_cycles()[metric_rows])
    assert loop.timeline.total_cycles() == fit.total_cycles() - metric_cycles
    # the host's call is the custom loop's, not Keras' (no callbacks or progress bar)
    assert loop.seconds_per_execution - loop.timeline.seconds() == pytest.approx(
        hardware.HOST.execution_seconds("custom_loop")
    )
    assert loop.compile_seconds < keras_executable.compile_seconds  # fewer compute sets to compile


def test_the_program_is_compiled_once_per_trace_and_each_call_pays_its_execution(capsys):
    _, _, timing = _run_loop(steps=4, calls=3)
    out = capsys.readouterr().out
    assert (
        out.count("INFO:ipu_teach:Compiled `training_loop` for the IPU (a custom loop, 4 step(s) per call, training)")
        == 1
    )
    assert timing.compile_seconds == timing.executable.compile_seconds
    assert timing.seconds == pytest.approx(timing.compile_seconds + 3 * timing.executable.seconds_per_execution)


def test_without_an_infeed_each_step_is_a_call_and_costs_more_per_step(capsys):
    model, _, one_per_call = _run_loop(steps=1, calls=8, infeed=False)
    for mine, theirs in zip(model.get_weights(), _keras_fit(4).get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    _, _, looped = _run_loop(steps=8, calls=1)
    assert one_per_call.executable.steps_per_execution == 1
    per_step_one = one_per_call.executable.seconds_per_execution
    per_step_looped = looped.executable.seconds_per_execution / 8
    assert per_step_one > 3 * per_step_looped  # the host's call, paid once per step instead of once per 8


def test_a_dataset_iterator_given_to_run_is_an_infeed_unless_dataset_iterators_are_off(capsys):
    configure(1)
    x, y = _data()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True).repeat()
    for enabled, steps in ((True, 4), (False, 1)):
        strategy = ipu.ipu_strategy.IPUStrategy(enable_dataset_iterators=enabled)
        with strategy.scope():
            model = _model()
            strategy.run(
                training_loop,
                args=[iter(dataset), ipu.ipu_outfeed_queue.IPUOutfeedQueue(), model, keras.optimizers.SGD(), 4],
            )
        assert ipu.custom_loop.timings()["training_loop"].executable.steps_per_execution == steps


def test_an_inference_function_has_no_backward_pass_and_streams_its_outfeed(capsys):
    configure(1)
    x, _ = _data()
    strategy = ipu.ipu_strategy.IPUStrategy()
    outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
    with strategy.scope():
        model = _model()
        infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(
            tf.data.Dataset.from_tensor_slices(x).batch(8, drop_remainder=True)
        )

        @tf.function
        def predict(steps):
            for _ in tf.range(steps):
                outfeed.enqueue(model(next(infeed)))

        strategy.run(predict, args=[2])
    executable = ipu.custom_loop.timings()["predict"].executable
    assert executable.graph.mode == "predict" and executable.graph.backward == []
    assert executable.graph.output_bytes == 8 * 3 * 4  # each step's predictions go to the host
    np.testing.assert_allclose(outfeed.dequeue(), model.predict(x[:16], batch_size=8, verbose=0).reshape(2, 8, 3))


def test_outfeed_modes_and_an_empty_dequeue():
    last = ipu.ipu_outfeed_queue.IPUOutfeedQueue(outfeed_mode=ipu.ipu_outfeed_queue.IPUOutfeedMode.LAST)
    every = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
    for step in range(3):
        last.enqueue([np.float32(step), np.full(2, step)])
        every.enqueue({"step": np.float32(step)})
    value, array = last.dequeue()
    assert value == 2.0 and list(array) == [2, 2]
    np.testing.assert_array_equal(every.dequeue()["step"], [0.0, 1.0, 2.0])
    assert every.dequeue()["step"].shape == (0,) and last.dequeue()[0] == 2.0  # nothing new since
    numbers = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
    numbers.enqueue([1.5, 7, 2**40, True])  # TensorFlow's dtypes for Python numbers: 64 bits only where needed
    assert [a.dtype for a in numbers.dequeue()] == [np.float32, np.int32, np.int64, np.bool_]
    with pytest.raises(ValueError, match="Trying to dequeue an outfeed which has not been enqueued"):
        ipu.ipu_outfeed_queue.IPUOutfeedQueue().dequeue()
    with pytest.raises(ValueError, match="outfeed_mode must be ipu.ipu_outfeed_queue.IPUOutfeedMode.ALL or .LAST"):
        ipu.ipu_outfeed_queue.IPUOutfeedQueue(outfeed_mode="last")
    with pytest.raises(TypeError, match="IPUInfeedQueue: expected a tf.data.Dataset, got a int"):
        ipu.ipu_infeed_queue.IPUInfeedQueue(3)
    partial = tf.data.Dataset.from_tensor_slices((np.ones((10, 3), np.float32), np.ones(10))).batch(4)
    with pytest.raises(
        ValueError, match=r"Output shape \(None, 3\) is not fully defined. If using tf.Dataset.batch, set"
    ):
        ipu.ipu_infeed_queue.IPUInfeedQueue(partial)
    with pytest.raises(ValueError, match="prefetch_depth must be greater than zero and less than 256, but it is 0"):
        ipu.ipu_infeed_queue.IPUInfeedQueue(partial.unbatch().batch(2, drop_remainder=True), prefetch_depth=0)


def test_what_the_host_dequeues_are_eager_tensors_read_with_numpy():
    # graphcore/tensorflow docs outfeed_example.py prints `loss.numpy()` of each element it iterates
    outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
    for step in range(2):
        outfeed.enqueue({"loss": np.float32(step)})
    assert [element["loss"].numpy() for element in outfeed] == [0.0, 1.0]
    outfeed.enqueue([np.ones(2)])
    (stacked,) = outfeed.dequeue()
    assert isinstance(stacked, tf.Tensor) and stacked.numpy().tolist() == [[1.0, 1.0]]


def test_graphcores_other_names_of_the_strategy_and_the_configuration():
    # ipu_strategy.py: IPUStrategy = IPUStrategyV1; utils.py imports IPUConfig and DeviceConnectionType from config
    assert ipu.ipu_strategy.IPUStrategyV1 is ipu.ipu_strategy.IPUStrategy
    assert ipu.utils.IPUConfig is ipu.config.IPUConfig
    assert ipu.utils.DeviceConnectionType.PRE_COMPILE is ipu.config.DeviceConnectionType.PRE_COMPILE


def test_a_custom_loop_on_several_replicas_says_it_is_not_simulated():
    configure(2)
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(NotSimulatedError, match="IPUStrategy.run on 2 replicas .* set auto_select_ipus = 1"):
        strategy.run(lambda: None)


def test_run_needs_a_configured_system_and_gather_is_still_not_simulated():
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(RuntimeError, match="The IPU system has not been configured"):
        strategy.run(lambda: None)
    with pytest.raises(NotSimulatedError, match="IPUStrategy.gather is not simulated"):
        strategy.gather  # noqa: B018 (the attribute lookup is what fails)


def test_the_run_of_a_script_ends_with_the_simulated_time_of_its_custom_loops(tmp_path, capsys):
    from ipu_teach.tensorflow.runner import run_script

    script = tmp_path / "loop.py"
    script.write_text(
        "import numpy as np\n"
        "import tensorflow as tf\n"
        "from tensorflow.python import ipu\n"
        "cfg = ipu.config.IPUConfig()\n"
        "cfg.auto_select_ipus = 1\n"
        "cfg.configure_ipu_system()\n"
        "with tf.device('cpu'):\n"
        "    a = tf.constant([[1.0, 2.0]])\n"
        "with ipu.scopes.ipu_scope('/device:IPU:0'):\n"
        "    pass\n"
        "strategy = ipu.ipu_strategy.IPUStrategy()\n"
        "with strategy.scope():\n"
        "    for _ in range(3):\n"
        "        strategy.run(tf.function(lambda a: a * 2), args=[a])\n"
    )
    assert run_script(script) == 0
    lines = capsys.readouterr().out.splitlines()
    timing = ipu.custom_loop.timings()["<lambda>"]
    per_step_ms = timing.executable.seconds_per_execution * 1e3
    assert lines[-1] == (
        f"ipu-teach: `<lambda>` ran 3 call(s), 3 step(s) on the simulated IPU: {timing.seconds:.2f} s simulated "
        f"(compile {timing.compile_seconds:.1f} s, then {per_step_ms:.3f} ms per step)"
    )
    with pytest.raises(ValueError, match="ipu_scope: expected an IPU device name such as '/device:IPU:0', got 'cpu'"):
        with ipu.scopes.ipu_scope("cpu"):
            pass


def test_optimizer_minimize_in_a_custom_loop_trains_as_the_tape_does(capsys):
    configure(1)
    x, y = _data()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model, optimizer = _model(), keras.optimizers.SGD(0.1)
        loss_fn = keras.losses.SparseCategoricalCrossentropy()

        @tf.function
        def minimize_step(features, labels):
            optimizer.minimize(lambda: loss_fn(labels, model(features, training=True)), model.trainable_variables)

        for start in range(0, 32, 8):
            strategy.run(minimize_step, args=[x[start : start + 8], y[start : start + 8]])
    tape_model, _, _ = _run_loop(steps=1, calls=4, infeed=False)
    for mine, theirs in zip(model.get_weights(), tape_model.get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    minimize_program = ipu.custom_loop.timings()["minimize_step"].executable
    tape_program = ipu.custom_loop.timings()["training_step"].executable
    assert minimize_program.graph.mode == "train" and len(minimize_program.graph.update) == 4  # 2 kernels, 2 biases
    # the same step; the tape's function also returns its loss to the host, once per call
    returned_loss = bsp.CostEngine(bsp.DeviceToHost(4), tape_program.graph.spec).run().seconds()
    assert tape_program.graph.result_bytes == 4 and minimize_program.graph.result_bytes == 0
    assert minimize_program.timeline.seconds() + returned_loss == pytest.approx(
        tape_program.timeline.seconds(), rel=1e-12
    )
    with pytest.raises(ValueError, match="SGD.minimize: `tape` is required when a `Tensor` loss is passed"):
        optimizer.minimize(loss_fn(y[:8], model(x[:8])), model.trainable_variables)


def _fit_with_accuracy(steps_per_execution):
    """Keras' fit of the loop's model, streaming its loss and accuracy out at each step (8 bytes)."""
    configure(1)
    x, y = _data()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = _model()
        model.compile(
            keras.optimizers.SGD(0.1),
            "sparse_categorical_crossentropy",
            metrics=["accuracy"],
            steps_per_execution=steps_per_execution,
        )
        model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    return model.get_ipu_executable("train")


def _train_calls(function, steps_per_call, calls, infeed):
    """``calls`` calls of ``function(batches, model, optimizer, metrics, outfeed)`` on the IPU, each given an
    infeed of the batches (``infeed``) or one batch as arrays, ``metrics`` a mean of the loss and an accuracy (as
    fit's loss tracker and compiled accuracy); returns the function's timing and the outfeed."""
    configure(1)
    x, y = _data()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True).repeat()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        model, optimizer = _model(), keras.optimizers.SGD(0.1)
        metrics = keras.metrics.Mean(), keras.metrics.SparseCategoricalAccuracy()
        outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
        batches = iter(dataset) if infeed else iter(dataset.take(calls))
        for _ in range(calls):
            args = [batches, steps_per_call] if infeed else list(next(batches))
            strategy.run(function, args=[*args, model, optimizer, metrics, outfeed])
    return ipu.custom_loop.timings()[function.__name__], outfeed


def _train_step(features, labels, model, optimizer, metrics):
    """One training step that keeps its loss's mean and its accuracy in ``metrics``: their results, float32."""
    with tf.GradientTape() as tape:
        predictions = model(features, training=True)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, predictions))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    mean_loss, accuracy = metrics
    return [mean_loss(loss), accuracy(labels, predictions)]


@tf.function(jit_compile=True)
def one_step(features, labels, model, optimizer, metrics, outfeed):
    return _train_step(features, labels, model, optimizer, metrics)


@tf.function(jit_compile=True)
def loop_with_outfeed(iterator, steps, model, optimizer, metrics, outfeed):
    for _ in tf.range(steps):
        outfeed.enqueue(_train_step(*next(iterator), model, optimizer, metrics))


@tf.function(jit_compile=True)
def loop_without_outfeed(iterator, steps, model, optimizer, metrics, outfeed):
    for _ in tf.range(steps):
        _train_step(*next(iterator), model, optimizer, metrics)


def test_a_call_per_batch_is_fit_with_one_step_per_execution_on_the_device_and_costs_the_loops_host_call(capsys):
    timing, _ = _train_calls(one_step, 1, calls=4, infeed=False)
    keras_executable = _fit_with_accuracy(1)
    mine = timing.executable
    # what it returns (the float32 results of its loss's mean and accuracy: 8 bytes) goes to the host once per
    # call, as fit's outfeed does; the metrics it updates are on the device, as fit's loss tracker and accuracy
    assert (mine.graph.result_bytes, mine.graph.output_bytes, keras_executable.graph.output_bytes) == (8, 0, 8)
    assert mine.timeline.seconds() == pytest.approx(keras_executable.timeline.seconds(), rel=1e-12)
    host_difference = hardware.HOST.execution_seconds("keras") - hardware.HOST.execution_seconds("custom_loop")
    assert keras_executable.seconds_per_execution - mine.seconds_per_execution == pytest.approx(host_difference)
    assert (timing.calls, timing.steps, timing.executable.steps_per_execution) == (4, 4, 1)


def test_n_steps_of_an_infeed_loop_with_its_outfeed_are_fit_with_steps_per_execution_n_on_the_device(capsys):
    timing, outfeed = _train_calls(loop_with_outfeed, 4, calls=2, infeed=True)
    losses, accuracies = outfeed.dequeue()
    assert losses.shape == accuracies.shape == (8,) and accuracies.dtype == np.float32  # a metric's result: float32
    keras_executable = _fit_with_accuracy(4)
    mine = timing.executable
    assert (mine.graph.output_bytes, mine.graph.result_bytes) == (8, 0)
    # each metric it updates is costed once per step, as fit's loss tracker and accuracy (in each step's first)
    metric_rows = [label for label in mine.timeline.labels if label.startswith("metrics/")]
    fit_rows = [label for label in keras_executable.timeline.labels if label.startswith("metrics/")]
    assert len(metric_rows) == len(fit_rows) and fit_rows  # fit's are named loss and accuracy, as it logs them
    assert {label.split("/")[1] for label in metric_rows} == {"mean", "sparse_categorical_accuracy"}
    assert mine.timeline.seconds() == pytest.approx(keras_executable.timeline.seconds(), rel=1e-12)
    # per step: the host's call of the loop shared by the n steps, plus the same device step as fit's
    device_step = keras_executable.timeline.seconds() / 4
    per_step = mine.seconds_per_execution / 4
    assert per_step == pytest.approx(hardware.HOST.execution_seconds("custom_loop") / 4 + device_step, rel=1e-12)
    per_call, _ = _train_calls(one_step, 1, calls=2, infeed=False)
    assert per_call.executable.seconds_per_execution - per_step == pytest.approx(
        hardware.HOST.execution_seconds("custom_loop") * 3 / 4, rel=1e-9
    )


def test_a_loop_that_enqueues_nothing_has_no_outfeed_and_saves_its_host_sync(capsys):
    with_outfeed, _ = _train_calls(loop_with_outfeed, 4, calls=1, infeed=True)
    without, _ = _train_calls(loop_without_outfeed, 4, calls=1, infeed=True)
    labels = [row.split()[0] for row in without.executable.timeline.summary().splitlines()[1:-1]]
    assert "infeed" in labels and "outfeed" not in labels
    outfeed = bsp.CostEngine(bsp.DeviceToHost(8), with_outfeed.executable.graph.spec).run().seconds()
    assert without.executable.timeline.seconds() + 4 * outfeed == pytest.approx(
        with_outfeed.executable.timeline.seconds(), rel=1e-12
    )


def test_a_custom_loop_writes_a_profile_report_of_what_was_timed(tmp_path, capsys):
    from ipu_teach import profiling

    with profiling.auto_report(tmp_path / "report"):
        timing, _ = _train_calls(loop_with_outfeed, 4, calls=2, infeed=True)
    report = profiling.open_report(profiling.last_report_path())
    assert profiling.last_report_path().startswith(str(tmp_path / "report" / "loop_with_outfeed_train_"))
    assert sum(report.execution.cycles_by_kind().values()) == timing.executable.timeline.total_cycles()
    assert len(profiling.written_reports()) >= 1 and "device->host" in report.execution.cycles_by_kind()


def test_what_run_returns_holds_values_without_the_ops_that_made_them(capsys):
    configure(1)
    x, y = _data()
    with ipu.ipu_strategy.IPUStrategy().scope() as strategy:
        returned = strategy.run(training_step, args=[x[:8], y[:8], _model(), keras.optimizers.SGD(0.1)])
        both = strategy.run(tf.function(lambda a: {"sum": tf.reduce_sum(a), "kept": [a, None]}), args=[x[:8]])
    # a list of returned losses would otherwise keep every step's activations alive (the ops' inputs)
    assert returned.node is None and not returned.requires_grad and returned.shape == ()
    assert np.isfinite(float(returned))
    assert getattr(both["sum"], "node", None) is None
    assert float(both["sum"]) == pytest.approx(float(np.sum(x[:8])), rel=1e-6)
    assert both["kept"][1] is None and np.array_equal(np.asarray(both["kept"][0]), x[:8])
