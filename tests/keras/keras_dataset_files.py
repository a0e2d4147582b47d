"""Small data-set files in exactly the formats Keras keeps in its cache folder, made from a seed: shared by
tools/make_dataset_goldens.py (which loads them with real tf-keras) and tests/keras/test_keras_datasets.py
(which loads them with ipu-teach and compares). The pickles are written here as the input format under test;
ipu-teach never unpickles them."""

import gzip
import hashlib
import pickle

import numpy as np

IMDB_OPTIONS = {
    "defaults": {},
    "num_words_skip_top_maxlen": {"num_words": 12, "skip_top": 2, "maxlen": 7},
    "no_oov_no_start": {"oov_char": None, "start_char": None, "index_from": 2, "seed": 7},
}


def _idx(values: np.ndarray) -> bytes:
    header = (0x800 + values.ndim).to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in values.shape)
    return gzip.compress(header + values.astype(np.uint8).tobytes(), mtime=0)


def write_cache(folder) -> None:
    """imdb.npz, fashion-mnist/*.gz and cifar-10-batches-py/ in ``folder`` (a Keras ``datasets`` folder)."""
    rng = np.random.default_rng(25)
    folder.mkdir(parents=True, exist_ok=True)

    def reviews(n):
        array = np.empty(n, dtype=object)
        array[:] = [rng.integers(1, 20, rng.integers(1, 9)).tolist() for _ in range(n)]
        return array

    np.savez(
        folder / "imdb.npz",
        x_train=reviews(12),
        y_train=rng.integers(0, 2, 12),
        x_test=reviews(6),
        y_test=rng.integers(0, 2, 6),
    )
    fashion = folder / "fashion-mnist"
    fashion.mkdir(exist_ok=True)
    for split, n in (("train", 6), ("t10k", 3)):
        (fashion / f"{split}-labels-idx1-ubyte.gz").write_bytes(_idx(rng.integers(0, 10, n)))
        (fashion / f"{split}-images-idx3-ubyte.gz").write_bytes(_idx(rng.integers(0, 256, (n, 28, 28))))
    cifar = folder / "cifar-10-batches-py"
    cifar.mkdir(exist_ok=True)
    for name in (*(f"data_batch_{i}" for i in range(1, 6)), "test_batch"):
        batch = {
            b"batch_label": name.encode(),
            b"labels": rng.integers(0, 10, 2).tolist(),
            b"data": rng.integers(0, 256, (2, 3072)).astype(np.uint8),
            b"filenames": [b"a.png", b"b.png"],
        }
        (cifar / name).write_bytes(pickle.dumps(batch, protocol=2))


def described(array):
    """Small arrays as lists; images by shape, dtype and the sha256 of their bytes (the fixture stays small)."""
    array = np.asarray(array)
    if array.dtype == object or array.size <= 100:
        return array.tolist()
    return {"shape": list(array.shape), "dtype": array.dtype.str, "sha256": hashlib.sha256(array.tobytes()).hexdigest()}
