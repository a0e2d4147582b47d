"""MNIST in Keras' format that works offline on a fresh machine.

``load_data()`` returns ``(x_train, y_train), (x_test, y_test)`` as uint8 arrays of shape
``(n, 28, 28)`` and ``(n,)``, like ``tf.keras.datasets.mnist.load_data()``. Which data it returns is
decided in this order and announced in one printed line, so a notebook always says what it trained on:

1. ``path`` names an existing file (absolute, relative to the current folder, or to Keras' cache
   folder ``~/.keras/datasets``, which honours ``KERAS_HOME`` as Keras does). With the default
   ``path="mnist.npz"`` this finds the full data set in Keras' cache. A file found in Keras' cache
   must have the published sha256 (``file_hash``), as Keras' ``get_file`` checks it (Keras downloads
   again; offline, a cached file that was edited or cut short is refused with what to do).
2. The environment variable ``IPU_TEACH_MNIST`` names a file.
3. ``download=True``: fetch ``origin`` into Keras' cache, verified by sha256 and written atomically.
4. Otherwise the real MNIST subset bundled with ipu-teach (10,000 train / 2,560 test images, drawn
   class-stratified with a fixed seed by ``tools/make_mnist_subset.py``).

MNIST is by Yann LeCun, Corinna Cortes and Christopher J. C. Burges (http://yann.lecun.com/exdb/mnist/).

Example:

>>> from ipu_teach.keras.datasets import mnist
>>> (x_train, y_train), _ = mnist.load_data()
ipu-teach: MNIST ...
>>> x_train.dtype, sorted(set(y_train.tolist()))
(dtype('uint8'), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
"""

import hashlib
import os
import urllib.request
import zipfile
import zlib
from http.client import HTTPException
from pathlib import Path

import numpy as np

from ...atomic import atomic_write

KERAS_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
KERAS_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
ENV_VAR = "IPU_TEACH_MNIST"
BUNDLED_SUBSET = Path(__file__).with_name("mnist_subset.npz")
DEFAULT_PATH = "mnist.npz"
DOWNLOAD_TIMEOUT_SECONDS = 60
FULL_SIZES = (60_000, 10_000)
IMAGE_SHAPE = (28, 28)
NUM_CLASSES = 10
KEYS = ("x_train", "y_train", "x_test", "y_test")
_HOW_TO_GET_FULL_DATA = "put mnist.npz in ~/.keras/datasets or pass path=..."


class MnistDownloadError(OSError):
    """The download failed or its content did not verify; nothing was written to the cache."""


def keras_datasets_dir():
    """Keras' download cache for data sets: ``$KERAS_HOME/datasets``, else ``~/.keras/datasets``."""
    keras_home = os.environ.get("KERAS_HOME") or os.path.join("~", ".keras")
    return Path(os.path.expanduser(keras_home)) / "datasets"


def load_data(path=DEFAULT_PATH, *, download=False, origin=KERAS_URL, file_hash=None):
    """Loads the MNIST dataset: ``(x_train, y_train), (x_test, y_test)`` as Keras does, offline first.

    Images are uint8 arrays of shape ``(n, 28, 28)``, labels uint8 arrays of shape ``(n,)``. Which data
    it returns (the full data set from Keras' cache or a path, or the subset bundled with ipu-teach) is
    decided as the module docstring says and announced in one printed line. The arrays are fresh copies
    the caller may modify.

    Args:
      path: Where to look for ``mnist.npz``: a file, or a name in Keras' cache folder. Default: ``"mnist.npz"``.
      download: Boolean, fetch ``origin`` into Keras' cache when no file is found. Default: False.
      origin: The URL to download from. Default: Keras' own.
      file_hash: The sha256 a downloaded or cached file must have. Default: None, Keras' published hash.

    Returns:
      Tuple of numpy arrays: ``(x_train, y_train), (x_test, y_test)``.

    Example:

    >>> (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    ipu-teach: MNIST ...
    >>> x_train.shape[1:], x_train.dtype, y_train.dtype, int(y_train.max())
    ((28, 28), dtype('uint8'), dtype('uint8'), 9)
    """
    file_hash = KERAS_SHA256 if file_hash is None else file_hash
    source, origin_note = _choose_source(path, download, origin, file_hash)
    data = read_mnist_npz(source or BUNDLED_SUBSET)
    train, test = len(data[0][0]), len(data[1][0])
    if source is None:
        announcement = (
            f"MNIST subset bundled with ipu-teach ({train:,} train / {test:,} test); full data: {_HOW_TO_GET_FULL_DATA}"
        )
    else:
        kind = "full MNIST" if (train, test) == FULL_SIZES else "MNIST"
        announcement = f"{kind} from {source}{origin_note} ({train:,} train / {test:,} test)"
    print(f"ipu-teach: {announcement}", flush=True)
    return data


def _choose_source(path, download, origin, file_hash):
    """Return ``(file, note)`` for the data ``load_data`` should read, or ``(None, "")`` for the bundled subset."""
    expected_sha256 = _checked_sha256(file_hash)
    named = _find_named_file(path)
    if named is not None and not _is_edited_cache_file(named, expected_sha256, download):
        return named, ""
    from_env = os.environ.get(ENV_VAR)
    if path == DEFAULT_PATH and from_env:
        env_file = Path(os.path.expanduser(from_env))
        if not env_file.is_file():
            raise FileNotFoundError(
                f"{ENV_VAR}={from_env!r} names no file; point it at an mnist.npz or unset it to use the bundled subset."
            )
        return env_file, f" (named by {ENV_VAR})"
    target = keras_datasets_dir() / os.path.expanduser(path)
    if download:
        _download(origin, target, expected_sha256)
        return target, f" (downloaded from {origin})"
    if path != DEFAULT_PATH:
        raise FileNotFoundError(
            f"mnist.load_data: path={path!r} is neither an existing file nor in Keras' cache {keras_datasets_dir()}; "
            "fix the path, pass download=True to fetch it there, or leave path out to use the bundled subset."
        )
    return None, ""


