"""Atomic writes leave no partial file at the final path and no litter: temporary files of killed
writers are removed by the next write in the folder (whatever file they were for), those of live writers
are kept, and data is synced before rename. Replacing a file keeps its permissions and writes through a
symbolic link; hard links keep the old contents under their other names, as the module says."""

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ipu_teach import atomic
from ipu_teach.atomic import atomic_write, temporary_name

ROOT = Path(__file__).resolve().parent.parent
posix_only = pytest.mark.skipif(os.name != "posix", reason="process ids, modes and links as POSIX has them")


def _writer(target: Path) -> subprocess.Popen:
    """A process inside ``atomic_write(target)`` that has written a little, says so, and waits for a line on
    stdin before finishing the write."""
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys; from ipu_teach.atomic import atomic_write\n"
                f"with atomic_write({str(target)!r}, 'wb') as f:\n"
                "    f.write(b'x' * 1000); f.flush(); print('writing', flush=True); sys.stdin.readline()"
            ),
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout.readline().strip() == "writing"
    return writer


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_killed_save_leaves_no_partial_file_and_the_next_save_removes_its_litter(tmp_path):
    target = tmp_path / "weights.npz"
    writer = _writer(target)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    litter = [p.name for p in tmp_path.iterdir()]
    assert not target.exists() and len(litter) == 1
    assert litter[0].startswith(f".weights.npz.{writer.pid}.") and litter[0].endswith(atomic.TEMPORARY_SUFFIX)
    with atomic_write(target, "wb") as f:
        f.write(b"complete")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weights.npz"] and target.read_bytes() == b"complete"


def test_a_killed_save_of_a_name_never_saved_again_is_cleaned_by_a_save_of_another_name(tmp_path):
    """ModelCheckpoint("ckpt-{epoch:02d}-{loss:.4f}.keras") never writes the same name twice."""
    writer = _writer(tmp_path / "ckpt-03-0.1234.keras")
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert len(list(tmp_path.iterdir())) == 1
    with atomic_write(tmp_path / "ckpt-04-0.1111.keras", "wb") as f:
        f.write(b"complete")
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt-04-0.1111.keras"]


@posix_only
def test_the_temporary_file_of_a_live_writer_is_kept(tmp_path):
    live = tmp_path / temporary_name("out.json", os.getppid(), "abc")  # our parent: alive
    live.write_text("being written")
    with atomic_write(tmp_path / "out.json") as f:
        f.write("{}")
    assert live.exists()


@posix_only
def test_saving_m_leaves_a_live_writer_of_m_50000_alone(tmp_path):
    """The old stale check read the 50000 of ``.m.50000.<pid>...`` as the process id of a writer of ``m``."""
    writer = _writer(tmp_path / "m.50000")
    for _ in range(3):
        with atomic_write(tmp_path / "m", "wb") as f:
            f.write(b"mine")
    writer.communicate("finish\n", timeout=60)
    assert writer.returncode == 0
    assert (tmp_path / "m.50000").read_bytes() == b"x" * 1000 and (tmp_path / "m").read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m", "m.50000"]


def test_temporaries_untouched_for_an_hour_are_removed_even_if_their_process_id_runs(tmp_path):
    """A process id can be reused; where it cannot be checked (Windows), age alone decides."""
    old = tmp_path / temporary_name("out.json", os.getppid(), "01d")
    recent = tmp_path / temporary_name("out.json", os.getppid(), "1ee")
    for path in (old, recent):
        path.write_text("left over")
    os.utime(old, (time.time() - 2 * atomic.STALE_AFTER_SECONDS,) * 2)
    with atomic_write(tmp_path / "out.json") as f:
        f.write("{}")
    assert not old.exists() and recent.exists()


@posix_only
def test_a_dead_writers_recent_temporary_is_removed_but_files_that_are_not_ours_are_kept(tmp_path):
    dead = tmp_path / temporary_name("other.npz", _dead_pid(), "beef")
    others = [tmp_path / ".other.npz.1.abc.tmp", tmp_path / ".notes.txt", tmp_path / "x.ipu-teach.tmp"]
    for path in [dead, *others]:
        path.write_text("left over")
    for path in others:
        os.utime(path, (time.time() - 2 * atomic.STALE_AFTER_SECONDS,) * 2)
    with atomic_write(tmp_path / "out.json") as f:
        f.write("{}")
    assert not dead.exists() and all(path.exists() for path in others)


@posix_only
def test_replacing_a_file_keeps_its_permissions_and_a_new_file_follows_the_umask(tmp_path):
    private = tmp_path / "private.keras"
    private.write_bytes(b"old")
    private.chmod(0o600)
    shared = tmp_path / "shared.keras"
    shared.write_bytes(b"old")
    shared.chmod(0o664)
    for path, expected in ((private, 0o600), (shared, 0o664)):
        with atomic_write(path, "wb") as f:
            assert stat.S_IMODE(os.stat(f.name).st_mode) == 0o600  # the contents stay private while written
            f.write(b"new")
        assert stat.S_IMODE(path.stat().st_mode) == expected and path.read_bytes() == b"new"
    previous = os.umask(0o027)
    try:
        with atomic_write(tmp_path / "new.keras", "wb") as f:
            f.write(b"new")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.keras").stat().st_mode) == 0o640


@posix_only
def test_a_symbolic_link_is_written_through_to_its_target(tmp_path):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "model-v2.keras"
    target.write_bytes(b"old")
    link = tmp_path / "latest.keras"
    link.symlink_to(target)
    with atomic_write(link, "wb") as f:
        f.write(b"new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b"new" and link.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.keras", "store"]
    assert [p.name for p in (tmp_path / "store").iterdir()] == ["model-v2.keras"]


@posix_only
def test_a_link_into_a_missing_folder_is_an_error_naming_the_link_and_its_target(tmp_path):
    link = tmp_path / "latest.keras"
    link.symlink_to(tmp_path / "gone" / "model.keras")
    expected = re.escape(f"cannot write {link}: it is a symbolic link to ") + ".*gone"
    with pytest.raises(FileNotFoundError, match=expected):
        with atomic_write(link, "wb") as f:
            f.write(b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["latest.keras"]


@posix_only
def test_a_hard_linked_file_is_replaced_and_its_other_names_keep_the_old_contents(tmp_path):
    saved = tmp_path / "model.keras"
    saved.write_bytes(b"old")
    backup = tmp_path / "backup.keras"
    os.link(saved, backup)
    with atomic_write(saved, "wb") as f:
        f.write(b"new")
    assert saved.read_bytes() == b"new" and backup.read_bytes() == b"old"


def test_data_reaches_the_disk_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    with atomic_write(tmp_path / "out.json") as f:
        f.write("{}")
    assert events[:2] == ["fsync", "replace"]


def test_a_write_that_need_not_be_durable_is_still_whole_but_not_flushed_to_disk(tmp_path, monkeypatch):
    events = []
    real_replace = os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: events.append("fsync"))
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    target = tmp_path / "123.json"
    target.write_text("old")
    with atomic_write(target, durable=False) as f:
        f.write('{"pid": 123}')
        assert target.read_text() == "old"  # nobody sees it half-written
    assert events == ["replace"] and target.read_text() == '{"pid": 123}'
    assert sorted(os.listdir(tmp_path)) == ["123.json"]
