"""Custom training loops on the simulated IPU: strategy.run of a tf.function, infeeds and outfeeds. Numerics are
the CPU's; the cost is the executor's: one program per function and trace, a host call per call (the custom_loop
front end), and a device loop of n infeed steps costing as Keras' steps_per_execution=n."""

import numpy as np
import pytest
from ipu_test_helpers import configure

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import hardware, ipu
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
    assert loop.timeline.seconds() == pytest.approx(keras_executable.timeline.seconds(), rel=1e-12)
    # the host's call is the custom loop's, not Keras' (no callbacks or progress bar)
    assert loop.seconds_per_execution - loop.timeline.seconds() == pytest.approx(
        hardware.HOST.execution_seconds("custom_loop")
    )
    assert loop.compile_seconds == pytest.approx(keras_executable.compile_seconds)


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
    assert minimize_program.timeline.seconds() == pytest.approx(tape_program.timeline.seconds(), rel=1e-12)
    with pytest.raises(ValueError, match="SGD.minimize: `tape` is required when a `Tensor` loss is passed"):
        optimizer.minimize(loss_fn(y[:8], model(x[:8])), model.trainable_variables)