def _find_named_file(path):
    """The file ``path`` names: as given (absolute, or relative to the current folder), else in Keras' cache."""
    as_given = Path(os.path.expanduser(path))
    for candidate in (as_given, keras_datasets_dir() / as_given):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _sha256_of(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _is_edited_cache_file(path, expected_sha256, download) -> bool:
    """True when ``path`` is in Keras' cache with content other than the published file and
    ``download`` may replace it (as Keras' get_file does); without ``download``, a clear error."""
    if path.parent != keras_datasets_dir().resolve():
        return False  # the user's own file, named deliberately: announced with its path, not hash-checked
    found = _sha256_of(path)
    if found == expected_sha256:
        return False
    if download:
        return True
    raise ValueError(
        f"{path} in Keras' cache has sha256 {found}, expected {expected_sha256}: it was changed "
        "or cut short since it was downloaded. Delete it, or fetch it again with "
        "load_data(download=True), or pass the file_hash of the file you meant to put there."
    )


def _checked_sha256(file_hash):
    digest = str(file_hash).lower()
    if len(digest) != 64 or any(char not in "0123456789abcdef" for char in digest):
        raise ValueError(f"mnist.load_data: file_hash={file_hash!r} is not a sha256 hex digest (64 hex characters).")
    return digest


def read_mnist_npz(file, label=None):
    """Read and check an MNIST ``.npz`` in Keras' layout; ``label`` names the file in errors (default: its path)."""
    label = label or str(file)
    unreadable = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error)
    try:
        npz = np.load(file, allow_pickle=False)
    except unreadable as error:
        raise _unreadable_error(label, error) from error
    if isinstance(npz, np.ndarray):
        raise ValueError(f"{label} holds a single array (.npy), not an .npz with arrays {', '.join(KEYS)}.")
    with npz:
        missing = [key for key in KEYS if key not in npz.files]
        if missing:
            raise ValueError(
                f"{label} is not an MNIST .npz: it lacks {', '.join(missing)} "
                f"(it holds {', '.join(npz.files) or 'nothing'}); expected {', '.join(KEYS)}."
            )
        try:
            arrays = {key: npz[key] for key in KEYS}
        except unreadable as error:
            raise _unreadable_error(label, error) from error
    problems = [problem for split in ("train", "test") for problem in _split_problems(arrays, split)]
    if problems:
        raise ValueError(f"{label} is not an MNIST .npz in Keras' layout: {'; '.join(problems)}.")
    return (arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"])


def _unreadable_error(label, error):
    return ValueError(
        f"{label} is not a readable .npz file ({type(error).__name__}: {error}); "
        f"expected Keras' mnist.npz with arrays {', '.join(KEYS)}."
    )


def _split_problems(arrays, split):
    """What is wrong with one split's images and labels, as readable phrases (empty when it is fine)."""
    x, y = arrays[f"x_{split}"], arrays[f"y_{split}"]
    problems = [
        f"{name} has dtype {array.dtype}, expected uint8"
        for name, array in ((f"x_{split}", x), (f"y_{split}", y))
        if array.dtype != np.uint8
    ]
    if x.ndim != 3 or x.shape[1:] != IMAGE_SHAPE:
        problems.append(f"x_{split} has shape {x.shape}, expected (n, 28, 28)")
    if y.ndim != 1:
        problems.append(f"y_{split} has shape {y.shape}, expected (n,)")
    elif x.ndim >= 1 and len(x) != len(y):
        problems.append(f"x_{split} has {len(x)} images but y_{split} has {len(y)} labels")
    elif y.size and y.dtype == np.uint8 and y.max() >= NUM_CLASSES:
        problems.append(f"y_{split} holds label {y.max()}, expected digits 0-9")
    return problems


def _download(origin, target, expected_sha256):
    """Fetch ``origin`` to ``target`` through a temp file next to it, moved into place only once verified."""
    with atomic_write(target, "wb") as out:
        received, announced, digest = _stream(origin, out)
        out.flush()
        if announced is not None and received != announced:
            raise MnistDownloadError(
                f"download of {origin} stopped after {received:,} of {announced:,} bytes; "
                f"nothing was saved. Try again, or put mnist.npz in {target.parent} by hand."
            )
        if digest != expected_sha256:
            raise MnistDownloadError(
                f"{origin} has sha256 {digest}, expected {expected_sha256}: the file is corrupt "
                "or not the one expected; nothing was saved (check origin= and file_hash=)."
            )
        read_mnist_npz(out.name, label=f"the file downloaded from {origin}")


def _stream(origin, out):
    """Copy ``origin`` into ``out``; return (bytes received, bytes the server announced or None, sha256 hex)."""
    digest = hashlib.sha256()
    received = 0
    try:
        with urllib.request.urlopen(origin, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
            length = response.headers.get("Content-Length")
            while chunk := response.read(1 << 20):
                out.write(chunk)
                digest.update(chunk)
                received += len(chunk)
    except (HTTPException, OSError) as error:  # URLError, HTTPError and timeouts are OSErrors
        raise MnistDownloadError(
            f"could not download {origin} ({error}); nothing was saved. Without network, "
            f"{_HOW_TO_GET_FULL_DATA}, or leave download=False to use the bundled subset."
        ) from error
    return received, int(length) if length is not None else None, digest.hexdigest()
