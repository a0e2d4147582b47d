"""Inference with a Sequential model split over two IPUs by set_pipeline_stage_assignment, called
before the model is built, then predict with steps= on an infinite dataset."""

import numpy as np
import tensorflow as tf
from tensorflow.keras import layers
from tensorflow.python.data.ops.dataset_ops import Dataset
from tensorflow.python.ipu import config, ipu_strategy, utils

images = np.random.default_rng(3).uniform(size=(2, 8, 8, 3)).astype(np.float32)
dataset = Dataset.from_tensor_slices(images).batch(2, drop_remainder=True).cache().repeat()

cfg = config.IPUConfig()
cfg.auto_select_ipus = 2
cfg.configure_ipu_system()
utils.move_variable_initialization_to_cpu()

with ipu_strategy.IPUStrategy().scope():
    model = tf.keras.Sequential([layers.Conv2D(4, 1), layers.Conv2D(4, 1), layers.Flatten()])
    model.set_pipeline_stage_assignment([0, 1, 1])
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
    model.compile(steps_per_execution=4)
    out = model.predict(dataset, steps=4)
    print("predicted", out.shape)
    assert out.shape == (8, 8 * 8 * 4)
    np.testing.assert_allclose(out[:2], out[2:4], rtol=1e-6)  # the same cached batch each step
