"""keras.datasets.imdb, fashion_mnist and cifar10 read Keras' cache folder as Keras does (issue 25).

golden/datasets.json holds what real tf-keras' load_data returned for keras_dataset_files.py's small files
(tools/make_dataset_goldens.py); ipu-teach is given the same files in a KERAS_HOME and must return the same.
"""

import gzip
import json
import pickle
import zipfile
from pathlib import Path

import pytest
from keras_dataset_files import IMDB_OPTIONS, described, write_cache

from ipu_teach import keras
from ipu_teach.keras.datasets.keras_cache import DatasetNotFoundError
from ipu_teach.validation import BadFileError

GOLDEN = json.loads((Path(__file__).resolve().parent / "golden" / "datasets.json").read_text())


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    monkeypatch.delenv("IPU_TEACH_CIFAR10", raising=False)
    folder = tmp_path / "keras" / "datasets"
    write_cache(folder)
    monkeypatch.setattr(pickle, "loads", None)  # nothing is unpickled on the way
    monkeypatch.setattr(pickle, "Unpickler", None)
    return folder


def _described(splits):
    return [[described(array) for array in split] for split in splits]


@pytest.mark.parametrize("options", sorted(IMDB_OPTIONS))
def test_imdb_returns_what_keras_returns(cache, options):
    (x_train, y_train), (x_test, y_test) = keras.datasets.imdb.load_data(**IMDB_OPTIONS[options])
    assert x_train.dtype == object and isinstance(x_train[0], list)
    assert _described([(x_train, y_train), (x_test, y_test)]) == GOLDEN["imdb"][options]


def test_imdb_maxlen_that_keeps_nothing_is_keras_error(cache):
    with pytest.raises(ValueError, match="After filtering for sequences shorter than maxlen=1, no sequence was kept"):
        keras.datasets.imdb.load_data(maxlen=1)


def test_fashion_mnist_returns_what_keras_returns(cache):
    assert _described(keras.datasets.fashion_mnist.load_data()) == GOLDEN["fashion_mnist"]


def test_cifar10_reads_keras_pickled_batches_as_keras_does(cache, capsys):
    (x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data()
    batches = GOLDEN["cifar10_batches"]
    for i, name in enumerate((*(f"data_batch_{k}" for k in range(1, 6)), "test_batch")):
        x, y = (x_train[2 * i : 2 * i + 2], y_train[2 * i : 2 * i + 2]) if i < 5 else (x_test, y_test)
        # Keras' load_batch gives (n, 3, 32, 32); its load_data moves the channels last and makes labels (n, 1)
        assert described(x.transpose(0, 3, 1, 2)) == batches[name][0]
        assert y[:, 0].tolist() == batches[name][1]
    assert "cifar-10-batches-py (10 train / 2 test)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("load", "missing"),
    [
        (lambda: keras.datasets.imdb.load_data(), "imdb.npz"),
        (lambda: keras.datasets.imdb.get_word_index(), "imdb_word_index.json"),
        (lambda: keras.datasets.fashion_mnist.load_data(), "fashion-mnist/train-labels-idx1-ubyte.gz"),
    ],
)
def test_a_missing_file_is_named_with_its_folder(tmp_path, monkeypatch, load, missing):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "empty"))
    path = tmp_path / "empty" / "datasets" / missing
    with pytest.raises(
        DatasetNotFoundError, match=rf"{path} not found. ipu-teach downloads nothing: put .* in {path.parent}"
    ):
        load()


def test_a_pickle_inside_imdb_that_calls_a_function_is_refused(cache, tmp_path):
    flag = tmp_path / "owned"
    evil = f"cos\nsystem\n(S'touch {flag}'\ntR.".encode()
    with zipfile.ZipFile(cache / "imdb.npz") as archive:
        data = archive.read("x_test.npy")
    header_end = data.index(b"\n") + 1
    with zipfile.ZipFile(cache / "bad.npz", "w") as bad, zipfile.ZipFile(cache / "imdb.npz") as good:
        for name in good.namelist():
            bad.writestr(name, data[:header_end] + evil if name == "x_test.npy" else good.read(name))
    with pytest.raises(
        BadFileError, match=r"bad.npz \(x_test.npy\) is not a valid IMDB data set: its pickle names os.system"
    ):
        keras.datasets.imdb.load_data(path="bad.npz")
    assert not flag.exists()


def test_a_fashion_mnist_file_that_is_not_idx_is_refused(cache):
    (cache / "fashion-mnist" / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(b"not an idx file at all"))
    with pytest.raises(
        BadFileError, match="t10k-images-idx3-ubyte.gz is not a valid Fashion-MNIST file: it is not an IDX"
    ):
        keras.datasets.fashion_mnist.load_data()
