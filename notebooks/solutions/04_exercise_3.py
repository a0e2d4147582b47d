# Effective batch of the 2-stage model on 16 IPUs, micro-batch 32, accumulation 16:
# 16 IPUs / 2 per pipeline = 8 replicas, so 32 x 16 x 8 = 4,096.
# The notebook's IPUs are back afterwards, and its names are left alone.
import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu

with ipu.system.restored_afterwards():
    sixteen = ipu.config.IPUConfig()
    sixteen.auto_select_ipus = 16
    sixteen.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE   # compile only: fast
    sixteen.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        pipeline_inputs = keras.Input(shape=(28, 28, 1))
        with keras.ipu.PipelineStage(0):
            hidden = keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu")(pipeline_inputs)
        with keras.ipu.PipelineStage(1):
            hidden = keras.layers.Flatten()(hidden)
            pipeline_outputs = keras.layers.Dense(10, activation="softmax")(hidden)
        pipelined_model = keras.Model(pipeline_inputs, pipeline_outputs)
        pipelined_model.set_pipelining_options(gradient_accumulation_steps_per_replica=16)
        pipelined_model.compile(optimizer="sgd", loss="categorical_crossentropy", steps_per_execution=16)
        samples = 32 * 16 * 8
        pipelined_model.fit(np.zeros((samples, 28, 28, 1), "float32"),
                            np.eye(10, dtype="float32")[np.zeros(samples, int)], batch_size=32, verbose=0)
