"""An IPU rule broken in a notebook shows a short traceback: the user's call, then the rule that was broken.

The frames between them (fit, the executor's preparation) set ``__tracebackhide__``, which IPython (the
notebook's kernel) and pytest honour: IPython says "[... skipping hidden N frame]" in their place.
"""

import re

import numpy as np
import pytest
from ipu_test_helpers import configure, data, ipu_model
from IPython.core.ultratb import AutoFormattedTB

import ipu_teach.keras as keras
from ipu_teach import ipu, schedules


def as_a_notebook_shows_it(error):
    """The traceback as IPython's kernel formats it (Context mode, without colours)."""
    return AutoFormattedTB(mode="Context", theme_name="nocolor").text(type(error), error, error.__traceback__)


def frames(text):
    """The (file, function) of each frame the traceback shows."""
    return re.findall(r"^File \S*?([\w.]+\.py):\d+, in (\w+)", text, re.MULTILINE)


def test_a_partial_batch_shows_the_call_then_the_rule():
    configure(1)
    model = ipu_model()
    x, y = data(100)
    with pytest.raises(ipu.IPURuleError) as caught:
        model.fit(x, y, batch_size=16, verbose=0)
    text = as_a_notebook_shows_it(caught.value)
    assert frames(text) == [
        ("test_ipu_tracebacks.py", "test_a_partial_batch_shows_the_call_then_the_rule"),
        ("preparation.py", "fixed_batch_size"),
    ]
    assert "[... skipping hidden 3 frame]" in text  # fit, IPUExecutor.prepare, prepare
    assert text.rstrip().endswith("or use a Dataset with .batch(16, drop_remainder=True)")


def test_a_pipeline_schedule_rule_shows_the_call_then_the_rule():
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(4,))
        with keras.ipu.PipelineStage(0):
            hidden = keras.layers.Dense(4)(inputs)
        with keras.ipu.PipelineStage(1):
            outputs = keras.layers.Dense(2)(hidden)
        model = keras.Model(inputs, outputs)
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=6)  # Grouped needs a multiple of 4
        model.compile("sgd", "mse", steps_per_execution=6)
        with pytest.raises(schedules.PipelineScheduleError) as caught:
            model.fit(np.zeros((48, 4), np.float32), np.zeros((48, 2), np.float32), batch_size=8, verbose=0)
    text = as_a_notebook_shows_it(caught.value)
    assert [function for _, function in frames(text)] == [
        "test_a_pipeline_schedule_rule_shows_the_call_then_the_rule",
        "check_gradient_accumulation",
    ]
    assert "[... skipping hidden 5 frame]" in text
