"""Check ipu-teach's TensorBoard event files with real TensorFlow and TensorBoard; record what they read.

Runs ONLY in the reference environment (TensorFlow, tf-keras 2.21 and TensorBoard; never a run-time or test
dependency of ipu-teach), with ipu-teach importable from the checkout:

    PYTHONPATH=. nice /work/refenv/bin/python tools/make_tensorboard_goldens.py   # tests/keras/golden/tensorboard.json

1. ipu-teach writes tests/keras/tensorboard_scenario.py's ``tf.summary`` calls and fit with the TensorBoard
   callback (wall time fixed); TensorFlow's ``tf.compat.v1.train.summary_iterator`` reads every record back
   (it checks the records' CRCs) and TensorBoard's ``EventAccumulator`` loads each folder, as the TensorBoard
   server does. The records' bytes, what TensorFlow decoded and the tags TensorBoard found are recorded.
2. Real tf-keras runs the same fit with its own TensorBoard callback; its tags, steps and logged values are
   recorded, for the tests to compare ipu-teach's callback with.
"""

import json
import os
import pathlib
import sys
import tempfile
import types

os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import tensorboard  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "keras"))
import tensorboard_scenario as scenario  # noqa: E402

import ipu_teach.keras as ipu_keras  # noqa: E402
import ipu_teach.tensorflow as ipu_tf  # noqa: E402
from ipu_teach.keras import event_files  # noqa: E402

OUT = REPO / "tests" / "keras" / "golden" / "tensorboard.json"


def decoded(value) -> dict:
    """What TensorFlow's protobuf classes read from one summary value."""
    if value.HasField("simple_value"):
        return {"tag": value.tag, "scalar": value.simple_value}
    if value.HasField("histo"):
        h = value.histo
        return {
            "tag": value.tag,
            "histogram": {
                "min": h.min,
                "max": h.max,
                "num": h.num,
                "sum": h.sum,
                "sum_squares": h.sum_squares,
                "bucket_limit": list(h.bucket_limit),
                "bucket": list(h.bucket),
            },
        }
    array = tf.make_ndarray(value.tensor)
    if value.metadata.plugin_data.plugin_name == "images":
        images = [tf.io.decode_png(png).numpy()[..., 0].tolist() for png in array[2:]]
        return {"tag": value.tag, "plugin": "images", "width_height": [int(array[0]), int(array[1])], "images": images}
    return {"tag": value.tag, "plugin": value.metadata.plugin_data.plugin_name, "tensor": array.tolist()}


def read_folder(folder) -> dict:
    (name,) = [n for n in os.listdir(folder) if n.startswith("events.out.tfevents.")]
    path = os.path.join(folder, name)
    events = []
    for e in tf.compat.v1.train.summary_iterator(path):
        if e.file_version:
            events.append({"file_version": e.file_version, "wall_time": e.wall_time})
        for value in e.summary.value:
            events.append({"step": e.step, "wall_time": e.wall_time, **decoded(value)})
    accumulator = event_accumulator.EventAccumulator(folder, size_guidance={"images": 0, "histograms": 0})
    accumulator.Reload()
    tags = {kind: sorted(found) for kind, found in accumulator.Tags().items() if isinstance(found, list) and found}
    return {"path": path, "events": events, "tensorboard_tags": tags}


def records(path) -> list:
    """Each record's data, hex: the TFRecord framing is checked by summary_iterator (CRCs) above."""
    data, out = pathlib.Path(path).read_bytes(), []
    while data:
        length = int.from_bytes(data[:8], "little")
        out.append(data[12 : 12 + length].hex())
        data = data[12 + length + 4 :]
    return out


def ipu_teach_files(folder) -> dict:
    event_files.time = types.SimpleNamespace(time=lambda: scenario.WALL_TIME)  # reproducible bytes
    scenario.write_summaries(ipu_tf, folder)
    scenario.fit_with_tensorboard(ipu_keras, folder)
    found = {}
    for kind in ("summary", "fit/train", "fit/validation"):
        read = read_folder(os.path.join(folder, kind))
        found[kind] = {"records": records(read.pop("path")), **read}
    return found


def keras_callback(folder) -> dict:
    keras.utils.set_random_seed(0)
    scenario.fit_with_tensorboard(keras, folder)
    found = {}
    for kind in ("train", "validation"):
        read = read_folder(os.path.join(folder, "fit", kind))
        found[kind] = [
            {
                "step": e["step"],
                "tag": e["tag"],
                **({"value": e["tensor"]} if "tensor" in e and e["plugin"] == "scalars" else {}),
            }
            for e in read["events"]
            if "tag" in e
        ]
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as mine, tempfile.TemporaryDirectory() as theirs:
        content = {
            "made_with": f"tensorflow {tf.__version__}, tf-keras {keras.__version__}, "
            f"tensorboard {tensorboard.__version__}",
            "ipu_teach": ipu_teach_files(mine),
            "keras_callback": keras_callback(theirs),
        }
    OUT.write_text(json.dumps(content, separators=(",", ":")) + "\n")
    print(f"{OUT.relative_to(REPO)}: {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
