"""Python pickles of plain data, read without Python's pickle machinery: no function is ever called.

Keras' own copies of some data sets are pickles (CIFAR-10's ``cifar-10-batches-py``, the sequences in
``imdb.npz``). A pickle is a program for a small stack machine that may call any function it names, so
ipu-teach never hands one to ``pickle``. This reader runs the machine's data instructions itself (numbers,
strings, bytes, lists, tuples, dicts, the memo) and knows exactly three names, which it never calls: numpy's
``_reconstruct`` (or, in protocol 5, ``_frombuffer``) and ``dtype``, whose arguments and state it reads to
make the array itself (from its shape, its dtype code and its raw bytes, or its list of plain items), and
``_codecs.encode`` of a text as latin-1 (how Python 3 pickles bytes in protocol 2). Any other name,
instruction or shape is a BadFileError.
"""

from __future__ import annotations

import struct

import numpy as np

from ...validation import bad_file

_RECONSTRUCT = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct")}
_FROMBUFFER = {("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer")}  # protocol 5
_NDARRAY, _DTYPE, _ENCODE = ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode")
_KNOWN = _RECONSTRUCT | _FROMBUFFER | {_NDARRAY, _DTYPE, _ENCODE}
_MARK = object()


class _Name(tuple):
    """A (module, name) the pickle names; only ever compared, never looked up."""


class _ArrayToBe:
    """``_reconstruct(ndarray, ...)`` before its state (shape, dtype, data) arrives."""

    array = None


class _DtypeToBe:
    def __init__(self, dtype):
        self.dtype = dtype


class _Reader:
    def __init__(self, data: bytes, label, what: str, remedy: str):
        self.data, self.at, self.where = data, 0, (label, what, remedy)
        self.stack, self.memo = [], {}

    def fail(self, problem: str):
        return bad_file(*self.where[:2], problem, self.where[2])

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise self.fail("its pickle is cut short")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def number(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def pop_mark(self) -> list:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] is _MARK:
                items = self.stack[i + 1 :]
                del self.stack[i:]
                return items
        raise self.fail("its pickle closes a group it never opened")

    def pop(self):
        if not self.stack or self.stack[-1] is _MARK:
            raise self.fail("its pickle takes a value from an empty stack")
        return self.stack.pop()

    def run(self):
        while True:
            op = self.take(1)
            if op == b".":  # STOP
                return self.pop()
            handler = _OPS.get(op)
            if handler is None:
                raise self.fail(f"its pickle uses the instruction {op!r}, which plain data does not need")
            handler(self)

    # ----- calls, which are never made -----------------------------------------------------------------
    def reduce(self):
        arguments, callable_ = self.pop(), self.pop()
        if not isinstance(arguments, tuple):
            raise self.fail("its pickle calls with arguments that are not a tuple")
        if callable_ in _RECONSTRUCT and arguments[:1] == (_Name(_NDARRAY),):
            self.stack.append(_ArrayToBe())
        elif callable_ in _FROMBUFFER and len(arguments) == 4:
            values, dtype, shape, order = arguments
            self.stack.append(
                self._array(shape, dtype, order == "F", bytes(values) if isinstance(values, bytearray) else values)
            )
        elif callable_ == _DTYPE and arguments and isinstance(arguments[0], (str, bytes)):
            code = arguments[0].decode("latin1") if isinstance(arguments[0], bytes) else arguments[0]
            try:
                self.stack.append(_DtypeToBe(np.dtype(code)))
            except TypeError:
                raise self.fail(f"its pickle names the dtype {code[:20]!r}") from None
        elif (
            callable_ == _ENCODE and len(arguments) == 2 and arguments[1] == "latin1" and isinstance(arguments[0], str)
        ):
            self.stack.append(arguments[0].encode("latin1"))
        else:
            raise self.fail(f"its pickle calls {'.'.join(map(str, callable_))[:80]}, which is not plain data")

    def build(self):
        state, target = self.pop(), self.stack[-1] if self.stack else None
        if isinstance(target, _DtypeToBe) and isinstance(state, tuple) and len(state) >= 2:
            if state[1] == ">":
                target.dtype = target.dtype.newbyteorder(">")
        elif isinstance(target, _ArrayToBe) and isinstance(state, tuple) and len(state) == 5:
            _, shape, dtype, fortran, values = state
            target.array = self._array(shape, dtype, fortran, values)
            self.stack[-1] = target.array
        else:
            raise self.fail("its pickle sets the state of something that is not an array or dtype")

    def _array(self, shape, dtype, fortran, values):
        if not (
            isinstance(dtype, _DtypeToBe) and isinstance(shape, tuple) and all(type(d) is int and d >= 0 for d in shape)
        ):
            raise self.fail("its pickle describes an array without a shape or dtype")
        dtype, size = dtype.dtype, int(np.prod(shape, dtype=np.int64))
        order = "F" if fortran else "C"
        if dtype.hasobject:
            if not (isinstance(values, list) and len(values) == size):
                raise self.fail(f"its pickle gives an array of {size:,} objects another number of values")
            array = np.empty(size, dtype=object)
            array[:] = values
            return array.reshape(shape, order=order)
        if not isinstance(values, bytes) or len(values) != size * dtype.itemsize:
            raise self.fail(f"its pickle gives an array of shape {shape} and {dtype} the wrong number of bytes")
        return np.frombuffer(values, dtype=dtype).reshape(shape, order=order).copy()


