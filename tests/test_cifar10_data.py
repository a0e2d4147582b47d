"""keras.datasets.cifar10.load_data and the workshop slides' CIFAR-10 hands-on (issue 21): CIFAR-10 from a copy
the user provides (binary version, .npz, or Keras' pickled copy read as plain data, never unpickled), else a clear
message and the synthetic-data switch."""

import io
import os
import pickle
import tarfile
from pathlib import Path

import numpy as np
import pytest
from script_runner import run_script

import ipu_teach.tensorflow as tf
from ipu_teach import keras
from ipu_teach.keras.datasets import cifar10
from ipu_teach.validation import BadFileError

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "workshop" / "cifar10_keras.py"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty Keras cache folder (KERAS_HOME), no IPU_TEACH_CIFAR10, no TF_POPLAR_FLAGS."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    monkeypatch.delenv(cifar10.ENV_VAR, raising=False)
    monkeypatch.delenv("TF_POPLAR_FLAGS", raising=False)
    folder = tmp_path / "keras" / "datasets"
    folder.mkdir(parents=True)
    return folder


def records(labels, seed=0):
    """CIFAR-10 binary records: a label byte, then the red, green and blue 32x32 planes; and the images as
    Keras returns them (channels last)."""
    rng = np.random.default_rng(seed)
    planes = rng.integers(0, 256, (len(labels), 3, 32, 32), dtype=np.uint8)
    raw = np.concatenate([np.array(labels, np.uint8)[:, None], planes.reshape(len(labels), -1)], axis=1)
    return raw.tobytes(), planes.transpose(0, 2, 3, 1)


def batch_files(per_file=3):
    files, images, labels = {}, {}, {}
    for i, name in enumerate((*cifar10.TRAIN_FILES, cifar10.TEST_FILE)):
        wanted = [(i + k) % 10 for k in range(per_file)]
        files[name], images[name] = records(wanted, seed=i)
        labels[name] = wanted
    return files, images, labels


def write_archive(path, files, member=lambda name: f"cifar-10-batches-bin/{name}"):
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(member(name))
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def check_matches(data, images, labels):
    (x_train, y_train), (x_test, y_test) = data
    train_names = cifar10.TRAIN_FILES
    np.testing.assert_array_equal(x_train, np.concatenate([images[n] for n in train_names]))
    np.testing.assert_array_equal(y_train[:, 0], np.concatenate([labels[n] for n in train_names]))
    np.testing.assert_array_equal(x_test, images[cifar10.TEST_FILE])
    assert x_train.dtype == y_train.dtype == np.uint8 and y_test.shape == (len(x_test), 1)


def test_the_binary_archive_in_keras_cache_is_read_channels_last_with_labels_n_by_1(cache, capsys):
    files, images, labels = batch_files()
    archive = write_archive(cache / "cifar-10-binary.tar.gz", files)
    data = keras.datasets.cifar10.load_data()
    check_matches(data, images, labels)
    assert capsys.readouterr().out == f"ipu-teach: CIFAR-10 from {archive} (15 train / 3 test)\n"
    # the first image's pixel (row 0, column 1) is the record's bytes 1 + 1, 1 + 1024 + 1, 1 + 2048 + 1
    raw = np.frombuffer(files["data_batch_1.bin"], np.uint8)
    assert data[0][0][0, 0, 1].tolist() == [raw[2], raw[1026], raw[2050]]


