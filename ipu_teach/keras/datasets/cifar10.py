"""CIFAR-10 in Keras' format, from a copy you provide (ipu-teach bundles none and downloads nothing).

``load_data()`` returns ``(x_train, y_train), (x_test, y_test)`` as ``tf.keras.datasets.cifar10.load_data()``
does: uint8 images of shape ``(n, 32, 32, 3)`` (channels last) and uint8 labels of shape ``(n, 1)``, 0 to 9. It
is the workshop slides' Keras hands-on data set. Which data it returns is decided in this order and announced in
one printed line:

1. ``path``, else the environment variable ``IPU_TEACH_CIFAR10``: an ``.npz`` holding Keras' arrays
   (``x_train``, ``y_train``, ``x_test``, ``y_test``), or CIFAR-10's binary version
   (https://www.cs.toronto.edu/~kriz/cifar.html): the ``cifar-10-binary.tar.gz`` archive or the folder
   ``cifar-10-batches-bin`` it unpacks to.
   Or Keras' own copy, the folder ``cifar-10-batches-py`` (``cifar-10-python.tar.gz`` unpacked).
2. The same names in Keras' cache folder ``~/.keras/datasets`` (``KERAS_HOME`` honoured): ``cifar10.npz``,
   ``cifar-10-batches-bin``, ``cifar-10-binary.tar.gz``, ``cifar-10-batches-py``.
3. With ``TF_POPLAR_FLAGS=--use_synthetic_data`` (the slides' "synthetic data" switch, for measuring the IPU
   without the host's data): random images of CIFAR-10's shapes, fewer of them (``SYNTHETIC_SIZES``); the line
   says so, and accuracy on them means nothing.
4. Otherwise a :class:`Cifar10NotFoundError` saying where to put the data, and the synthetic switch.

Keras' own cached copy, ``cifar-10-batches-py``, is Python pickles, which can run any code: ipu-teach never gives
them to ``pickle`` but reads their plain data (a dict of labels and one uint8 array) with :mod:`.plain_pickle`,
which calls nothing; a pickle holding anything else is refused. The binary files are read without unpacking the
archive to disk, each record checked (a label byte, then 3,072 pixel bytes, red, green, blue planes).

Example:

>>> os.environ["TF_POPLAR_FLAGS"] = "--use_synthetic_data"
>>> (x_train, y_train), (x_test, y_test) = load_data()
ipu-teach: CIFAR-10 not found; TF_POPLAR_FLAGS has --use_synthetic_data: synthetic images ...
>>> x_train.shape, x_train.dtype, y_train.shape, y_test.shape
((2560, 32, 32, 3), dtype('uint8'), (2560, 1), (512, 1))
>>> del os.environ["TF_POPLAR_FLAGS"]
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import numpy as np

from ...untrusted import open_npz, open_regular
from ...validation import bad_file
from . import plain_pickle
from .mnist import keras_datasets_dir

ENV_VAR = "IPU_TEACH_CIFAR10"
IMAGE_SHAPE = (32, 32, 3)
NUM_CLASSES = 10
RECORD_BYTES = 1 + 32 * 32 * 3
MAX_RECORDS_PER_FILE = 10_000
TRAIN_FILES = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
TEST_FILE = "test_batch.bin"
BINARY_FOLDER = "cifar-10-batches-bin"
PICKLED_FOLDER = "cifar-10-batches-py"
PICKLED_FILES = (*(f"data_batch_{i}" for i in range(1, 6)), "test_batch")
MAX_PICKLED_BYTES = 40 * 2**20
"""A batch of Keras' pickled copy holds 10,000 images in 31 MB."""
CACHE_NAMES = ("cifar10.npz", BINARY_FOLDER, "cifar-10-binary.tar.gz", PICKLED_FOLDER)
MAX_IMAGES = 60_000
"""The most images a split of an .npz may declare: all of CIFAR-10's (a crafted header is refused, not allocated)."""
SYNTHETIC_SIZES = (2_560, 512)
KEYS = ("x_train", "y_train", "x_test", "y_test")
WHAT = "CIFAR-10 data set"
REMEDY = (
    "use CIFAR-10's binary version (cifar-10-binary.tar.gz), Keras' cifar-10-batches-py or an .npz of Keras' arrays"
)
_WHERE = (
    f"put CIFAR-10's binary version (cifar-10-binary.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html), "
    f"Keras' copy (the folder {PICKLED_FOLDER}) or an .npz of Keras' arrays ({', '.join(KEYS)}) in {{cache}}, or name "
    f"it with load_data(path=...) or {ENV_VAR}; "
    "or set TF_POPLAR_FLAGS=--use_synthetic_data to train on synthetic images of CIFAR-10's shapes"
)


