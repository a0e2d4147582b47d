"""``tf.summary`` and ``keras.callbacks.TensorBoard`` write event files real TensorFlow and TensorBoard read.

golden/tensorboard.json was made by tools/make_tensorboard_goldens.py: real TensorFlow's summary_iterator
read the event files ipu-teach wrote for tensorboard_scenario.py (checking every record's CRC), TensorBoard's
EventAccumulator loaded them, and real tf-keras' own TensorBoard callback ran the same fit. The tests check
that ipu-teach still writes those very bytes, that what TensorFlow decoded is what was meant, and that the
callback writes Keras' tags, steps and values.
"""

import json
import os
import struct
import types
from pathlib import Path

import numpy as np
import pytest
import tensorboard_scenario as scenario

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach.keras import event_files
from ipu_teach.not_simulated import NotSimulatedError

GOLDEN = json.loads((Path(__file__).resolve().parent / "golden" / "tensorboard.json").read_text())
FOLDERS = ("summary", "fit/train", "fit/validation")


def _records(path) -> list:
    """Each record's data, checking the TFRecord framing and both CRCs on the way."""
    data, found = Path(path).read_bytes(), []
    while data:
        length = data[:8]
        assert int.from_bytes(data[8:12], "little") == event_files.masked_crc(length)
        size = int.from_bytes(length, "little")
        payload = data[12 : 12 + size]
        assert int.from_bytes(data[12 + size : 16 + size], "little") == event_files.masked_crc(payload)
        found.append(payload.hex())
        data = data[16 + size :]
    return found


@pytest.fixture
def written(tmp_path, monkeypatch):
    monkeypatch.setattr(event_files, "time", types.SimpleNamespace(time=lambda: scenario.WALL_TIME))
    scenario.write_summaries(tf, tmp_path)
    scenario.fit_with_tensorboard(keras, tmp_path)
    return tmp_path


def _events(golden_folder, tag):
    return [e for e in GOLDEN["ipu_teach"][golden_folder]["events"] if e.get("tag") == tag]


def _varint(data, i):
    value, shift = 0, 0
    while True:
        value |= (data[i] & 0x7F) << shift
        shift, i = shift + 7, i + 1
        if not data[i - 1] & 0x80:
            return value, i


def _fields(data) -> list:
    """A protocol buffer's (field number, value): integers, doubles, floats, or bytes (strings, messages)."""
    found, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        kind = key & 7
        if kind == 0:
            value, i = _varint(data, i)
        elif kind in (1, 5):
            size = 8 if kind == 1 else 4
            value, i = struct.unpack("<d" if kind == 1 else "<f", data[i : i + size])[0], i + size
        else:
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        found.append((key >> 3, value))
    return found


def _view(record_hex) -> tuple:
    """An event's step and, per summary value, its tag and what it holds (histograms' arrays and images' sizes
    as numbers), to compare with float tolerance: training's numbers differ in their last bit across CPUs."""
    event = dict(_fields(bytes.fromhex(record_hex)))
    values = []
    for _, value in _fields(event.get(5, b"")):
        fields = dict(_fields(value))
        if 2 in fields:
            values.append((fields[1], "scalar", fields[2]))
        elif 5 in fields:
            histo = dict(_fields(fields[5]))
            arrays = [np.frombuffer(histo[k], "<f8").tolist() for k in (6, 7)]
            values.append((fields[1], "histogram", [histo[k] for k in (1, 2, 3, 4, 5)] + arrays))
        else:
            strings = [v for k, v in _fields(fields[8]) if k == 8]
            values.append((fields[1], "images", [int(strings[0]), int(strings[1]), len(strings) - 2]))
    return event.get(2), values


def _flat(views) -> list:
    numbers = []
    for step, values in views:
        for tag, kind, held in values:
            numbers += [step, tag, kind] + list(np.ravel(np.hstack(held) if kind == "histogram" else held))
    return numbers


@pytest.mark.parametrize("folder", FOLDERS)
def test_ipu_teach_writes_the_event_files_tensorflow_read(written, folder):
    (name,) = os.listdir(written / folder)
    assert name.startswith("events.out.tfevents.1700000000.") and name.endswith(".v2")
    records, golden = _records(written / folder / name), GOLDEN["ipu_teach"][folder]["records"]
    if folder == "summary":  # fixed inputs: the very bytes TensorFlow read
        assert records == golden
    else:
        mine, theirs = _flat(map(_view, records)), _flat(map(_view, golden))
        assert [type(v) for v in mine] == [type(v) for v in theirs]
        assert mine == [pytest.approx(v, rel=1e-5, abs=1e-6) if isinstance(v, float) else v for v in theirs]


def test_crc32c_is_castagnolis():
    assert event_files.crc32c(b"123456789") == 0xE3069283  # the standard check value of CRC-32C