def test_the_unpacked_folder_and_an_npz_named_by_path_or_variable_are_read(cache, tmp_path, monkeypatch, capsys):
    files, images, labels = batch_files()
    folder = cache / cifar10.BINARY_FOLDER
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    check_matches(cifar10.load_data(), images, labels)
    (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    npz = tmp_path / "mine.npz"
    np.savez(npz, x_train=x_train, y_train=y_train[:, 0], x_test=x_test, y_test=y_test)
    check_matches(cifar10.load_data(npz), images, labels)
    monkeypatch.setenv(cifar10.ENV_VAR, str(npz))
    capsys.readouterr()
    check_matches(cifar10.load_data(), images, labels)
    assert f"(named by {cifar10.ENV_VAR})" in capsys.readouterr().out


def test_without_data_the_error_says_where_to_put_it_and_how_to_train_on_synthetic_data(cache):
    with pytest.raises(cifar10.Cifar10NotFoundError) as caught:
        cifar10.load_data()
    message = str(caught.value)
    assert message.startswith("CIFAR-10 not found; put CIFAR-10's binary version (cifar-10-binary.tar.gz")
    assert f"in {cache}" in message and "TF_POPLAR_FLAGS=--use_synthetic_data" in message
    assert isinstance(caught.value, FileNotFoundError)


def pickled_batches(folder, per_file=3):
    """Keras' cifar-10-batches-py as CIFAR-10's page describes it: per batch a pickled dict with bytes keys
    (Python 2's str), ``data`` uint8 (n, 3072) in red, green, blue planes, ``labels`` a list of ints."""
    folder.mkdir()
    files, images, labels = batch_files(per_file)
    for binary, name in zip((*cifar10.TRAIN_FILES, cifar10.TEST_FILE), cifar10.PICKLED_FILES):
        raw = np.frombuffer(files[binary], np.uint8).reshape(per_file, -1)
        batch = {b"batch_label": b"batch", b"labels": raw[:, 0].tolist(), b"data": raw[:, 1:].copy(), b"filenames": []}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))  # the input format under test, never loaded
    return files, images, labels


def test_keras_pickled_copy_is_read_as_plain_data_never_unpickled(cache, capsys, monkeypatch):
    _, images, labels = pickled_batches(cache / cifar10.PICKLED_FOLDER)
    monkeypatch.setattr(pickle, "loads", None)  # not given to pickle
    monkeypatch.setattr(pickle, "Unpickler", None)
    check_matches(keras.datasets.cifar10.load_data(), images, labels)
    assert capsys.readouterr().out == f"ipu-teach: CIFAR-10 from {cache / cifar10.PICKLED_FOLDER} (15 train / 3 test)\n"


def test_a_pickle_that_calls_a_function_is_refused_and_nothing_runs(cache, tmp_path):
    pickled_batches(cache / cifar10.PICKLED_FOLDER)
    flag = tmp_path / "owned"
    (cache / cifar10.PICKLED_FOLDER / "data_batch_1").write_bytes(f"cos\nsystem\n(S'touch {flag}'\ntR.".encode())
    with pytest.raises(BadFileError, match="data_batch_1 is not a valid CIFAR-10 data set: its pickle names os.system"):
        cifar10.load_data()
    assert not flag.exists()


