"""TensorBoard's event files, written without TensorFlow: a TFRecord file of ``Event`` protocol buffers.

A record is its length (8 bytes, little endian), the masked CRC-32C of the length, the data and its
masked CRC-32C (TensorFlow ``core/lib/io/record_writer.cc``). The data is an ``Event`` (``core/util/
event.proto``): ``wall_time`` (1), ``step`` (2), ``file_version`` (3, the first event: ``brain.Event:2``)
or a ``Summary`` (5) of ``Value``s (``core/framework/summary.proto``), each a ``tag`` (1) with a
``simple_value`` (2) or a ``histo`` (5), as TensorFlow 1 wrote scalars and histograms (TensorBoard reads
them as its own: ``data_compat.migrate_value``), or TensorFlow 2's image summary: a ``tensor`` (8) of
strings with ``metadata`` (9) naming the ``images`` plugin, so that several images share one tag.
The encoding is the protocol buffers' wire format, written out here for these few messages.

The file is named as TensorFlow names it (``events.out.tfevents.<time>.<host>.<pid>.<n>.v2``) and grows
as training goes on, each record flushed whole, so TensorBoard can read it while it is written.
"""

from __future__ import annotations

import itertools
import os
import socket
import struct
import time

import numpy as np

from . import png

_counter = itertools.count()


def _crc32c_table() -> list:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum of TFRecord files."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data: bytes) -> bytes:
    """One TFRecord: length, its masked CRC, the data, its masked CRC."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


# ----- protocol buffers' wire format ------------------------------------------------------------------
def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative integers as two's complement, ten bytes
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint(field << 3 | wire_type)


def integer(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(int(value))


def double(field: int, value: float) -> bytes:
    return _key(field, 1) + struct.pack("<d", float(value))


def single(field: int, value: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", float(value))


def nested(field: int, payload: bytes) -> bytes:
    """A length-delimited field: a string, bytes, a message or a packed repeated field."""
    return _key(field, 2) + _varint(len(payload)) + payload


def packed_doubles(field: int, values) -> bytes:
    return nested(field, np.asarray(values, dtype="<f8").tobytes())


# ----- summary values ---------------------------------------------------------------------------------
def scalar_value(tag: str, value: float) -> bytes:
    return nested(1, tag.encode("utf8")) + single(2, value)


def histogram_value(tag: str, values, buckets: int = 30) -> bytes:
    """A ``HistogramProto`` of ``values`` in ``buckets`` buckets of equal width (tf.summary.histogram's 30)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        low = high = 0.0
        counts, edges = np.zeros(buckets), np.linspace(0, 1, buckets + 1)
    else:
        low, high = float(values.min()), float(values.max())
        counts, edges = np.histogram(values, bins=buckets, range=(low, high) if high > low else (low - 0.5, low + 0.5))
    histo = (
        double(1, low)
        + double(2, high)
        + double(3, values.size)
        + double(4, values.sum())
        + double(5, (values * values).sum())
        + packed_doubles(6, edges[1:])
        + packed_doubles(7, counts)
    )
    return nested(1, tag.encode("utf8")) + nested(5, histo)


def to_uint8(images) -> np.ndarray:
    """tf.summary.image's rule: floats are in [0, 1] (clipped) and scaled to 0-255, integers taken as they are."""
    images = np.asarray(images)
    if images.dtype.kind == "f":
        return np.clip(np.round(images * 255.0), 0, 255).astype(np.uint8)
    return np.clip(images, 0, 255).astype(np.uint8)


def images_value(tag: str, pixels) -> bytes:
    """TensorFlow 2's image summary (``tensorboard/plugins/image/summary_v2.py``): one tensor of strings,
    the width, the height and each image as PNG, with the ``images`` plugin's metadata; ``pixels`` is
    (k, height, width, channels) uint8."""
    _, height, width, _ = pixels.shape
    strings = [str(width).encode(), str(height).encode(), *(png.encode(image) for image in pixels)]
    shape = nested(2, integer(1, len(strings)))  # TensorShapeProto.dim[0].size
    tensor = integer(1, 7) + nested(2, shape) + b"".join(nested(8, s) for s in strings)  # DT_STRING, string_val
    metadata = nested(1, nested(1, b"images"))  # SummaryMetadata.plugin_data.plugin_name
    return nested(1, tag.encode("utf8")) + nested(9, metadata) + nested(8, tensor)


def event(step: int | None = None, values=(), file_version: str | None = None, wall_time=None) -> bytes:
    payload = double(1, time.time() if wall_time is None else wall_time)
    if step is not None:
        payload += integer(2, step)
    if file_version is not None:
        payload += nested(3, file_version.encode("utf8"))
    if values:
        payload += nested(5, b"".join(nested(1, value) for value in values))
    return payload


class EventFileWriter:
    """An event file in ``logdir``, made when the first event is written; records are flushed as written."""

    def __init__(self, logdir, filename_suffix: str = ""):
        self.logdir = os.fspath(logdir)
        self._suffix = filename_suffix or ""
        self._stream = None

    @property
    def path(self) -> str | None:
        return None if self._stream is None else self._stream.name

    def _open(self):
        os.makedirs(self.logdir, exist_ok=True)
        name = (
            f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}.{os.getpid()}.{next(_counter)}.v2"
            f"{self._suffix}"
        )
        self._stream = open(
            os.path.join(self.logdir, name), "ab"
        )  # open until close(): the file grows as training goes
        self._stream.write(record(event(file_version="brain.Event:2")))

    def write(self, step: int, values) -> None:
        if self._stream is None:
            self._open()
        self._stream.write(record(event(step, values)))
        self._stream.flush()

    def flush(self) -> None:
        if self._stream is not None:
            self._stream.flush()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
