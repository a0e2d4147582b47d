"""Load tests/keras/keras_dataset_files.py's small files with real tf-keras' ``load_data``; record what it returns.

Runs ONLY in the reference environment with tf-keras 2.21 (never a run-time or test dependency of ipu-teach):

    PYTHONPATH=. nice /work/refenv/bin/python tools/make_dataset_goldens.py    # tests/keras/golden/datasets.json

Keras' ``get_file`` is pointed at the files (it would download the real data sets); everything after it is
Keras' own code: IMDB's shuffle, offsets, ``maxlen``, ``num_words``, ``skip_top`` and ``oov_char``, Fashion-MNIST's
IDX parsing, CIFAR-10's pickled batches (``cifar.load_batch``; ``cifar10.load_data`` then stacks them and
moves the channels last). tests/keras/test_keras_datasets.py gives ipu-teach the same files.
"""

import json
import os
import pathlib
import sys
import tempfile

os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import tf_keras as keras  # noqa: E402
from tf_keras.src.datasets import fashion_mnist, imdb  # noqa: E402
from tf_keras.src.datasets.cifar import load_batch  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "keras"))
import keras_dataset_files as files  # noqa: E402

OUT = REPO / "tests" / "keras" / "golden" / "datasets.json"


def plain(splits):
    return [[files.described(array) for array in split] for split in splits]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        cache = pathlib.Path(folder) / "datasets"
        files.write_cache(cache)
        imdb.get_file = lambda *args, **kwargs: str(cache / "imdb.npz")
        fashion_mnist.get_file = lambda fname, **kwargs: str(cache / "fashion-mnist" / fname)
        content = {
            "made_with": f"tf-keras {keras.__version__}",
            "imdb": {name: plain(imdb.load_data(**options)) for name, options in files.IMDB_OPTIONS.items()},
            "fashion_mnist": plain(fashion_mnist.load_data()),
            # cifar10.load_data expects 10,000 images per batch: each batch as its load_batch reads it
            "cifar10_batches": {
                name: [files.described(array) for array in load_batch(str(cache / "cifar-10-batches-py" / name))]
                for name in (*(f"data_batch_{i}" for i in range(1, 6)), "test_batch")
            },
        }
    OUT.write_text(json.dumps(content, separators=(",", ":")) + "\n")
    print(f"{OUT.relative_to(REPO)}: {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