class Cifar10NotFoundError(FileNotFoundError):
    """No CIFAR-10 was found where ``load_data`` looks, and synthetic data was not asked for."""


def load_data(path=None):
    """Loads CIFAR-10 as ``tf.keras.datasets.cifar10.load_data()`` does, from a copy you provide.

    Args:
      path: A ``.npz`` of Keras' arrays, ``cifar-10-binary.tar.gz``, its ``cifar-10-batches-bin`` folder, or
        Keras' ``cifar-10-batches-py`` folder.
        Default: ``$IPU_TEACH_CIFAR10``, then Keras' cache folder, as the module docstring says.

    Returns:
      Tuple of numpy arrays: ``(x_train, y_train), (x_test, y_test)``, uint8, images ``(n, 32, 32, 3)``, labels
      ``(n, 1)``.

    Raises:
      Cifar10NotFoundError: when no copy is found and TF_POPLAR_FLAGS does not ask for synthetic data (the
        message says where to put it, and how to train on synthetic data instead).
      BadFileError: for a file that is not CIFAR-10 in one of these forms, naming it and what is wrong.

    Example:

    >>> try:                    # with no CIFAR-10 in Keras' cache folder
    ...     load_data()
    ... except Cifar10NotFoundError as error:
    ...     print(str(error)[:34])
    CIFAR-10 not found; put CIFAR-10's
    """
    source, origin = _choose_source(path)
    if source is None:
        data = _synthetic()
        train, test = SYNTHETIC_SIZES
        print(
            f"ipu-teach: CIFAR-10 not found; TF_POPLAR_FLAGS has --use_synthetic_data: synthetic images of CIFAR-10's "
            f"shapes ({train:,} train / {test:,} test), random labels: accuracy on them means nothing",
            flush=True,
        )
        return data
    data = _read(source)
    (x_train, _), (x_test, _) = data
    print(f"ipu-teach: CIFAR-10 from {source}{origin} ({len(x_train):,} train / {len(x_test):,} test)", flush=True)
    return data


def _choose_source(path):
    """``(path to read, note)``, or ``(None, "")`` for synthetic data."""
    if path is not None:
        named = Path(os.path.expanduser(os.fspath(path)))
        if not named.exists():
            raise Cifar10NotFoundError(f"cifar10.load_data: path={os.fspath(path)!r} does not exist")
        return named, ""
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        named = Path(os.path.expanduser(from_env))
        if not named.exists():
            raise Cifar10NotFoundError(f"{ENV_VAR}={from_env!r} names nothing; point it at CIFAR-10, or unset it")
        return named, f" (named by {ENV_VAR})"
    cache = keras_datasets_dir()
    for name in CACHE_NAMES:
        if (cache / name).exists():
            return cache / name, ""
    if _synthetic_data_asked():
        return None, ""
    raise Cifar10NotFoundError("CIFAR-10 not found; " + _WHERE.format(cache=cache))


def _synthetic_data_asked() -> bool:
    """Whether TF_POPLAR_FLAGS holds ``--use_synthetic_data`` (or ``=true``), as Graphcore's TensorFlow reads it."""
    for word in os.environ.get("TF_POPLAR_FLAGS", "").split():
        name, _, value = word.partition("=")
        if name == "--use_synthetic_data" and value.lower() in ("", "true", "1"):
            return True
    return False


def _synthetic():
    rng = np.random.default_rng(0)
    split = []
    for n in SYNTHETIC_SIZES:
        split.append(
            (
                rng.integers(0, 256, (n, *IMAGE_SHAPE), dtype=np.uint8),
                rng.integers(0, NUM_CLASSES, (n, 1), dtype=np.uint8),
            )
        )
    return tuple(split)


def _read(source: Path):
    if source.is_dir() and (source / PICKLED_FILES[0]).exists():
        return _read_pickled(source)
    if source.is_dir():
        return _from_binary({name: _read_member_file(source / name) for name in (*TRAIN_FILES, TEST_FILE)}, source)
    if source.name.endswith((".tar.gz", ".tgz", ".tar")):
        return _from_binary(_read_archive(source), source)
    return _read_npz(source)


def _read_member_file(path: Path) -> bytes:
    if not path.is_file():
        raise bad_file(path.parent, WHAT, f"it has no {path.name}", REMEDY)
    size = path.stat().st_size
    _check_size(path, size)
    return path.read_bytes()


def _check_size(label, size: int) -> None:
    if size == 0 or size % RECORD_BYTES or size // RECORD_BYTES > MAX_RECORDS_PER_FILE:
        raise bad_file(
            label,
            WHAT,
            f"it holds {size:,} bytes, not 1 to {MAX_RECORDS_PER_FILE:,} records of {RECORD_BYTES:,} bytes",
            REMEDY,
        )