def test_what_tensorflow_decoded_is_what_the_summaries_said():
    assert _events("summary", "loss") == [{"step": 3, "wall_time": scenario.WALL_TIME, "tag": "loss", "scalar": 0.25}]
    assert [(e["step"], e["scalar"]) for e in _events("summary", "accuracy")] == [(7, 0.75)]  # experimental.set_step
    (histogram,) = _events("summary", "weights")
    values = np.linspace(-1, 1, 11)
    counts, edges = np.histogram(values, bins=4)
    assert histogram["histogram"] == {
        "min": -1.0,
        "max": 1.0,
        "num": 11.0,
        "sum": pytest.approx(0.0, abs=1e-12),
        "sum_squares": pytest.approx(float((values**2).sum())),
        "bucket_limit": pytest.approx(list(edges[1:])),
        "bucket": list(map(float, counts)),
    }
    (pictures,) = _events("summary", "pictures")
    assert pictures["plugin"] == "images" and pictures["width_height"] == [5, 4]
    expected = np.round(scenario.IMAGES[:2, ..., 0] * 255).astype(int)  # max_outputs=2; floats in [0, 1]
    np.testing.assert_array_equal(np.array(pictures["images"]), expected)  # decoded by tf.io.decode_png


def test_tensorboard_opens_every_folder():
    tags = {folder: GOLDEN["ipu_teach"][folder]["tensorboard_tags"] for folder in FOLDERS}
    assert tags["summary"]["scalars"] == ["accuracy", "loss"] and tags["summary"]["histograms"] == ["weights"]
    assert tags["summary"]["tensors"] == ["pictures"]
    assert tags["fit/train"]["histograms"] == [
        f"{w}_0/histogram" for w in ("hidden/bias", "hidden/kernel", "out/bias", "out/kernel")
    ]
    assert tags["fit/validation"]["scalars"] == [
        "epoch_accuracy",
        "epoch_loss",
        "evaluation_accuracy_vs_iterations",
        "evaluation_loss_vs_iterations",
    ]


@pytest.mark.parametrize("folder", ["train", "validation"])
def test_the_callback_writes_keras_tags_steps_and_values(folder):
    """Keras' events in order; ipu-teach also writes batch_* every update_freq batches, as Keras documents it
    (tf-keras 2.21 only writes them while its profiler traces)."""
    keras_events = GOLDEN["keras_callback"][folder]
    mine = [
        e for e in GOLDEN["ipu_teach"][f"fit/{folder}"]["events"] if "tag" in e and not e["tag"].startswith("batch_")
    ]
    assert [(e["step"], e["tag"]) for e in mine] == [(e["step"], e["tag"]) for e in keras_events]
    for ours, theirs in zip(mine, keras_events):
        if "value" in theirs:
            assert ours["scalar"] == pytest.approx(theirs["value"], rel=1e-6)
    batch = [
        (e["step"], e["tag"])
        for e in GOLDEN["ipu_teach"][f"fit/{folder}"]["events"]
        if e.get("tag", "").startswith("batch_")
    ]
    assert batch == (
        [(2, "batch_loss"), (2, "batch_accuracy"), (4, "batch_loss"), (4, "batch_accuracy")]
        if folder == "train"
        else []
    )


# ----- tf.summary's rules ---------------------------------------------------------------------------------
def test_without_a_default_writer_nothing_is_written(tmp_path):
    writer = tf.summary.create_file_writer(tmp_path / "logs")
    assert tf.summary.scalar("loss", 1.0, step=0) is False
    with writer.as_default():
        assert tf.summary.scalar("loss", 1.0, step=0) is True
        with tf.summary.record_if(False):
            assert tf.summary.scalar("loss", 2.0, step=1) is False
    assert tf.summary.scalar("loss", 3.0, step=2) is False
    (name,) = os.listdir(tmp_path / "logs")
    assert len(_records(tmp_path / "logs" / name)) == 2  # the file version and one scalar


def test_a_summary_without_a_step_is_tensorflows_error(tmp_path):
    with tf.summary.create_file_writer(tmp_path).as_default():
        with pytest.raises(ValueError, match="No step set. Please specify one either through the `step` argument"):
            tf.summary.scalar("loss", 1.0)
    with tf.summary.create_file_writer(tmp_path).as_default(step=5):  # as_default's step is the default step
        assert tf.summary.scalar("loss", 1.0)


def test_bad_summaries_say_what_is_wrong(tmp_path):
    with tf.summary.create_file_writer(tmp_path).as_default(step=0):
        with pytest.raises(ValueError, match=r"data must have shape \[k, height, width, channels\] with 1, 3 or 4"):
            tf.summary.image("x", np.zeros((4, 4)))
        with pytest.raises(ValueError, match=r"data must be a scalar, got shape \(2,\)"):
            tf.summary.scalar("x", [1.0, 2.0])
    with pytest.raises(NotSimulatedError, match="tf.summary.audio is not simulated by ipu-teach"):
        tf.summary.audio  # noqa: B018


def test_tensorboard_rejects_a_meaningless_update_freq():
    with pytest.raises(ValueError, match='update_freq must be "epoch", "batch" or a positive integer, got 0'):
        keras.callbacks.TensorBoard(update_freq=0)
