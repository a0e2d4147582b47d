"""Reading files that may come from someone else, checked before they cost anything.

Model files, weights files, profile reports and executable-cache entries are opened through here,
so a damaged or crafted file fails the same way everywhere, as a :class:`~ipu_teach.validation.BadFileError`
naming the file, and never makes the reader hang, recurse or allocate more than the file's owner
could legitimately ask for:

- :func:`open_regular`: only a regular file is read (a symlink to one is fine; a FIFO, which would
  block the reader, or a device such as ``/dev/zero``, which never ends, is refused), and only up to
  a size limit.
- :func:`read_json` / :func:`parse_json`: bounded in size and in nesting depth, so deep JSON is
  refused before Python's recursive parser (and the recursive code that reads the result) meets it.
- :func:`open_npz`: an ``.npz`` with every ``.npy`` header read first, without decompressing any
  data; the caller checks the declared shapes and dtypes (against a model) before a single array is
  read, and a zip entry's declared size must agree with its header. A zip bomb or a header
  declaring 2**40 elements is refused having read a few hundred bytes.

Imports nothing of ours but :mod:`ipu_teach.validation`, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np

from .validation import BadFileError, bad_file

try:
    from lzma import LZMAError
except ImportError:  # a Python built without lzma: zipfile cannot read such entries either
    LZMAError = NotImplementedError

MAX_JSON_DEPTH = 100
"""Nesting allowed in any JSON read here: ipu-teach's own files nest at most about 10 deep; Python's
parser and the recursive code that walks the result would fail near 1,000."""

MAX_NPY_HEADER_BYTES = 65536
"""numpy writes headers of a few hundred bytes and reads at most 10,000 characters of one."""

UNREADABLE_ZIP = (OSError, EOFError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile, zlib.error, LZMAError)
"""What zipfile and numpy raise for a damaged archive (RuntimeError: an encrypted entry)."""


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a device"))
    kinds += ((stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


@contextlib.contextmanager
def open_regular(path, what: str, remedy: str, limit: int | None = None):
    """``with open_regular(path, ...) as stream``: ``path`` opened for binary reading if it is a regular
    file (or a symlink to one) of at most ``limit`` bytes; BadFileError otherwise. Opened without
    blocking, so a FIFO is refused rather than waited on; FileNotFoundError passes through."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    handle = os.open(os.fspath(path), flags)
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise bad_file(path, what, f"it is {_kind(info.st_mode)}, not a regular file", remedy)
        if limit is not None and info.st_size > limit:
            raise bad_file(path, what, f"it holds {info.st_size:,} bytes, more than the {limit:,} allowed", remedy)
        stream = os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise
    with stream:
        yield stream