def _global(reader):
    module = reader.data[reader.at :].split(b"\n", 1)[0]
    reader.take(len(module) + 1)
    name = reader.data[reader.at :].split(b"\n", 1)[0]
    reader.take(len(name) + 1)
    _push_name(reader, module.decode("latin1"), name.decode("latin1"))


def _stack_global(reader):
    name, module = reader.pop(), reader.pop()
    _push_name(reader, module, name)


def _push_name(reader, module, name):
    if (module, name) not in _KNOWN:
        raise reader.fail(f"its pickle names {str(module)[:40]}.{str(name)[:40]}, which is not plain data")
    reader.stack.append(_Name((module, name)))


def _memo_put(reader, key):
    if not reader.stack:
        raise reader.fail("its pickle stores a value from an empty stack")
    reader.memo[key] = reader.stack[-1]


def _memo_get(reader, key):
    if key not in reader.memo:
        raise reader.fail("its pickle uses a value it never stored")
    reader.stack.append(reader.memo[key])


def _append_items(reader, items):
    target = reader.stack[-1] if reader.stack else None
    if not isinstance(target, list):
        raise reader.fail("its pickle appends to something that is not a list")
    target.extend(items)


def _set_items(reader, items):
    target = reader.stack[-1] if reader.stack else None
    if not isinstance(target, dict) or len(items) % 2:
        raise reader.fail("its pickle sets items of something that is not a dict")
    for key, value in zip(items[::2], items[1::2]):
        if isinstance(key, (list, dict, np.ndarray)):
            raise reader.fail("its pickle uses a list or dict as a key")
        target[key] = value


def _text(reader, length_format):
    return reader.take(reader.number(length_format)).decode("utf8")


_OPS = {
    b"\x80": lambda r: r.take(1),  # PROTO
    b"\x95": lambda r: r.take(8),  # FRAME
    b"(": lambda r: r.stack.append(_MARK),
    b"N": lambda r: r.stack.append(None),
    b"\x88": lambda r: r.stack.append(True),
    b"\x89": lambda r: r.stack.append(False),
    b"J": lambda r: r.stack.append(r.number("<i")),
    b"K": lambda r: r.stack.append(r.number("<B")),
    b"M": lambda r: r.stack.append(r.number("<H")),
    b"\x8a": lambda r: r.stack.append(int.from_bytes(r.take(r.number("<B")), "little", signed=True)),
    b"G": lambda r: r.stack.append(r.number(">d")),
    b"U": lambda r: r.stack.append(r.take(r.number("<B"))),  # Python 2 str, read as bytes (as encoding="bytes")
    b"T": lambda r: r.stack.append(r.take(r.number("<I"))),
    b"C": lambda r: r.stack.append(r.take(r.number("<B"))),
    b"B": lambda r: r.stack.append(r.take(r.number("<I"))),
    b"\x8e": lambda r: r.stack.append(r.take(r.number("<Q"))),  # BINBYTES8
    b"\x96": lambda r: r.stack.append(bytearray(r.take(r.number("<Q")))),  # BYTEARRAY8
    b"X": lambda r: r.stack.append(_text(r, "<I")),
    b"\x8c": lambda r: r.stack.append(_text(r, "<B")),
    b"]": lambda r: r.stack.append([]),
    b")": lambda r: r.stack.append(()),
    b"}": lambda r: r.stack.append({}),
    b"l": lambda r: r.stack.append(r.pop_mark()),
    b"t": lambda r: r.stack.append(tuple(r.pop_mark())),
    b"\x85": lambda r: r.stack.append((r.pop(),)),
    b"\x86": lambda r: r.stack.append(tuple(reversed([r.pop(), r.pop()]))),
    b"\x87": lambda r: r.stack.append(tuple(reversed([r.pop(), r.pop(), r.pop()]))),
    b"a": lambda r: _append_items(r, [r.pop()]),
    b"e": lambda r: _append_items(r, r.pop_mark()),
    b"s": lambda r: _set_items(r, list(reversed([r.pop(), r.pop()]))),
    b"u": lambda r: _set_items(r, r.pop_mark()),
    b"q": lambda r: _memo_put(r, r.number("<B")),
    b"r": lambda r: _memo_put(r, r.number("<I")),
    b"\x94": lambda r: _memo_put(r, len(r.memo)),
    b"h": lambda r: _memo_get(r, r.number("<B")),
    b"j": lambda r: _memo_get(r, r.number("<I")),
    b"c": _global,
    b"\x93": _stack_global,
    b"R": _Reader.reduce,
    b"b": _Reader.build,
}


def loads(data: bytes, label, what: str, remedy: str):
    """The plain data the pickle ``data`` (from the file ``label``) holds; BadFileError for anything else."""
    return _Reader(data, label, what, remedy).run()