@pytest.mark.parametrize(
    ("flags", "synthetic"),
    [
        ("--use_synthetic_data", True),
        ("--use_synthetic_data=true --synthetic_data_initializer=random", True),
        ("--use_synthetic_data=false", False),
        ("--executable_cache_path=/tmp/x", False),
    ],
)
def test_the_synthetic_data_switch_gives_cifar_shaped_data_and_says_so(cache, monkeypatch, capsys, flags, synthetic):
    monkeypatch.setenv("TF_POPLAR_FLAGS", flags)
    if not synthetic:
        with pytest.raises(cifar10.Cifar10NotFoundError):
            cifar10.load_data()
        return
    (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    assert (x_train.shape, y_train.shape, x_test.shape, y_test.shape) == (
        (2_560, 32, 32, 3),
        (2_560, 1),
        (512, 32, 32, 3),
        (512, 1),
    )
    assert "synthetic images of CIFAR-10's shapes (2,560 train / 512 test)" in capsys.readouterr().out


def test_a_provided_copy_wins_over_the_synthetic_switch(cache, monkeypatch):
    files, images, labels = batch_files()
    write_archive(cache / "cifar-10-binary.tar.gz", files)
    monkeypatch.setenv("TF_POPLAR_FLAGS", "--use_synthetic_data")
    check_matches(cifar10.load_data(), images, labels)


def test_names_that_lead_nowhere_are_errors_naming_them(cache, tmp_path, monkeypatch):
    with pytest.raises(cifar10.Cifar10NotFoundError, match="path='/nowhere/c.npz' does not exist"):
        cifar10.load_data("/nowhere/c.npz")
    monkeypatch.setenv(cifar10.ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(cifar10.Cifar10NotFoundError, match=f"{cifar10.ENV_VAR}=.*missing' names nothing"):
        cifar10.load_data()


def test_damaged_binary_data_is_refused_naming_the_file_and_the_fault(cache, tmp_path):
    files, _, _ = batch_files()
    cut = write_archive(tmp_path / "cut.tar.gz", {**files, "test_batch.bin": files["test_batch.bin"][:-5]})
    with pytest.raises(BadFileError, match=r"cut.tar.gz \(cifar-10-batches-bin/test_batch.bin\) is not a valid .*"):
        cifar10.load_data(cut)
    short = write_archive(tmp_path / "short.tar.gz", {k: v for k, v in files.items() if k != "data_batch_3.bin"})
    with pytest.raises(BadFileError, match="it has no cifar-10-batches-bin/data_batch_3.bin"):
        cifar10.load_data(short)
    bad_label, _ = records([3, 11, 2])
    wrong = write_archive(tmp_path / "wrong.tar.gz", {**files, "data_batch_2.bin": bad_label})
    with pytest.raises(BadFileError, match="a record has label 11, expected 0 to 9"):
        cifar10.load_data(wrong)
    text = tmp_path / "text.tar.gz"
    text.write_text("not an archive")
    with pytest.raises(BadFileError, match="text.tar.gz is not a valid CIFAR-10 data set: it is not a readable"):
        cifar10.load_data(text)


def test_an_npz_of_other_shapes_or_a_huge_declared_size_is_refused_before_it_is_read(tmp_path):
    fine = np.zeros((2, 32, 32, 3), np.uint8)
    gray = tmp_path / "gray.npz"
    np.savez(gray, x_train=np.zeros((2, 32, 32), np.uint8), y_train=np.zeros(2, np.uint8), x_test=fine, y_test=[[0]])
    with pytest.raises(BadFileError, match=r"x_train is uint8 \(2, 32, 32\), expected uint8 \(n, 32, 32, 3\)"):
        cifar10.load_data(gray)
    huge = tmp_path / "huge.npz"
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), (60_001, 32, 32, 3), (0, 0, 0, 0))
    np.savez(huge, x_train=big, y_train=np.zeros(60_001, np.uint8), x_test=fine, y_test=np.zeros(2, np.uint8))
    with pytest.raises(BadFileError, match="n <= 60,000"):
        cifar10.load_data(huge)


def test_tf_keeps_tensorflow_26s_aliases_of_keras_modules_the_slides_use():
    assert tf.optimizers.SGD is keras.optimizers.SGD
    assert tf.losses is keras.losses and tf.metrics is keras.metrics and tf.initializers is keras.initializers


def _run_script(tmp_path, *args, flags=None, keras_home=None):
    home = {"HOME": str(tmp_path), "KERAS_HOME": str(keras_home or tmp_path / "keras"), cifar10.ENV_VAR: None}
    return run_script(SCRIPT, *args, cwd=tmp_path, timeout=300, env_overrides={**home, "TF_POPLAR_FLAGS": flags})


def test_the_slides_hands_on_without_cifar10_says_what_to_do_and_stops_cleanly(tmp_path):
    result = _run_script(tmp_path, "--epochs", "1")
    assert result.returncode == 1
    assert result.stderr.startswith("cifar10_keras.py: CIFAR-10 not found; put CIFAR-10's binary version")
    assert "Traceback" not in result.stderr


def test_the_slides_hands_on_trains_on_synthetic_data_with_the_switch(tmp_path):
    result = _run_script(tmp_path, "--epochs", "1", "--train-samples", "128", flags="--use_synthetic_data")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "synthetic images of CIFAR-10's shapes" in result.stdout
    assert "Epoch 1/1\n2/2 [" in result.stdout


def test_the_slides_hands_on_trains_on_a_provided_copy(tmp_path):
    files = {name: records([k % 10 for k in range(64)], seed=i)[0] for i, name in enumerate(batch_files()[0])}
    (tmp_path / "keras" / "datasets").mkdir(parents=True)
    write_archive(tmp_path / "keras" / "datasets" / "cifar-10-binary.tar.gz", files)
    result = _run_script(tmp_path, "--epochs", "1", "--train-samples", "128")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CIFAR-10 from " in result.stdout and "(320 train / 64 test)" in result.stdout
    assert "Epoch 1/1\n2/2 [" in result.stdout and "(simulated)" in result.stdout


def test_module_examples_run(cache):
    import doctest

    result = doctest.testmod(cifar10, globs={"os": os, **vars(cifar10)}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
