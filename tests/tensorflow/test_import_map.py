"""The import mapping of ``ipu-teach run``: TensorFlow names resolve to ipu-teach, missing ones say so."""

import sys

import pytest

import ipu_teach.data.dataset
import ipu_teach.keras
from ipu_teach.not_simulated import NotSimulatedError, NotSimulatedImportError
from ipu_teach.tensorflow.import_map import ALIASES, TensorFlowImports

# Every TensorFlow name used by the Graphcore TF2 Keras examples looked at for this feature (graphcore/examples:
# tutorials/simple_applications/tensorflow2/mnist, tutorials/tech_notes_code/model_parallelism/tensorflow2_code
# (5 scripts); graphcore/tensorflow: docs/keras_tf2_example1-9.py), as module path + attribute.
GRAPHCORE_NAMES = [
    ("tensorflow", "__version__"),
    ("tensorflow", "float32"),
    ("tensorflow", "int32"),
    ("tensorflow", "cast"),
    ("tensorflow", "keras"),
    ("tensorflow", "newaxis"),
    ("tensorflow.random", "uniform"),
    ("tensorflow.data", "Dataset"),
    ("tensorflow.data.experimental", "AUTOTUNE"),
    ("tensorflow.keras", "Sequential"),
    ("tensorflow.keras", "Model"),
    ("tensorflow.keras.datasets.mnist", "load_data"),
    ("tensorflow.keras.layers", "Input"),
    ("tensorflow.keras.layers", "Flatten"),
    ("tensorflow.keras.layers", "Dense"),
    ("tensorflow.keras.layers", "Conv2D"),
    ("tensorflow.keras.losses", "SparseCategoricalCrossentropy"),
    ("tensorflow.keras.optimizers", "SGD"),
    ("tensorflow.keras.optimizers", "RMSprop"),
    ("tensorflow.keras.ipu", "PipelineStage"),
    ("tensorflow.python.ipu.keras", "PipelineStage"),
    ("tensorflow.python.data.ops.dataset_ops", "Dataset"),
    ("tensorflow.python.keras.datasets.mnist", "load_data"),
    ("tensorflow.python.ipu.utils", "move_variable_initialization_to_cpu"),
    ("tensorflow.python.ipu.config", "IPUConfig"),
    ("tensorflow.python.ipu.config", "SelectionOrder"),
    ("tensorflow.python.ipu.ipu_strategy", "IPUStrategy"),
    ("tensorflow.python.ipu.ops.pipelining_ops", "PipelineSchedule"),
]


@pytest.fixture
def tf_imports():
    with TensorFlowImports():
        yield


def _resolve(module, attribute):
    __import__(module)
    return getattr(sys.modules[module], attribute)


@pytest.mark.parametrize("module, attribute", GRAPHCORE_NAMES)
def test_every_tensorflow_name_graphcores_examples_use_resolves(tf_imports, module, attribute):
    assert _resolve(module, attribute) is not None or attribute == "newaxis"


def test_names_are_ipu_teachs_own_objects(tf_imports):
    import keras
    import tensorflow as tf
    from tensorflow.keras.layers import Dense
    from tensorflow.python.data.ops.dataset_ops import Dataset

    assert Dense is ipu_teach.keras.layers.Dense and Dataset is ipu_teach.data.dataset.Dataset
    assert tf.keras.Model is keras.Model is ipu_teach.keras.Model
    assert tf.__version__ == "2.6.3"


def test_every_alias_imports(tf_imports):
    for name in ALIASES:
        __import__(name)
        assert sys.modules[name].__name__ == name


@pytest.mark.parametrize(
    "statement, shown",
    [
        ("from tensorflow.keras.layers import ConvLSTM2D", "tf.keras.layers.ConvLSTM2D"),
        ("import tensorflow.keras.applications.efficientnet", "tf.keras.applications.efficientnet"),
        ("from tensorflow.python.ipu import horovod", "tensorflow.python.ipu.horovod"),
        ("import tensorflow.contrib", "tf.contrib"),
    ],
)
def test_a_missing_module_or_imported_name_is_named_as_not_simulated(tf_imports, statement, shown):
    with pytest.raises(NotSimulatedImportError, match=f"^{shown} is not simulated by ipu-teach: "):
        exec(statement, {})


@pytest.mark.parametrize(
    "expression, shown",
    [
        ("tf.linalg.svd", "tf.linalg.svd"),
        ("tf.TensorArray", "tf.TensorArray"),
        ("tf.keras.layers.ConvLSTM2D", "tf.keras.layers.ConvLSTM2D"),
        ("keras.layers.ConvLSTM2D", "keras.layers.ConvLSTM2D"),
        ("tf.data.Dataset.range(3).interleave", "tf.data.Dataset.interleave"),
    ],
)
def test_a_missing_attribute_is_named_as_not_simulated(tf_imports, expression, shown):
    import keras
    import tensorflow as tf

    with pytest.raises(NotSimulatedError, match=f"^{shown} is not simulated by ipu-teach: "):
        eval(expression, {"tf": tf, "keras": keras})
    assert not hasattr(tf.keras.layers, "ConvLSTM2D")  # still an AttributeError to hasattr/getattr with a default


def test_a_misspelled_name_suggests_the_real_one(tf_imports):
    import tensorflow as tf

    with pytest.raises(NotSimulatedError, match="Did you mean tf.reduce_mean"):
        tf.reduce_meen  # noqa: B018 (the access is what raises)


def test_importing_a_class_as_a_module_is_pythons_error(tf_imports):
    with pytest.raises(ModuleNotFoundError, match="No module named 'tensorflow.keras.Model'"):
        __import__("tensorflow.keras.Model")


def test_the_mapping_is_only_installed_inside_the_context_and_puts_back_what_was_there():
    sentinel = object()
    sys.modules["keras"] = sentinel
    try:
        finders = list(sys.meta_path)
        with TensorFlowImports():
            import keras

            assert keras is not sentinel and keras.Model is ipu_teach.keras.Model
        assert sys.modules["keras"] is sentinel and sys.meta_path == finders
        assert not any(name == "tensorflow" or name.startswith("tensorflow.") for name in sys.modules)
    finally:
        del sys.modules["keras"]


def test_importing_ipu_teach_installs_nothing():
    import subprocess

    code = (
        "import sys, ipu_teach, ipu_teach.keras, ipu_teach.ipu, ipu_teach.tensorflow\n"
        "assert not any('import_map' in type(f).__module__ for f in sys.meta_path)\n"
        "try:\n    import tensorflow\nexcept ImportError:\n    print('no tensorflow')\n"
        "else:\n    assert 'ipu_teach' not in repr(tensorflow)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