def _read_archive(path: Path) -> dict:
    """The batch files of ``cifar-10-binary.tar.gz``, read from the archive (nothing is unpacked to disk)."""
    wanted = {f"{BINARY_FOLDER}/{name}": name for name in (*TRAIN_FILES, TEST_FILE)}
    found = {}
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                name = wanted.get(member.name.removeprefix("./"))
                if name is None:
                    continue
                if not member.isfile():
                    raise bad_file(path, WHAT, f"its {member.name} is not a regular file", REMEDY)
                _check_size(f"{path} ({member.name})", member.size)
                found[name] = archive.extractfile(member).read(member.size)
    except (tarfile.TarError, EOFError, OSError) as error:
        raise bad_file(path, WHAT, f"it is not a readable archive ({type(error).__name__}: {error})", REMEDY) from None
    missing = [name for name in wanted.values() if name not in found]
    if missing:
        raise bad_file(path, WHAT, f"it has no {BINARY_FOLDER}/{missing[0]}", REMEDY)
    return found


def _from_binary(files: dict, label):
    def split(names):
        records = np.frombuffer(b"".join(files[name] for name in names), dtype=np.uint8).reshape(-1, RECORD_BYTES)
        labels = records[:, :1].copy()
        if labels.max(initial=0) >= NUM_CLASSES:
            raise bad_file(label, WHAT, f"a record has label {labels.max()}, expected 0 to 9", REMEDY)
        images = records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()  # channels last, as Keras
        return images, labels

    return split(TRAIN_FILES), split((TEST_FILE,))


def _read_pickled(folder: Path):
    """Keras' ``cifar-10-batches-py``: each batch a pickled dict (``data``: uint8 (n, 3072), ``labels``: n ints),
    read as plain data, never unpickled (tf-keras ``datasets/cifar.py``, ``load_batch``)."""
    splits = {"train": [], "test": []}
    for name in PICKLED_FILES:
        path = folder / name
        if not path.is_file():
            raise bad_file(folder, WHAT, f"it has no {name}", REMEDY)
        with open_regular(path, WHAT, REMEDY, MAX_PICKLED_BYTES) as stream:
            batch = plain_pickle.loads(stream.read(), path, WHAT, REMEDY)
        batch = {k.decode("utf8") if isinstance(k, bytes) else k: v for k, v in dict(batch).items()}
        data, labels = batch.get("data"), np.asarray(batch.get("labels", []))
        if not (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2 and data.shape[1] == 3072):
            raise bad_file(path, WHAT, "its data is not a uint8 array of 3,072 values per image", REMEDY)
        if labels.shape != (len(data),) or labels.dtype.kind not in "iu" or not ((0 <= labels) & (labels < 10)).all():
            raise bad_file(path, WHAT, f"its labels are not {len(data):,} integers 0 to 9", REMEDY)
        images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        splits["test" if name == "test_batch" else "train"].append((images, labels.astype(np.uint8).reshape(-1, 1)))
    return tuple(
        (np.concatenate([x for x, _ in splits[s]]), np.concatenate([y for _, y in splits[s]]))
        for s in ("train", "test")
    )


def _read_npz(path: Path):
    with open_npz(path, WHAT, REMEDY) as npz:
        missing = [key for key in KEYS if key not in npz.headers]
        if missing:
            raise bad_file(path, WHAT, f"it lacks {', '.join(missing)}", REMEDY)
        for split in ("train", "test"):
            x, y = npz.headers[f"x_{split}"], npz.headers[f"y_{split}"]
            if x.dtype != np.uint8 or len(x.shape) != 4 or x.shape[1:] != IMAGE_SHAPE or x.shape[0] > MAX_IMAGES:
                raise bad_file(
                    path,
                    WHAT,
                    f"x_{split} is {x.dtype} {x.shape}, expected uint8 (n, 32, 32, 3), n <= {MAX_IMAGES:,}",
                    REMEDY,
                )
            if y.dtype != np.uint8 or y.shape not in ((x.shape[0], 1), (x.shape[0],)):
                raise bad_file(
                    path, WHAT, f"y_{split} is {y.dtype} {y.shape}, expected uint8 ({x.shape[0]}, 1)", REMEDY
                )
        arrays = {key: npz.read(key) for key in KEYS}
    for split in ("train", "test"):
        arrays[f"y_{split}"] = arrays[f"y_{split}"].reshape(-1, 1)
        if arrays[f"y_{split}"].max(initial=0) >= NUM_CLASSES:
            raise bad_file(path, WHAT, f"y_{split} holds label {arrays[f'y_{split}'].max()}, expected 0 to 9", REMEDY)
    return (arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"])
