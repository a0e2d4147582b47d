"""``tools/training_fingerprint.py`` tells whether an engine change changed any number: byte for byte."""

import importlib.util
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("training_fingerprint", REPO_ROOT / "tools" / "training_fingerprint.py")
training_fingerprint = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(training_fingerprint)

BEFORE = {"w": np.array([1.0, 0.0], np.float32), "loss": np.array([0.5, 0.25])}


def test_identical_fingerprints_have_no_differences():
    assert training_fingerprint.differences(BEFORE, {k: v.copy() for k, v in BEFORE.items()}) == []


def test_a_last_bit_a_zeros_sign_a_type_and_a_missing_array_are_differences():
    last_bit = dict(BEFORE, w=np.nextafter(BEFORE["w"], np.float32(2)))
    signed_zero = dict(BEFORE, w=np.array([1.0, -0.0], np.float32))  # equal to np.array_equal, not in its bytes
    assert np.array_equal(signed_zero["w"], BEFORE["w"])
    wider = dict(BEFORE, w=BEFORE["w"].astype(np.float64))
    for changed in (last_bit, signed_zero, wider):
        assert training_fingerprint.differences(BEFORE, changed) == ["w"]
    assert training_fingerprint.differences(BEFORE, {"w": BEFORE["w"]}) == ["loss"]


def test_compare_prints_what_differs_and_exits_1(tmp_path, capsys):
    same, other = tmp_path / "same.npz", tmp_path / "other.npz"
    np.savez(same, **BEFORE)
    np.savez(other, **dict(BEFORE, loss=np.array([0.5, 0.2500001])))
    assert training_fingerprint.main(["--compare", str(same), str(same)]) == 0
    assert capsys.readouterr().out == "identical: 2 arrays, byte for byte\n"
    assert training_fingerprint.main(["--compare", str(same), str(other)]) == 1
    assert capsys.readouterr().out == "differ: loss\n"
