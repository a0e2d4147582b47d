"""PNG files from numpy images, with zlib alone: the images TensorBoard shows (``tf.summary.image``).

A PNG is its signature, then chunks (length, type, data, CRC-32): ``IHDR`` (size, 8 bits per channel,
grey / RGB / RGBA), ``IDAT`` (the rows, each after a filter byte 0, deflated) and ``IEND`` (RFC 2083).
"""

import struct
import zlib

import numpy as np

_COLOUR_TYPES = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type: greyscale, RGB, RGBA


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode(pixels) -> bytes:
    """PNG bytes of a (height, width, channels) uint8 array with 1, 3 or 4 channels."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    height, width, channels = pixels.shape
    if channels not in _COLOUR_TYPES:
        raise ValueError(f"an image has 1 (grey), 3 (RGB) or 4 (RGBA) channels, not {channels}")
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOUR_TYPES[channels], 0, 0, 0)
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, width * channels)], axis=1)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes()))
        + _chunk(b"IEND", b"")
    )
