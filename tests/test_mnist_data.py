"""keras.datasets.mnist.load_data: the bundled subset, which data is chosen and announced, and verified downloads.

Downloads are tested against an HTTP server on 127.0.0.1 started by the test; nothing touches the network.
"""

import hashlib
import http.server
import io
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from ipu_teach.keras.datasets import mnist

REPO = Path(__file__).resolve().parent.parent
SHARED_MNIST = REPO.parent / "shared" / "data" / "mnist.npz"


def small_mnist(n_train, n_test, seed=0):
    """A tiny data set in Keras' MNIST layout; the sizes tell the test which file was read."""
    rng = np.random.default_rng(seed)
    return {
        "x_train": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "y_train": rng.integers(0, 10, n_train, dtype=np.uint8),
        "x_test": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "y_test": rng.integers(0, 10, n_test, dtype=np.uint8),
    }


def npz_bytes(arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def write_npz(path, arrays):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(npz_bytes(arrays))
    return path


def publish(monkeypatch, path):
    """Make ``path``'s content the "published" mnist.npz, so Keras' cache may hold it."""
    monkeypatch.setattr(mnist, "KERAS_SHA256", hashlib.sha256(path.read_bytes()).hexdigest())


def sizes(data):
    (x_train, _), (x_test, _) = data
    return len(x_train), len(x_test)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh HOME with no Keras cache, no KERAS_HOME / IPU_TEACH_MNIST, and an empty current folder."""
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KERAS_HOME", raising=False)
    monkeypatch.delenv(mnist.ENV_VAR, raising=False)
    monkeypatch.chdir(work)
    return home


@pytest.fixture
def cache(home):
    return home / ".keras" / "datasets"


def test_bundled_subset_is_real_mnist_in_keras_format(home, capsys):
    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    assert (x_train.shape, y_train.shape, x_test.shape, y_test.shape) == (
        (10_000, 28, 28),
        (10_000,),
        (2_560, 28, 28),
        (2_560,),
    )
    assert len(x_test) >= 2_048
    assert {array.dtype for array in (x_train, y_train, x_test, y_test)} == {np.dtype(np.uint8)}
    for labels in (y_train, y_test):
        counts = np.bincount(labels, minlength=10)
        assert len(counts) == 10 and counts.min() > 0.8 * len(labels) / 10 and counts.max() < 1.2 * len(labels) / 10
    # Handwritten digits: dark background, a stroke of bright pixels, not noise.
    assert x_train.max() == 255 and 0.1 < (x_train > 128).mean() < 0.2 and np.median(x_train) == 0
    assert mnist.BUNDLED_SUBSET.stat().st_size < 3_000_000
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "ipu-teach: MNIST subset bundled with ipu-teach (10,000 train / 2,560 test); "
        "full data: put mnist.npz in ~/.keras/datasets or pass path=..."
    ]


def test_returned_arrays_are_fresh_copies(home):
    (x_train, y_train), _ = mnist.load_data()
    original = x_train[0].copy()
    x_train[0] = 7
    y_train[:] = 0
    (again, again_labels), _ = mnist.load_data()
    np.testing.assert_array_equal(again[0], original)
    assert again_labels.any()


def test_keras_cache_is_used_and_announced(cache, capsys, monkeypatch):
    publish(monkeypatch, write_npz(cache / "mnist.npz", small_mnist(30, 20)))
    assert sizes(mnist.load_data()) == (30, 20)
    assert capsys.readouterr().out.splitlines() == [
        f"ipu-teach: MNIST from {(cache / 'mnist.npz').resolve()} (30 train / 20 test)"
    ]


def test_keras_home_replaces_the_home_cache(home, tmp_path, monkeypatch):
    write_npz(home / ".keras" / "datasets" / "mnist.npz", small_mnist(30, 20))
    publish(monkeypatch, write_npz(tmp_path / "keras_home" / "datasets" / "mnist.npz", small_mnist(31, 21)))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    assert sizes(mnist.load_data()) == (31, 21)


def test_selection_order(home, cache, tmp_path, monkeypatch, capsys):
    named = write_npz(tmp_path / "named.npz", small_mnist(11, 1))
    from_env = write_npz(tmp_path / "env.npz", small_mnist(12, 2))
    publish(monkeypatch, write_npz(cache / "mnist.npz", small_mnist(13, 3)))
    monkeypatch.setenv(mnist.ENV_VAR, str(from_env))
    assert sizes(mnist.load_data(str(named))) == (11, 1)
    assert sizes(mnist.load_data()) == (13, 3)
    (cache / "mnist.npz").unlink()
    assert sizes(mnist.load_data()) == (12, 2)
    assert f"from {from_env} (named by {mnist.ENV_VAR})" in capsys.readouterr().out.splitlines()[-1]
    monkeypatch.delenv(mnist.ENV_VAR)
    assert sizes(mnist.load_data()) == (10_000, 2_560)


def test_path_may_be_relative_to_the_current_folder_or_to_the_cache(home, cache, monkeypatch):
    write_npz(Path.cwd() / "local.npz", small_mnist(14, 4))
    publish(monkeypatch, write_npz(cache / "other.npz", small_mnist(15, 5)))
    assert sizes(mnist.load_data("local.npz")) == (14, 4)
    assert sizes(mnist.load_data(path="other.npz")) == (15, 5)


def test_a_path_that_names_no_file_is_a_clear_error(home):
    with pytest.raises(FileNotFoundError, match="missing.npz.*download=True"):
        mnist.load_data("missing.npz")


def test_an_env_var_that_names_no_file_is_a_clear_error(home, tmp_path, monkeypatch):
    monkeypatch.setenv(mnist.ENV_VAR, str(tmp_path / "nowhere.npz"))
    with pytest.raises(FileNotFoundError, match=mnist.ENV_VAR):
        mnist.load_data()


@pytest.mark.skipif(not SHARED_MNIST.is_file(), reason="needs ../shared/data/mnist.npz")
def test_full_data_is_announced_as_full(home, capsys):
    data = mnist.load_data(str(SHARED_MNIST))
    assert sizes(data) == (60_000, 10_000)
    assert capsys.readouterr().out.splitlines() == [
        f"ipu-teach: full MNIST from {SHARED_MNIST.resolve()} (60,000 train / 10,000 test)"
    ]


def with_changes(**changes):
    arrays = small_mnist(8, 4)
    for key, value in changes.items():
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value
    return npz_bytes(arrays)


@pytest.mark.parametrize(
    "content, problem",
    [
        (with_changes(y_test=None), "lacks y_test"),
        (with_changes(x_train=np.zeros((8, 28, 28), np.float32)), "x_train has dtype float32"),
        (with_changes(x_test=np.zeros((4, 28, 27), np.uint8)), r"x_test has shape \(4, 28, 27\)"),
        (with_changes(y_train=np.zeros(7, np.uint8)), "8 images but y_train has 7 labels"),
        (with_changes(y_train=np.full(8, 12, np.uint8)), "label 12"),
        (b"not a zip file at all", "not a readable .npz"),
        (npz_bytes(small_mnist(8, 4))[:200], "not a readable .npz"),
    ],
)
def test_invalid_files_are_clear_errors_naming_the_file(home, tmp_path, content, problem):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(content)
    with pytest.raises(ValueError, match=problem) as raised:
        mnist.load_data(str(bad))
    assert str(bad) in str(raised.value)


def test_a_single_array_file_is_a_clear_error(home, tmp_path):
    single = tmp_path / "single.npz"
    with open(single, "wb") as stream:
        np.save(stream, np.zeros(3))
    with pytest.raises(ValueError, match="single array"):
        mnist.load_data(str(single))


class _Files(http.server.BaseHTTPRequestHandler):
    """Serves ``server.files``: name -> (bytes, how many of them to send before hanging up)."""

    def do_GET(self):
        if self.path not in self.server.files:
            self.send_error(404)
            return
        content, sent = self.server.files[self.path]
        self.send_response(200)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content[:sent])
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def server(monkeypatch):
    """A local HTTP server in a thread; proxies are switched off so requests stay on 127.0.0.1."""
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.setattr(mnist, "DOWNLOAD_TIMEOUT_SECONDS", 5)
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Files)
    httpd.files = {}
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def url_for(server, name):
    return f"http://127.0.0.1:{server.server_address[1]}/{name}"


def serve(server, name, content, sent=None):
    server.files[f"/{name}"] = (content, len(content) if sent is None else sent)
    return url_for(server, name)


def test_download_verifies_and_lands_in_the_cache(server, cache, capsys):
    content = npz_bytes(small_mnist(16, 6))
    url = serve(server, "mnist.npz", content)
    data = mnist.load_data(download=True, origin=url, file_hash=hashlib.sha256(content).hexdigest())
    assert sizes(data) == (16, 6)
    assert [path.name for path in cache.iterdir()] == ["mnist.npz"]
    assert (cache / "mnist.npz").read_bytes() == content
    assert (cache / "mnist.npz").stat().st_mode & 0o444 == 0o444
    assert f"(downloaded from {url})" in capsys.readouterr().out
    del server.files["/mnist.npz"]
    digest = hashlib.sha256(content).hexdigest()
    assert sizes(mnist.load_data(download=True, origin=url, file_hash=digest)) == (16, 6)  # cached: no request


def test_a_cached_file_with_edited_labels_is_refused(cache, capsys, monkeypatch):
    published = write_npz(cache / "mnist.npz", small_mnist(30, 20))
    publish(monkeypatch, published)
    edited = small_mnist(30, 20)
    edited["y_train"][0] = (edited["y_train"][0] + 1) % 10
    write_npz(published, edited)
    with pytest.raises(
        ValueError,
        match=r"mnist.npz in Keras' cache has sha256 [0-9a-f]{64}, expected "
        r"[0-9a-f]{64}: it was changed or cut short",
    ) as raised:
        mnist.load_data()
    assert str(published.resolve()) in str(raised.value)


def test_a_cached_file_that_differs_is_downloaded_again_when_asked(server, cache, monkeypatch):
    good = npz_bytes(small_mnist(16, 6))
    write_npz(cache / "mnist.npz", small_mnist(30, 20))
    url = serve(server, "mnist.npz", good)
    assert sizes(mnist.load_data(download=True, origin=url, file_hash=hashlib.sha256(good).hexdigest())) == (16, 6)
    assert (cache / "mnist.npz").read_bytes() == good


@pytest.mark.parametrize("case", ["corrupt", "partial", "not mnist", "missing"])
def test_failed_downloads_leave_nothing_behind(server, cache, case):
    good = npz_bytes(small_mnist(16, 6))
    digest = hashlib.sha256(good).hexdigest()
    if case == "corrupt":
        url, error, message = serve(server, "m.npz", good[:-10] + b"0123456789"), mnist.MnistDownloadError, "sha256"
    elif case == "partial":
        url, error, message = serve(server, "m.npz", good, sent=len(good) // 2), mnist.MnistDownloadError, "stopped"
    elif case == "not mnist":
        other = npz_bytes({"a": np.zeros(3)})
        digest = hashlib.sha256(other).hexdigest()
        url, error, message = serve(server, "m.npz", other), ValueError, "lacks x_train"
    else:
        url, error, message = url_for(server, "m.npz"), mnist.MnistDownloadError, "404"
    with pytest.raises(error, match=message):
        mnist.load_data(download=True, origin=url, file_hash=digest)
    assert list(cache.iterdir()) == []


def test_an_unreachable_origin_is_a_download_error(server, cache):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(mnist.MnistDownloadError, match="could not download"):
        mnist.load_data(download=True, origin=f"http://127.0.0.1:{port}/mnist.npz", file_hash="0" * 64)
    assert list(cache.iterdir()) == []


def test_a_malformed_hash_is_refused_before_any_request(home):
    with pytest.raises(ValueError, match="sha256"):
        mnist.load_data(download=True, origin="http://127.0.0.1:9/never", file_hash="abc")


@pytest.mark.skipif(not SHARED_MNIST.is_file(), reason="needs ../shared/data/mnist.npz")
def test_subset_script_rebuilds_the_bundled_file_from_the_full_data(tmp_path):
    rebuilt = tmp_path / "subset.npz"
    run = subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_mnist_subset.py"), str(SHARED_MNIST), "--out", str(rebuilt)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"{rebuilt.stat().st_size:,} bytes" in run.stdout
    assert [path.name for path in tmp_path.iterdir()] == ["subset.npz"]
    committed, again = mnist.read_mnist_npz(mnist.BUNDLED_SUBSET), mnist.read_mnist_npz(rebuilt)
    for committed_split, rebuilt_split in zip(committed, again):
        for committed_array, rebuilt_array in zip(committed_split, rebuilt_split):
            np.testing.assert_array_equal(committed_array, rebuilt_array)
    # Every bundled image is a real MNIST image with its real label, and classes keep their share.
    for (x_full, y_full), (x_subset, y_subset) in zip(mnist.read_mnist_npz(SHARED_MNIST), committed):
        labelled_images = {image.tobytes() + bytes([label]) for image, label in zip(x_full, y_full)}
        assert all(image.tobytes() + bytes([label]) in labelled_images for image, label in zip(x_subset, y_subset))
        expected = len(y_subset) * np.bincount(y_full) / len(y_full)
        assert np.all(np.abs(np.bincount(y_subset) - expected) < 1)
