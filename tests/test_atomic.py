"""Atomic writes leave no partial file at the final path and no litter: temporary files of killed
writers are removed by the next write, those of live writers are kept, and data is synced before rename."""

import os
import signal
import subprocess
import sys
import time

import pytest

from ipu_teach import atomic
from ipu_teach.atomic import atomic_write


def test_a_killed_save_leaves_no_partial_file_and_the_next_save_removes_its_litter(tmp_path):
    target = tmp_path / "weights.npz"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from ipu_teach.atomic import atomic_write\n"
                f"with atomic_write({str(target)!r}, 'wb') as f:\n"
                "    f.write(b'x' * 1000); f.flush(); print('writing', flush=True); time.sleep(600)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    litter = [p.name for p in tmp_path.iterdir()]
    assert not target.exists() and len(litter) == 1 and litter[0].startswith(".weights.npz.")
    with atomic_write(target, "wb") as f:
        f.write(b"complete")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weights.npz"] and target.read_bytes() == b"complete"


@pytest.mark.skipif(os.name != "posix", reason="live writers are recognised by their process id on POSIX")
def test_the_temporary_file_of_a_live_writer_is_kept(tmp_path):
    live = tmp_path / f".out.json.{os.getppid()}.abc.tmp"  # our parent: alive
    live.write_text("being written")
    with atomic_write(tmp_path / "out.json") as f:
        f.write("{}")
    assert live.exists()


def test_old_temporaries_without_a_process_id_are_removed_after_an_hour(tmp_path):
    old, recent = tmp_path / ".out.json.xyz.tmp", tmp_path / ".out.json.uvw.tmp"
    for path in (old, recent):
        path.write_text("left over")
    os.utime(old, (time.time() - 2 * atomic.STALE_AFTER_SECONDS,) * 2)
    with atomic_write(tmp_path / "out.json") as f:
        f.write("{}")
    assert not old.exists() and recent.exists()


def test_data_reaches_the_disk_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    with atomic_write(tmp_path / "out.json") as f:
        f.write("{}")
    assert events[:2] == ["fsync", "replace"]
