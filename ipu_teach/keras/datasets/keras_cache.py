"""Files of Keras' data sets, found where Keras keeps them: its cache folder, ``~/.keras/datasets``.

ipu-teach downloads nothing: a data set is read when its file is where Keras' ``get_file`` would have put it
(``$KERAS_HOME/datasets`` if set, as Keras honours it), else the error names the file, the folder and where
to get it.
"""

from __future__ import annotations

import gzip
import zlib

from ...untrusted import open_regular, read_bounded
from ...validation import bad_file
from .mnist import keras_datasets_dir


class DatasetNotFoundError(FileNotFoundError):
    """A data set's file is not in Keras' cache folder (ipu-teach downloads nothing)."""


def cached_file(name: str, caller: str, description: str, source: str):
    """The path of ``name`` (relative to Keras' cache folder, or absolute); DatasetNotFoundError if it is not there."""
    path = keras_datasets_dir() / name
    if not path.is_file():
        raise DatasetNotFoundError(
            f"{caller}: {path} not found. ipu-teach downloads nothing: put {description} ({path.name}, from "
            f"{source}) in {path.parent}, where Keras' own load_data keeps it"
        )
    return path


def read_gzip(path, limit: int, what: str, remedy: str) -> bytes:
    """The decompressed contents of the gzip file ``path``, refused past ``limit`` bytes (a gzip bomb stops there)."""
    with open_regular(path, what, remedy) as stream:
        try:
            with gzip.GzipFile(fileobj=stream) as unpacked:
                return read_bounded(unpacked, limit, path, what, remedy)
        except (OSError, EOFError, zlib.error) as error:
            raise bad_file(path, what, f"it is not a readable gzip file ({error})", remedy) from None
