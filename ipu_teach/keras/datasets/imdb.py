"""IMDB movie reviews in Keras' format, from Keras' cache folder (``~/.keras/datasets/imdb.npz``).

``load_data()`` does what ``tf.keras.datasets.imdb.load_data()`` does (tf-keras ``datasets/imdb.py``): reviews as
lists of word indices (most frequent word 1), shuffled with ``seed``, each started with ``start_char``, indices
moved up by ``index_from``, those of ``maxlen`` words or more dropped, words outside ``[skip_top, num_words)``
made ``oov_char`` (or dropped without one); returned as object arrays of lists and int labels. ``imdb.npz`` keeps
the reviews as pickled Python lists, which :mod:`.plain_pickle` reads as plain data (nothing is unpickled).
ipu-teach downloads nothing: without the file the error names it and the folder.
"""

from __future__ import annotations

import io

import numpy as np

from ...untrusted import open_zip, read_bounded, read_json, read_zip_entry
from ...validation import bad_file
from . import plain_pickle
from .keras_cache import cached_file

SOURCE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/imdb.npz"
WHAT = "IMDB data set"
REMEDY = "put the imdb.npz Keras downloads there again"
MAX_ENTRY_BYTES = 512 * 2**20
"""The largest array entry read (imdb.npz's reviews take about 40 MB each unpacked)."""
KEYS = ("x_train", "y_train", "x_test", "y_test")
MAX_WORD_INDEX_BYTES = 64 * 2**20
"""imdb_word_index.json holds 1.6 MB."""


def _array(archive, key, label) -> np.ndarray:
    """The ``.npy`` entry ``key``: numbers, or (dtype object) a pickle of plain data read by :mod:`.plain_pickle`."""
    data = read_zip_entry(archive, f"{key}.npy", MAX_ENTRY_BYTES, label, WHAT, REMEDY)
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(stream)
    except ValueError as error:
        raise bad_file(label, WHAT, f"its {key}.npy is not a numpy array ({error})", REMEDY) from None
    if dtype.hasobject:
        array = plain_pickle.loads(data[stream.tell() :], f"{label} ({key}.npy)", WHAT, REMEDY)
    else:
        array = np.frombuffer(read_bounded(stream, MAX_ENTRY_BYTES, label, WHAT, REMEDY), dtype)
        array = array.reshape(shape, order="F" if fortran else "C") if array.size == np.prod(shape) else None
    if not isinstance(array, np.ndarray) or array.shape != shape:
        raise bad_file(label, WHAT, f"its {key}.npy does not hold the array of shape {shape} it declares", REMEDY)
    return array


def _reviews(array, key, label) -> list:
    reviews = list(array)
    for review in reviews:
        if not (isinstance(review, list) and all(type(w) is int and w >= 0 for w in review)):
            raise bad_file(label, WHAT, f"its {key} holds something other than lists of word indices", REMEDY)
    return reviews


def _remove_long_seq(maxlen, seq, label):
    """tf-keras ``_remove_long_seq``: the sequences shorter than ``maxlen``, with their labels."""
    kept = [(x, y) for x, y in zip(seq, label) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def load_data(
    path="imdb.npz",
    num_words=None,
    skip_top=0,
    maxlen=None,
    seed=113,
    start_char=1,
    oov_char=2,
    index_from=3,
    **kwargs,
):
    """Loads the IMDB dataset, as ``tf.keras.datasets.imdb.load_data()``, from Keras' cache folder.

    Args:
      path: The file, relative to ``~/.keras/datasets`` (or absolute). Default: ``"imdb.npz"``.
      num_words: Keep the ``num_words`` most frequent words; others become ``oov_char``. Default: None, all.
      skip_top: Make the ``skip_top`` most frequent words ``oov_char`` too. Default: 0.
      maxlen: Drop the reviews of ``maxlen`` words or more. Default: None.
      seed: The seed of the shuffle. Default: 113.
      start_char: The index that starts each review. Default: 1.
      oov_char: The index of words left out; None drops them. Default: 2.
      index_from: Added to every word index. Default: 3.

    Returns:
      Tuple of numpy arrays: ``(x_train, y_train), (x_test, y_test)``; x: object arrays of lists of ints.

    Raises:
      DatasetNotFoundError: when the file is not there (the message names it and the folder).
      BadFileError: for a file that is not Keras' imdb.npz.
      ValueError: when ``maxlen`` leaves no review, in Keras' words.
    """
    if "nb_words" in kwargs:
        num_words = kwargs.pop("nb_words")
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {str(kwargs)}.")
    label = cached_file(path, "imdb.load_data", "the IMDB reviews Keras downloads", SOURCE)
    with open_zip(label, WHAT, REMEDY) as archive:
        arrays = {key: _array(archive, key, label) for key in KEYS}
    x_train, labels_train = _objects(_reviews(arrays["x_train"], "x_train", label)), arrays["y_train"]
    x_test, labels_test = _objects(_reviews(arrays["x_test"], "x_test", label)), arrays["y_test"]
    for x, y, key in ((x_train, labels_train, "y_train"), (x_test, labels_test, "y_test")):
        if y.shape != (len(x),) or y.dtype.kind not in "iu":
            raise bad_file(label, WHAT, f"its {key} is not {len(x):,} integer labels", REMEDY)

    rng = np.random.RandomState(seed)
    indices = np.arange(len(x_train))
    rng.shuffle(indices)
    x_train, labels_train = x_train[indices], labels_train[indices]
    indices = np.arange(len(x_test))
    rng.shuffle(indices)
    x_test, labels_test = x_test[indices], labels_test[indices]

    if start_char is not None:
        x_train = [[start_char] + [w + index_from for w in x] for x in x_train]
        x_test = [[start_char] + [w + index_from for w in x] for x in x_test]
    elif index_from:
        x_train = [[w + index_from for w in x] for x in x_train]
        x_test = [[w + index_from for w in x] for x in x_test]
    else:
        x_train, x_test = list(x_train), list(x_test)
    if maxlen:
        x_train, labels_train = _remove_long_seq(maxlen, x_train, labels_train)
        x_test, labels_test = _remove_long_seq(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(
                f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. Increase maxlen."
            )
    xs = x_train + x_test
    labels = np.concatenate([labels_train, labels_test])
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        xs = [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    else:
        xs = [[w for w in x if skip_top <= w < num_words] for x in xs]
    idx = len(x_train)
    return (_objects(xs[:idx]), labels[:idx]), (_objects(xs[idx:]), labels[idx:])


def _objects(lists) -> np.ndarray:
    """An object array of lists, as ``np.array(xs, dtype="object")`` gives for reviews of different lengths."""
    array = np.empty(len(lists), dtype=object)
    array[:] = lists
    return array


def get_word_index(path="imdb_word_index.json"):
    """The dict from words to their index in the IMDB data set, from Keras' cache folder."""
    source = SOURCE.replace(".npz", "_word_index.json")
    label = cached_file(path, "imdb.get_word_index", "the word index Keras downloads", source)
    index = read_json(label, WHAT, REMEDY, MAX_WORD_INDEX_BYTES)
    if not isinstance(index, dict):
        raise bad_file(label, WHAT, "it is not a JSON object of words and indices", REMEDY)
    return index
