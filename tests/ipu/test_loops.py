"""``ipu.loops.repeat`` and ``while_loop`` (graphcore/tensorflow tensorflow/python/ipu/loops.py): the body called on
the loop-carried values and each infeed element, every iteration a step of the device loop ``strategy.run`` costs,
and Graphcore's errors."""

import numpy as np
import pytest
from ipu_test_helpers import configure

import ipu_teach.tensorflow as tf
from ipu_teach import ipu


def _infeed(element):
    return ipu.ipu_infeed_queue.IPUInfeedQueue(tf.data.Dataset.from_tensors(element).repeat())


def test_repeat_feeds_each_infeed_element_to_the_body_and_each_iteration_is_a_device_step():
    # the IPU TF2 guide's perf_training_example: body(counter, x1, x2) over an infeed of pairs, outfeeding a dict
    configure(1)
    infeed = _infeed((np.full(4, 3.0, np.float32), np.ones(4, np.float32)))
    outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()

    def body(counter, x1, x2):
        outfeed.enqueue({"d1": x1 + x2, "d2": x1 - x2})
        return counter + 1

    @tf.function(jit_compile=True)
    def my_net():
        return ipu.loops.repeat(10, body, [0], infeed)

    with ipu.ipu_strategy.IPUStrategy().scope():
        count = ipu.ipu_strategy.IPUStrategy().run(my_net)
    assert count.numpy() == 10 and count.dtype == np.int32  # a Python int carried as TensorFlow's int32
    result = outfeed.dequeue()
    assert result["d1"].shape == (10, 4) and np.all(result["d2"] == 2.0)
    timing = ipu.custom_loop.timings()["my_net"]
    assert (timing.calls, timing.steps) == (1, 10)


def test_a_dict_element_is_given_as_keywords_and_while_loop_stops_on_its_condition():
    infeed = _infeed({"x": np.float32(2.0)})
    total = ipu.loops.while_loop(lambda total: total < 7.0, lambda total, x: total + x, [np.float32(0.0)], infeed)
    assert float(total) == 8.0  # 0, 2, 4, 6 pass the condition; 8 stops it
    assert ipu.loops.repeat(3, lambda: None) is None  # a loop carrying nothing


def test_a_body_that_cannot_take_the_values_or_changes_their_types_is_refused_as_graphcore_refuses_it():
    infeed = _infeed((np.float32(1.0), np.float32(2.0)))
    with pytest.raises(TypeError, match="You specified 1 inputs: .* and 2 additional inputs from infeed"):
        ipu.loops.repeat(2, lambda counter, x: counter, [0], infeed)
    with pytest.raises(TypeError, match=r"Mismatch between input types and output types for loop body: \['int32'\]"):
        ipu.loops.repeat(2, lambda counter: counter + 0.5, [0])
