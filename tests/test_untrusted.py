"""The reader of files from elsewhere (ipu_teach/untrusted.py): JSON depth counted outside strings only,
and .npz headers checked before any data is read."""

import io
import json
import struct
import zipfile

import numpy as np
import pytest

from ipu_teach.untrusted import MAX_JSON_DEPTH, json_depth, open_npz, parse_json
from ipu_teach.validation import BadFileError


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps({"name": "[" * 500 + '\\" {{{' + "]" * 3, "list": [[1, "]]]"]]})
    assert json_depth(text.encode()) == 3
    assert parse_json(text.encode(), "f.json", "file", "fix it")["list"] == [[1, "]]]"]]


def test_nesting_up_to_the_limit_is_read_and_one_more_refused():
    assert parse_json(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH, "f.json", "file", "fix it")
    with pytest.raises(BadFileError, match="f.json is not a valid file: its JSON nests 101 levels deep"):
        parse_json(b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), "f.json", "file", "fix it")


def npz_with(entry: bytes) -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as archive:
        archive.writestr("a.npy", entry)
    return stream.getvalue()


def opened(data: bytes):
    with open_npz(data, "test archive", "make it again", label="t.npz") as npz:
        return npz.headers


def test_an_array_of_python_objects_is_refused_from_its_header_with_no_allow_pickle_hint():
    stream = io.BytesIO()
    np.save(stream, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(BadFileError, match="its entry 'a.npy' holds Python objects") as refused:
        opened(npz_with(stream.getvalue()))
    assert "allow_pickle" not in str(refused.value)


def test_a_header_declaring_two_gigabytes_of_header_is_refused_unread():
    entry = b"\x93NUMPY\x02\x00" + struct.pack("<I", 2**31)  # numpy would read 2 GiB before checking it
    with pytest.raises(BadFileError, match="its entry 'a.npy' has a header of 2,147,483,648 bytes"):
        opened(npz_with(entry))


def test_declared_headers_are_read_without_the_data():
    stream = io.BytesIO()
    np.save(stream, np.zeros((3, 5), np.float32))
    assert {name: (h.shape, str(h.dtype), h.nbytes) for name, h in opened(npz_with(stream.getvalue())).items()} == {
        "a": ((3, 5), "float32", 60)
    }
