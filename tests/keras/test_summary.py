"""model.summary(): the TensorFlow 2.x table the Graphcore tutorial prints, and Keras' layer auto-naming."""

import ipu_teach.keras as keras
from ipu_teach.examples import tutorial_model_fn

# The tutorial's printed table (seed: keras-tutorial-how-to-run-on-ipu), with the rule lines that
# TensorFlow 2.x prints and the seed's text extraction dropped.
TUTORIAL_SUMMARY = """\
Model: "model"
_________________________________________________________________
Layer (type)                 Output Shape              Param #   
=================================================================
input_1 (InputLayer)         [(None, 28, 28, 1)]       0         
_________________________________________________________________
conv2d (Conv2D)              (None, 26, 26, 32)        320       
_________________________________________________________________
max_pooling2d (MaxPooling2D) (None, 13, 13, 32)        0         
_________________________________________________________________
conv2d_1 (Conv2D)            (None, 11, 11, 64)        18496     
_________________________________________________________________
max_pooling2d_1 (MaxPooling2 (None, 5, 5, 64)          0         
_________________________________________________________________
flatten (Flatten)            (None, 1600)              0         
_________________________________________________________________
dropout (Dropout)            (None, 1600)              0         
_________________________________________________________________
dense (Dense)                (None, 10)                16010     
=================================================================
Total params: 34,826
Trainable params: 34,826
Non-trainable params: 0
_________________________________________________________________
"""


def tutorial_model():
    """The tutorial's model (its verbatim script is run in test_tutorial.py)."""
    return keras.Model(*tutorial_model_fn())


def summary_text(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return "\n".join(lines) + "\n"


def test_tutorial_summary_is_tensorflow_2_table(capsys):
    model = tutorial_model()
    model.summary()
    assert capsys.readouterr().out == TUTORIAL_SUMMARY
    assert model.count_params() == 34_826


def test_second_model_continues_names_and_clear_session_resets_them():
    tutorial_model()
    second = tutorial_model()
    text = summary_text(second)
    assert text.startswith('Model: "model_1"\n')
    for row in (
        "input_2 (InputLayer)",
        "conv2d_2 (Conv2D)",
        "max_pooling2d_2 (MaxPooling2",
        "conv2d_3 (Conv2D)",
        "flatten_1 (Flatten)",
        "dropout_1 (Dropout)",
        "dense_1 (Dense)",
    ):
        assert row in text
    keras.backend.clear_session()
    assert summary_text(tutorial_model()) == TUTORIAL_SUMMARY


def test_layer_names_follow_keras_snake_case():
    layers = [
        keras.layers.MaxPooling2D(),
        keras.layers.AveragePooling2D(),
        keras.layers.BatchNormalization(),
        keras.layers.ReLU(),
        keras.layers.Dense(1),
        keras.layers.Dense(1),
    ]
    assert [layer.name for layer in layers] == [
        "max_pooling2d",
        "average_pooling2d",
        "batch_normalization",
        "re_lu",
        "dense",
        "dense_1",
    ]


def test_sequential_summary_has_no_input_row():
    model = keras.Sequential(
        [keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(3, activation="softmax")]
    )
    assert (
        summary_text(model)
        == """\
Model: "sequential"
_________________________________________________________________
Layer (type)                 Output Shape              Param #   
=================================================================
dense (Dense)                (None, 8)                 40        
_________________________________________________________________
dense_1 (Dense)              (None, 3)                 27        
=================================================================
Total params: 67
Trainable params: 67
Non-trainable params: 0
_________________________________________________________________
"""
    )
    second = keras.Sequential()
    second.add(keras.layers.Dense(2, input_shape=(3,)))
    assert summary_text(second).startswith('Model: "sequential_1"\n')


def test_batch_norm_non_trainable_params_in_summary():
    model = keras.Sequential([keras.layers.Dense(5, input_shape=(3,)), keras.layers.BatchNormalization()])
    text = summary_text(model)
    assert "batch_normalization (BatchNo (None, 5)                 20" in text
    assert "Total params: 40\nTrainable params: 30\nNon-trainable params: 10\n" in text
