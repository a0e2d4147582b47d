"""Graphcore's IPU methods reach ``keras.Model`` through Keras' extension point: which models have them,
that each model keeps its own options, and what a model without them says."""

import subprocess
import sys

import pytest
from helpers.models import compile_model
from ipu_test_helpers import build, configure, data

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.ipu.keras_extensions import ExtensionOptions, ModelExtension, options_of
from ipu_teach.keras.engine import extensions
from ipu_teach.keras.ipu import model_methods


def test_every_model_built_after_the_import_has_the_methods_in_a_scope_or_not():
    with ipu.ipu_strategy.IPUStrategy().scope():
        in_scope = build()
    outside = build()
    sequential = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    for model in (in_scope, outside, sequential):
        assert isinstance(model, ModelExtension)
        for name in model_methods.MODEL_METHODS:
            assert callable(getattr(model, name))


def test_the_announced_names_are_exactly_the_extensions_methods():
    public = {name for name in vars(ModelExtension) if not name.startswith("_")}
    assert public == set(model_methods.MODEL_METHODS)
    assert extensions.extensions_for(keras.Model) == (ModelExtension,)


def test_options_set_on_one_model_do_not_leak_to_another():
    a, b = build(), build()
    a.set_gradient_accumulation_options(
        gradient_accumulation_steps_per_replica=4, gradient_accumulation_reduction_method="mean"
    )
    a.set_pipelining_options(gradient_accumulation_steps_per_replica=8, device_mapping=[0, 0])
    a.set_infeed_queue_options(prefetch_depth=3)
    a.set_replication_options(replicated_metric_reduction_method="sum")
    assert options_of(b) == ExtensionOptions()
    assert options_of(a) is options_of(a)  # the model's own, not a copy
    assert (
        options_of(a).gradient_accumulation_steps_per_replica,
        options_of(a).infeed_queue_options,
        options_of(a).pipelining["device_mapping"],
    ) == (4, {"prefetch_depth": 3}, [0, 0])
    assert options_of(a).replicated_metric_reduction_method == "sum"


def test_a_models_accumulation_option_is_the_one_its_executable_uses(capsys):
    configure(1)
    x, y = data(64)
    with ipu.ipu_strategy.IPUStrategy().scope():
        accumulating, plain = compile_model(build(), 4), compile_model(build(), 4)
        accumulating.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
        accumulating.fit(x, y, batch_size=8, epochs=1, verbose=0)
        plain.fit(x, y, batch_size=8, epochs=1, verbose=0)
    setups = [model.device_executor.prepared["train"].setup for model in (accumulating, plain)]
    assert [setup.accumulation for setup in setups] == [4, 1]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_with_keras_alone_a_model_says_to_import_the_ipu():
    done = _run(
        "import ipu_teach.keras as keras\n"
        "model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])\n"
        "model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)\n"
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "AttributeError: 'Sequential' object has no attribute 'set_pipelining_options': it is one of the IPU "
        "methods of Graphcore's Keras, which a model gains when it is built after `from ipu_teach import ipu` "
        "(on a real IPU system: `from tensorflow.python import ipu`, with the model built in an IPUStrategy scope)"
    )
    assert "ipu_teach.ipu" not in _run("import sys, ipu_teach.keras\nprint(sorted(sys.modules))").stdout


def test_a_model_built_before_the_import_says_to_build_it_again_and_still_runs_on_the_ipu():
    done = _run(
        "import numpy as np\n"
        "import ipu_teach.keras as keras\n"
        "model = keras.Sequential([keras.layers.Dense(2)], name='early')\n"  # no weights yet: may go to the IPU
        "from ipu_teach import ipu\n"
        "config = ipu.config.IPUConfig()\n"
        "config.auto_select_ipus = 1\n"
        "config.configure_ipu_system()\n"
        "with ipu.ipu_strategy.IPUStrategy().scope():\n"
        "    model.compile('sgd', 'mse')\n"
        "    model.fit(np.ones((8, 3), np.float32), np.ones((8, 2), np.float32), batch_size=4, verbose=0)\n"
        "print('trained on', type(model.device_executor).__name__)\n"
        "model.get_ipu_executable()\n"
    )
    assert "trained on IPUExecutor" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == (
        "AttributeError: 'Sequential' object has no attribute 'get_ipu_executable': `get_ipu_executable` comes from "
        "ipu_teach.ipu.keras_extensions.ModelExtension, registered after model `early` was built; a model gains an "
        "extension's methods when it is built, so build the model again"
    )


@pytest.mark.parametrize(
    "method, kwargs, message",
    [
        (
            "set_gradient_accumulation_options",
            {"gradient_accumulation_steps_per_replica": 0},
            "gradient_accumulation_steps_per_replica must be a positive integer, got 0",
        ),
        (
            "set_pipelining_options",
            {"gradient_accumulation_steps_per_replica": True},
            "gradient_accumulation_steps_per_replica must be a positive integer, got True",
        ),
    ],
)
def test_a_refused_option_leaves_the_models_options_as_they_were(method, kwargs, message):
    model = build()
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(**kwargs)
    assert options_of(model) == ExtensionOptions()
