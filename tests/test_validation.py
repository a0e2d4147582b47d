"""The shared checkers of ``ipu_teach/validation.py`` that settings use: a bad count or duration is a ValueError
naming the argument, as the settings' own checks raised before they were shared (issue 26)."""

import doctest
import re

import numpy as np
import pytest

from ipu_teach import ipu, poptorch, validation


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, np.bool_(True), "4", None, np.int64(0)])
def test_a_count_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match=rf"^workers must be a positive integer, got {re.escape(repr(bad))}$"):
        validation.positive_count(bad, "workers")
    assert validation.positive_count(7, "workers") == 7
    # a numpy integer (a shape's entry, an array's length) is a count as bsp.mapping.check_positive_count takes it
    assert type(validation.positive_count(np.int64(2), "workers")) is int


@pytest.mark.parametrize("bad", [-0.5, float("inf"), float("nan"), False, "1"])
def test_seconds_must_be_a_finite_number_at_least_zero(bad):
    with pytest.raises(ValueError, match=r"^call_seconds must be a number of seconds >= 0, got "):
        validation.seconds(bad, "call_seconds")
    assert validation.seconds(0, "call_seconds") == 0


@pytest.mark.parametrize("function", [validation.positive_count, validation.seconds])
def test_the_examples_run(function):
    finder = doctest.DocTestFinder(recurse=False)
    (test,) = finder.find(function, globs={"positive_count": validation.positive_count, "seconds": validation.seconds})
    assert doctest.DocTestRunner().run(test).failed == 0


def test_the_host_and_poptorch_name_the_argument_they_check():
    with pytest.raises(ValueError, match=r"^asynchronous_epoch_seconds: workers must be a positive integer, got 0$"):
        ipu.host.asynchronous_epoch_seconds(batches=3, call_seconds=0.01, batch_seconds=0.4, workers=0)
    with pytest.raises(ValueError, match=r"^asynchronous_epoch_seconds: batch_seconds must be a number of seconds"):
        ipu.host.asynchronous_epoch_seconds(batches=3, call_seconds=0.01, batch_seconds=-1, workers=2)
    with pytest.raises(ValueError, match=r"^deviceIterations must be a positive integer, got 0$"):
        poptorch.Options().deviceIterations(0)
