# Exercise 5 (solution): a custom evaluation loop over the 40 test batches in one call, its loss and accuracy
# kept in metric objects. It computes what evaluate computes, so loss and accuracy are evaluate's, and its
# step runs the same ops (no backward pass, no weight update). But it enqueues nothing, so it has no outfeed:
# each step saves the host sync and the transfer that evaluate pays to stream its loss and accuracy back.
# The notebook's IPU runs again afterwards, and its names (model, outfeed_queue...) are left alone.
import numpy as np

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn   # the tutorial's model_fn, as written out in the notebook

(_, _), (test_images, test_labels) = keras.datasets.mnist.load_data()
test_images = np.expand_dims(test_images.astype("float32") / 255, -1)
test_labels = keras.utils.to_categorical(test_labels, 10)
test_steps = len(test_images) // 64                # 2,560 images: 40 batches


@tf.function(jit_compile=True)
def evaluation_loop(iterator, steps, model, mean_loss, accuracy):
    for _ in tf.range(steps):
        images, labels = next(iterator)
        predictions = model(images, training=False)
        mean_loss.update_state(tf.reduce_mean(keras.losses.categorical_crossentropy(labels, predictions)))
        accuracy.update_state(labels, predictions)


with ipu.system.restored_afterwards():
    one_ipu = ipu.config.IPUConfig()
    one_ipu.auto_select_ipus = 1
    one_ipu.configure_ipu_system()
    evaluation_strategy = ipu.ipu_strategy.IPUStrategy()
    with evaluation_strategy.scope():
        evaluated = keras.Model(*tutorial_model_fn())
        test_loss, test_accuracy = keras.metrics.Mean(), keras.metrics.CategoricalAccuracy()
        test_batches = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(64, drop_remainder=True)
        evaluation_strategy.run(
            evaluation_loop, args=[iter(test_batches), test_steps, evaluated, test_loss, test_accuracy]
        )
        evaluated.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=test_steps)
        keras_loss, keras_accuracy = evaluated.evaluate(test_images, test_labels, batch_size=64, verbose=0)

loop_program = ipu.custom_loop.timings()["evaluation_loop"].executable
keras_program = evaluated.get_ipu_executable("test")
loop_step_us = loop_program.timeline.seconds() / test_steps * 1e6
keras_step_us = keras_program.timeline.seconds() / test_steps * 1e6
print(f"custom loop: loss {float(test_loss.result()):.4f}, accuracy {float(test_accuracy.result()):.4f}")
print(f"evaluate:    loss {keras_loss:.4f}, accuracy {keras_accuracy:.4f}")
print(f"device time per step: custom loop {loop_step_us:.1f} us, evaluate {keras_step_us:.1f} us (simulated)")
print(f"the loop saves {keras_step_us - loop_step_us:.1f} us per step: evaluate's outfeed of "
      f"{keras_program.graph.output_bytes} bytes (loss and accuracy), a host sync and a transfer per step")
