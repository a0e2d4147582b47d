"""Tiny models and data shared by the Keras tests (kept small so the suite runs in seconds)."""

import numpy as np

import ipu_teach.keras as keras


def tiny_classification(n=50, features=4, classes=3, seed=1):
    """Separable-ish toy data: x (n, features) float32, integer labels (n,)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = (x[:, 0] * 2 + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
    return x, y % classes


def tiny_dense_model(features=4, classes=3, activation="softmax"):
    inputs = keras.Input(shape=(features,))
    outputs = keras.layers.Dense(classes, activation=activation)(keras.layers.Dense(8, activation="relu")(inputs))
    return keras.Model(inputs, outputs)


def tiny_cnn(classes=3, dropout=None):
    """The tutorial's CNN shape on 8x8 images: conv, pool, flatten, (dropout), dense softmax."""
    inputs = keras.Input(shape=(8, 8, 1))
    x = keras.layers.Conv2D(4, kernel_size=(3, 3), activation="relu")(inputs)
    x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
    x = keras.layers.Flatten()(x)
    if dropout:
        x = keras.layers.Dropout(dropout)(x)
    return keras.Model(inputs, keras.layers.Dense(classes, activation="softmax")(x))


# The Graphcore tutorial's vanilla Keras script (seed: keras-tutorial-how-to-run-on-ipu), as a user runs it.
# The seed's text extraction fused three lines into 'print("\nTraining"), y_train, ...'; restored here.
TUTORIAL_SCRIPT = """
import tensorflow.keras as keras
import numpy as np

# Store class and shape information.
num_classes = 10
input_shape = (28, 28, 1)
batch_size = 64

def load_data():
    # Load the MNIST dataset from keras.datasets
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()

    # Normalize the images.
    x_train = x_train.astype("float32") / 255
    x_test = x_test.astype("float32") / 255

    # When dealing with images, we usually want an explicit channel dimension,
    # even when it is 1.
    # Each sample thus has a shape of (28, 28, 1).
    x_train = np.expand_dims(x_train, -1)
    x_test = np.expand_dims(x_test, -1)

    # Finally, convert class assignments to a binary class matrix.
    # Each row can be seen as a rank-1 "one-hot" tensor.
    y_train = keras.utils.to_categorical(y_train, num_classes)
    y_test = keras.utils.to_categorical(y_test, num_classes)

    return (x_train, y_train), (x_test, y_test)

def model_fn():
    # Input layer - "entry point" / "source vertex".
    input_layer = keras.Input(shape=input_shape)

    # Add layers to the graph.
    x = keras.layers.Conv2D(32, kernel_size=(3, 3), activation="relu")(input_layer)
    x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
    x = keras.layers.Conv2D(64, kernel_size=(3, 3), activation="relu")(x)
    x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dropout(0.5)(x)
    x = keras.layers.Dense(num_classes, activation="softmax")(x)

    return input_layer, x

(x_train, y_train), (x_test, y_test) = load_data()

print("Keras MNIST example, running on CPU")
# Model.__init__ takes two required arguments, inputs and outputs.
model = keras.Model(*model_fn())

# Compile our model with Stochastic Gradient Descent as an optimizer
# and Categorical Cross Entropy as a loss.
model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"])
model.summary()

print("\\nTraining")
history = model.fit(x_train, y_train, epochs=3, batch_size=batch_size)

result = model.evaluate(x_test, y_test, batch_size=batch_size)
"""


def run_tutorial_script():
    """Run the script with only its import changed, as the course promises; return its globals."""
    source = TUTORIAL_SCRIPT.replace("import tensorflow.keras as keras", "import ipu_teach.keras as keras")
    assert source != TUTORIAL_SCRIPT
    namespace = {"__name__": "__main__"}
    exec(compile(source, "tutorial_vanilla_keras.py", "exec"), namespace)
    return namespace


def single_ipu_scope():
    """One simulated IPU configured, and IPUStrategy's scope to build and compile a model on it."""
    from ipu_teach import ipu

    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    return ipu.ipu_strategy.IPUStrategy().scope()
