"""What of Graphcore's SDK stays unsimulated (PopDist, IPUEstimator, the popdist strategy) stops a script under
ipu-teach run with the not-simulated error naming it, never Python's bare ModuleNotFoundError."""

import sys

import pytest

from ipu_teach.not_simulated import NotSimulatedError, NotSimulatedImportError
from ipu_teach.tensorflow.import_map import TensorFlowImports


@pytest.mark.parametrize(
    "statement, shown",
    [
        ("import popdist", "popdist"),
        ("import popdist.tensorflow", "popdist"),
        ("from tensorflow.python.ipu.distributed import popdist_strategy", "tensorflow.python.ipu.distributed"),
        ("from tensorflow.python.ipu.ipu_estimator import IPUEstimator", "tensorflow.python.ipu.ipu_estimator"),
        ("from tensorflow.python.ipu import ipu_pipeline_estimator", "tensorflow.python.ipu.ipu_pipeline_estimator"),
    ],
)
def test_unsimulated_sdk_modules_raise_the_not_simulated_error(statement, shown):
    with TensorFlowImports():
        with pytest.raises(NotSimulatedImportError, match=f"^{shown} is not simulated by ipu-teach: ") as raised:
            exec(statement, {})
    assert not isinstance(raised.value, ModuleNotFoundError)
    assert "popdist" not in sys.modules  # nothing half-imported is left behind


def test_an_estimator_named_through_the_ipu_module_is_the_not_simulated_error():
    with TensorFlowImports():
        from tensorflow.python import ipu

        with pytest.raises(NotSimulatedError, match="^tensorflow.python.ipu.ipu_estimator is not simulated"):
            ipu.ipu_estimator  # noqa: B018 (the access is what raises)
