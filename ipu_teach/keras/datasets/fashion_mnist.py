"""Fashion-MNIST in Keras' format, from Keras' cache folder (``~/.keras/datasets/fashion-mnist``).

``load_data()`` returns ``(x_train, y_train), (x_test, y_test)`` as ``tf.keras.datasets.fashion_mnist.load_data()``
does: uint8 images ``(60000, 28, 28)`` and ``(10000, 28, 28)``, uint8 labels 0 to 9 of shape ``(n,)``, read from
the four gzipped IDX files Keras downloads there (tf-keras ``datasets/fashion_mnist.py``). ipu-teach downloads
nothing: without them the error names the file and the folder.
"""

from __future__ import annotations

import numpy as np

from ...validation import bad_file
from .keras_cache import cached_file, read_gzip

FOLDER = "fashion-mnist"
FILES = (
    "train-labels-idx1-ubyte.gz",
    "train-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
)
SOURCE = "https://github.com/zalandoresearch/fashion-mnist"
MAX_IMAGES = 60_000
WHAT = "Fashion-MNIST file"
REMEDY = "put the file Keras downloads (from Fashion-MNIST's page) there again"


def _idx(path, dimensions: int) -> np.ndarray:
    """An IDX file of unsigned bytes: magic ``0x0000080<dimensions>``, the sizes (big endian), the values."""
    header = 4 + 4 * dimensions
    data = read_gzip(path, header + MAX_IMAGES * 28 * 28, WHAT, REMEDY)
    magic = int.from_bytes(data[:4], "big") if len(data) >= header else None
    if magic != 0x800 + dimensions:
        raise bad_file(path, WHAT, f"it is not an IDX file of {dimensions}-dimensional unsigned bytes", REMEDY)
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dimensions))
    if shape[0] > MAX_IMAGES or shape[1:] not in ((), (28, 28)) or len(data) != header + int(np.prod(shape)):
        raise bad_file(path, WHAT, f"its header declares {shape} but it holds {len(data) - header:,} values", REMEDY)
    return np.frombuffer(data, np.uint8, offset=header).reshape(shape)


def load_data():
    """Loads the Fashion-MNIST dataset, as ``tf.keras.datasets.fashion_mnist.load_data()``, from Keras' cache.

    Returns:
      Tuple of numpy arrays: ``(x_train, y_train), (x_test, y_test)``: uint8 images ``(n, 28, 28)``, labels ``(n,)``.

    Raises:
      DatasetNotFoundError: when a file is not in ``~/.keras/datasets/fashion-mnist`` (the message names it).
      BadFileError: for a file that is not what Keras downloads.
    """
    paths = [
        cached_file(f"{FOLDER}/{name}", "fashion_mnist.load_data", "Fashion-MNIST's four files", SOURCE)
        for name in FILES
    ]
    y_train, x_train, y_test, x_test = (_idx(path, 1 if "labels" in path.name else 3) for path in paths)
    for x, y, path in ((x_train, y_train, paths[0]), (x_test, y_test, paths[2])):
        if len(x) != len(y) or y.max(initial=0) > 9:
            raise bad_file(
                path, WHAT, f"it holds {len(y):,} labels 0 to {y.max(initial=0)} for {len(x):,} images", REMEDY
            )
    return (x_train, y_train), (x_test, y_test)