def read_bounded(stream, limit: int, label, what: str, remedy: str, subject: str = "it") -> bytes:
    """At most ``limit`` bytes of ``stream`` (a file that grew, or a zip entry that decompresses to
    more than it declared, is refused once ``limit`` is passed, never read to its end)."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise bad_file(label, what, f"{subject} holds more than the {limit:,} bytes allowed", remedy)
    return data


def json_depth(data: bytes) -> int:
    """How deep the arrays and objects of the JSON text ``data`` nest, counted without parsing it
    (brackets inside strings do not count), in time and memory linear in its length."""
    skeleton = _JSON_STRING.sub(b'""', data).translate(None, _NOT_BRACKETS)
    steps = np.frombuffer(skeleton, dtype=np.uint8)
    opening = (steps == ord("[")) | (steps == ord("{"))
    return int(np.cumsum(np.where(opening, 1, -1), dtype=np.int64).max(initial=0))


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def parse_json(data: bytes, label, what: str, remedy: str):
    """The JSON value of ``data`` (bytes of a file named ``label``); BadFileError if it is not JSON
    or nests deeper than :data:`MAX_JSON_DEPTH`."""
    depth = json_depth(data)
    if depth > MAX_JSON_DEPTH:
        raise bad_file(
            label, what, f"its JSON nests {depth:,} levels deep, more than the {MAX_JSON_DEPTH} allowed", remedy
        )
    try:
        return json.loads(data)
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, an integer of too many digits
        raise bad_file(label, what, f"it is not JSON ({error})", remedy) from None


def read_json(path, what: str, remedy: str, limit: int):
    """The JSON value of the regular file ``path`` of at most ``limit`` bytes; BadFileError otherwise."""
    with open_regular(path, what, remedy, limit) as stream:
        data = read_bounded(stream, limit, path, what, remedy)
    return parse_json(data, path, what, remedy)


@dataclass(frozen=True)
class ArrayHeader:
    """What a ``.npy`` entry declares: its shape and dtype, read before any of its data."""

    shape: tuple
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


WIDEST_REAL_ITEMSIZE = 16
"""Bytes per value of the widest real dtype a file may hold (numpy's longdouble on most machines)."""


def npz_bound(data_bytes) -> int:
    """A generous upper bound on the size of an ``.npz`` whose arrays hold ``data_bytes`` (a list: one
    size per array), with room for each entry's ``.npy`` and zip headers: the limit for an ``.npz``
    stored inside another zip, which must be decompressed before its own headers can be read."""
    return sum(size + 2 * MAX_NPY_HEADER_BYTES for size in data_bytes) + MAX_NPY_HEADER_BYTES


def read_zip_entry(archive: zipfile.ZipFile, name: str, limit: int, label, what: str, remedy: str) -> bytes:
    """The entry ``name`` of ``archive``, decompressed only if it declares at most ``limit`` bytes, and
    never beyond ``limit`` even if it declared less; BadFileError if it is missing or damaged."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise bad_file(label, what, f"it has no {name}", remedy) from None
    if info.file_size > limit:
        raise bad_file(
            label, what, f"its {name} declares {info.file_size:,} bytes, more than the {limit:,} allowed", remedy
        )
    try:
        with archive.open(info) as entry:
            return read_bounded(entry, limit, label, what, remedy, subject=f"its {name}")
    except BadFileError:
        raise
    except UNREADABLE_ZIP as error:
        raise _corrupt(label, what, remedy, error) from None


@contextlib.contextmanager
def open_source(source, what: str, remedy: str):
    """``with open_source(source, ...) as stream``: a binary stream of ``source``, bytes (a file stored inside
    another) or the path of a regular file (:func:`open_regular`)."""
    if isinstance(source, (bytes, bytearray)):
        yield io.BytesIO(source)
    else:
        with open_regular(source, what, remedy) as stream:
            yield stream


@contextlib.contextmanager
def open_zip(source, what: str, remedy: str, label=None, kind: str = "a zip archive"):
    """``with open_zip(source, ...) as archive``: the ``zipfile.ZipFile`` at ``source`` (a path to a
    regular file, or bytes); BadFileError naming ``label`` (default the path) if it is not ``kind``
    (a zip archive) or its directory is damaged."""
    label = label or source
    with contextlib.ExitStack() as stack:
        stream = stack.enter_context(open_source(source, what, remedy))
        magic = stream.read(4)
        if magic not in (b"PK\x03\x04", b"PK\x05\x06"):  # an entry first, or the end of an empty archive
            found = "a single array (.npy)" if magic.startswith(b"\x93NUM") else f"not {kind}"
            raise bad_file(label, what, f"it is {found}", remedy)
        stream.seek(0)
        try:
            archive = stack.enter_context(zipfile.ZipFile(stream))
        except UNREADABLE_ZIP as error:
            raise _corrupt(label, what, remedy, error) from None
        yield archive


class Npz:
    """An open ``.npz`` whose ``headers`` (``{name: ArrayHeader}``, every entry's) are known and checked
    for consistency, and none of whose arrays has been read: check them, then :meth:`read` the arrays."""

    def __init__(self, archive: zipfile.ZipFile, label, what: str, remedy: str):
        self._archive, self._where = archive, (label, what, remedy)
        self.headers = _headers(archive, label, what, remedy)

    def read(self, name: str) -> np.ndarray:
        """The array ``name``, read without pickle; BadFileError if its data is damaged."""
        try:
            with self._archive.open(f"{name}.npy") as member:  # read in chunks into the array: no second copy
                return np.lib.format.read_array(member, allow_pickle=False)
        except UNREADABLE_ZIP as error:
            raise _corrupt(*self._where, error) from None


@contextlib.contextmanager
def open_npz(source, what: str, remedy: str, label=None):
    """``with open_npz(source, ...) as npz``: the :class:`Npz` at ``source`` (a path, or the bytes of an
    ``.npz`` stored inside another file named ``label``), having read only its zip and ``.npy`` headers.

    An archive that is not a complete ``.npz`` (truncated, text, a single ``.npy``, an entry that is not
    an array, one whose declared size disagrees with its header, one holding Python objects) is a
    :class:`BadFileError` naming ``label`` (default the path) and saying ``remedy``, never numpy's own
    message (which suggests ``allow_pickle``)."""
    with open_zip(source, what, remedy, label, kind="an .npz archive") as archive:
        try:
            npz = Npz(archive, label or source, what, remedy)
        except BadFileError:
            raise
        except UNREADABLE_ZIP as error:
            raise _corrupt(label or source, what, remedy, error) from None
        yield npz


def _corrupt(label, what, remedy, error):
    return bad_file(label, what, f"it is truncated or corrupt ({type(error).__name__}: {error})", remedy)


def _headers(archive: zipfile.ZipFile, label, what: str, remedy: str) -> dict:
    headers = {}
    for info in archive.infolist():
        name = info.filename.removesuffix(".npy")
        if name == info.filename or name in headers:
            problem = "is not a .npy array" if name == info.filename else "appears twice"
            raise bad_file(label, what, f"its entry {info.filename[:80]!r} {problem}", remedy)
        with archive.open(info) as member:
            header, data_offset = _npy_header(member, label, what, remedy, info.filename)
        if data_offset + header.nbytes != info.file_size:
            raise bad_file(
                label,
                what,
                f"its entry {info.filename[:80]!r} declares {info.file_size:,} bytes but its header describes "
                f"{data_offset + header.nbytes:,} (shape {header.shape}, {header.dtype})",
                remedy,
            )
        headers[name] = header
    return headers


def _npy_header(member, label, what: str, remedy: str, entry: str):
    """(ArrayHeader, offset of the data) of the ``.npy`` stream ``member``, having read only its header."""
    start = member.read(8)
    if len(start) < 8 or start[:6] != b"\x93NUMPY" or start[6] not in (1, 2):
        raise bad_file(label, what, f"its entry {entry[:80]!r} is not a .npy array (version 1 or 2)", remedy)
    length_format = "<H" if start[6] == 1 else "<I"
    start += member.read(struct.calcsize(length_format))
    (length,) = struct.unpack(length_format, start[8:].ljust(struct.calcsize(length_format), b"\0"))
    if length > MAX_NPY_HEADER_BYTES:
        raise bad_file(label, what, f"its entry {entry[:80]!r} has a header of {length:,} bytes", remedy)
    prefix = io.BytesIO(start + member.read(length))
    version = np.lib.format.read_magic(prefix)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(prefix)
    if dtype.hasobject or any(dimension < 0 for dimension in shape):
        problem = "holds Python objects" if dtype.hasobject else f"declares the shape {shape}"
        raise bad_file(label, what, f"its entry {entry[:80]!r} {problem}", remedy)
    return ArrayHeader(tuple(int(dimension) for dimension in shape), dtype), len(start) + length
