"""``gc-info -l`` and ``gc-monitor`` for the simulated system (issue 21): the device listing in Graphcore's
layout, and what each process holds, seen from another process through the run folder's records."""

import doctest
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ipu_teach import ipu
from ipu_teach.cli.main import main
from ipu_teach.ipu import attachments, gc_tools

REPO = Path(__file__).resolve().parents[2]

# Graphcore's Command Line Tools guide, "gc-info", "List devices": a 4-IPU partition (IPU-M host 10.1.5.10).
DOCUMENTED_LISTING = """\
-+- Id: [0], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [3]
-+- Id: [1], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [2]
-+- Id: [2], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [1]
-+- Id: [3], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [0]
-+- Id: [4], target: [Multi IPU]
 |--- Id: [0], DNC Id: [0], IPU-M host: [10.1.5.10], IPU#: [3]
 |--- Id: [1], DNC Id: [1], IPU-M host: [10.1.5.10], IPU#: [2]
-+- Id: [5], target: [Multi IPU]
 |--- Id: [2], DNC Id: [0], IPU-M host: [10.1.5.10], IPU#: [1]
 |--- Id: [3], DNC Id: [1], IPU-M host: [10.1.5.10], IPU#: [0]
-+- Id: [6], target: [Multi IPU]
 |--- Id: [0], DNC Id: [0], IPU-M host: [10.1.5.10], IPU#: [3]
 |--- Id: [1], DNC Id: [1], IPU-M host: [10.1.5.10], IPU#: [2]
 |--- Id: [2], DNC Id: [2], IPU-M host: [10.1.5.10], IPU#: [1]
 |--- Id: [3], DNC Id: [3], IPU-M host: [10.1.5.10], IPU#: [0]"""


@pytest.fixture(autouse=True)
def run_folder(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    monkeypatch.setenv(attachments.ENV_VAR, str(folder))
    monkeypatch.setattr(attachments, "_warned", [False])
    return folder


def configure(ipus=1, connection=None):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = ipus
    if connection is not None:
        config.device_connection.type = connection
    config.configure_ipu_system()


def process_rows(text):
    """``(pid, command, user, IPU ID, clock)`` of each row of gc-monitor's process table."""
    rows = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) == 6 and cells[0].isdigit():
            rows.append((int(cells[0]), cells[1], cells[3], int(cells[4]), cells[5]))
    return rows


# --- gc-info -l ---------------------------------------------------------------------------------------------


def test_an_ipu_m2000_is_listed_as_graphcores_guide_lists_a_4_ipu_partition():
    lines = gc_tools.device_listing("IPU-M2000").splitlines()
    assert lines[:2] == ["Graphcore device listing:", "Partition: sim-m2000 [active]"]
    assert "\n".join(lines[2:]) == DOCUMENTED_LISTING.replace("10.1.5.10", "sim-m2000-0")


def test_a_pod16_lists_single_ipus_0_to_15_pairs_16_to_23_fours_eights_and_device_30_of_all_sixteen():
    text = gc_tools.device_listing("IPU-POD16")
    devices, members = {}, None
    for line in text.splitlines()[2:]:
        if line.startswith("-+- Id: ["):
            device = int(line.split("[")[1].split("]")[0])
            members = devices.setdefault(device, [])
            if "target: [Fabric]" in line:
                members.append(device)
        else:
            members.append(int(line.split("[")[1].split("]")[0]))
    assert sorted(devices) == list(range(31))
    assert all(devices[i] == [i] for i in range(16))
    assert devices[16] == [0, 1] and devices[23] == [14, 15]
    assert devices[24] == [0, 1, 2, 3] and devices[27] == [12, 13, 14, 15]
    assert devices[28] == list(range(8)) and devices[29] == list(range(8, 16))
    assert devices[30] == list(range(16))
    assert " |--- Id: [15], DNC Id: [15], IPU-M host: [sim-m2000-3], IPU#: [0]" in text
    # the IDs are those select_ipus takes and configure_ipu_system reports
    configure(ipus=8)
    assert ipu.system.current().device_id == 28


def test_a_pod64_has_16_machines_and_device_126_of_all_64():
    lines = gc_tools.device_listing("IPU-POD64").splitlines()
    assert "-+- Id: [126], target: [Multi IPU]" in lines
    assert lines[-1] == " |--- Id: [63], DNC Id: [63], IPU-M host: [sim-m2000-15], IPU#: [0]"


def test_the_listing_defaults_to_the_system_in_use_and_refuses_an_unknown_one():
    ipu.system.use_system("IPU-M2000")
    printed = []
    gc_tools.gc_info(print_fn=printed.append)
    assert printed[0].splitlines()[1] == "Partition: sim-m2000 [active]"
    with pytest.raises(ValueError, match="Unknown system 'IPU-POD8'; choose one of IPU-M2000, IPU-POD16, IPU-POD64"):
        gc_tools.device_listing("IPU-POD8")


def test_cli_gc_info_lists_devices_and_asks_for_the_command_when_it_is_missing(capsys):
    assert main(["gc-info", "-l"]) == 0
    assert capsys.readouterr().out == gc_tools.device_listing("IPU-POD16") + "\n"
    assert main(["gc-info", "--list-devices", "--system", "IPU-M2000"]) == 0
    assert "Partition: sim-m2000 [active]" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        main(["gc-info"])
    assert stopped.value.code == 2
    assert "one of the arguments -l/--list-devices is required" in capsys.readouterr().err


# --- what a process holds ------------------------------------------------------------------------------------


def test_configuring_records_the_ipus_held_and_reset_releases_them(run_folder):
    assert attachments.attached_processes() == []
    configure(ipus=4)
    (record,) = attachments.attached_processes()
    assert (record.pid, record.device_id, record.ipus, record.system) == (os.getpid(), 24, (0, 1, 2, 3), "IPU-POD16")
    assert record.ipu_name == "GC200 (Mk2)" and record.clock_hz == 1.33e9
    assert sorted(os.listdir(run_folder)) == [f"{os.getpid()}.json"]
    configure(ipus=1)  # a new configuration replaces the old: one record per process
    assert [r.ipus for r in attachments.attached_processes()] == [(0,)]
    ipu.system.reset()
    assert attachments.attached_processes() == [] and os.listdir(run_folder) == []


def test_compile_only_connections_attach_nothing_and_release_what_was_held():
    configure(ipus=2)
    configure(ipus=2, connection=ipu.config.DeviceConnectionType.PRE_COMPILE)
    assert attachments.attached_processes() == []
    configure(ipus=2, connection=ipu.config.DeviceConnectionType.ON_DEMAND)
    assert [r.ipus for r in attachments.attached_processes()] == [(0, 1)]


def test_gc_monitor_shows_one_row_per_ipu_of_this_process_and_the_card_table(capsys):
    ipu.system.use_system("IPU-M2000")
    configure(ipus=2)
    assert main(["gc-monitor", "--system", "IPU-M2000"]) == 0
    out = capsys.readouterr().out
    rows = process_rows(out)
    assert [(pid, ipu_id, clock) for pid, _, _, ipu_id, clock in rows] == [
        (os.getpid(), 0, "1330MHz"),
        (os.getpid(), 1, "1330MHz"),
    ]
    assert "Partition: sim-m2000 [active] has 4 reconfigurable IPUs" in out
    assert "Attached processes in partition sim-m2000" in out
    assert out.count("| M2000 |") == 4  # the card table: one row per IPU of the machine
    assert main(["gc-monitor", "--system", "IPU-M2000", "--no-card-info"]) == 0
    assert "reconfigurable IPUs" not in capsys.readouterr().out


def test_gc_monitor_says_so_when_nothing_is_attached_and_when_a_named_process_holds_nothing(capsys):
    assert main(["gc-monitor", "--pid", "1"]) == 0
    out = capsys.readouterr().out
    assert "|                           No attached processes in partition sim-pod16                           |" in out
    assert "Process 1 holds no simulated IPUs: it has not run configure_ipu_system" in out
    assert "each process has its own simulated IPU-POD16" in out


def test_processes_on_another_simulated_system_are_pointed_to_and_shown_with_all_partitions(capsys):
    ipu.system.use_system("IPU-POD64")
    configure(ipus=32)
    assert main(["gc-monitor", "--no-card-info"]) == 0
    out = capsys.readouterr().out
    assert process_rows(out) == []
    assert "Processes are also attached to the simulated IPU-POD64: see --all-partitions." in out
    assert main(["gc-monitor", "--no-card-info", "--all-partitions"]) == 0
    out = capsys.readouterr().out
    assert "Attached processes in partition sim-pod64" in out
    assert [row[3] for row in process_rows(out)] == list(range(32))


def _python(code, run_folder):
    env = dict(os.environ, PYTHONPATH=str(REPO), **{attachments.ENV_VAR: str(run_folder)})
    return subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )


HOLDER = """
from ipu_teach import ipu
config = ipu.config.IPUConfig()
config.auto_select_ipus = 2
config.configure_ipu_system()
print("attached", flush=True)
input()
"""


def test_another_process_sees_what_a_running_one_holds_and_its_record_goes_when_it_ends(run_folder):
    holder = _python(HOLDER, run_folder)
    try:
        assert holder.stdout.readline() == "attached\n"
        rows = process_rows(gc_tools.monitor_text("IPU-POD16", pid=holder.pid, card_info=False))
        assert [(pid, command, ipu_id) for pid, command, _, ipu_id, _ in rows] == [
            (holder.pid, "-c", 0),
            (holder.pid, "-c", 1),
        ]
    finally:
        holder.communicate("\n", timeout=60)
    assert holder.returncode == 0
    assert os.listdir(run_folder) == []  # removed as the process exited


def test_a_killed_process_is_not_shown_and_its_record_is_cleared(run_folder):
    holder = _python(HOLDER, run_folder)
    assert holder.stdout.readline() == "attached\n"
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    holder.stdout.close()
    holder.stdin.close()
    assert os.listdir(run_folder) == [f"{holder.pid}.json"]  # it could not remove it
    assert attachments.attached_processes() == []
    assert os.listdir(run_folder) == []


def _record(**changes):
    record = {
        "pid": os.getpid(),
        "user": "me",
        "command": "python train.py",
        "attached_at": 0.0,
        "system": "IPU-POD16",
        "device_id": 0,
        "ipus": [0],
        "ipu_name": "GC200 (Mk2)",
        "clock_hz": 1.33e9,
        "start_ticks": None,
    }
    return {**record, **changes}


def test_records_that_are_reused_ids_malformed_or_mislabelled_are_skipped(run_folder):
    run_folder.mkdir()
    ticks = attachments._start_ticks(os.getpid())
    (run_folder / f"{os.getpid()}.json").write_text(json.dumps(_record(start_ticks=(ticks or 0) + 1)))
    (run_folder / "1.json").write_text("{not json")
    (run_folder / "2.json").write_text(json.dumps(_record()))  # says pid 2 is another process
    (run_folder / "3.json").write_text(json.dumps(_record(pid=3, ipus="all")))
    (run_folder / "notes.txt").write_text("left alone")
    found = attachments.attached_processes()
    if ticks is not None:  # Linux: a process started after the record was written is not its writer
        assert found == []
    assert (run_folder / "notes.txt").read_text() == "left alone"


def test_a_jupyter_kernel_is_shown_by_its_notebook(monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/me/course/01_porting_keras.ipynb")
    configure(ipus=1)
    assert [r.command for r in attachments.attached_processes()] == ["01_porting_keras.ipynb (Jupyter kernel)"]
    monkeypatch.delenv("JPY_SESSION_NAME")
    configure(ipus=1)
    assert attachments.attached_processes()[0].command == " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])


def test_a_record_of_a_running_process_is_shown(run_folder):
    run_folder.mkdir()
    (run_folder / f"{os.getpid()}.json").write_text(json.dumps(_record(ipus=[4, 5], device_id=18)))
    (record,) = attachments.attached_processes()
    assert (record.ipus, record.device_id, record.command) == ((4, 5), 18, "python train.py")


def test_a_folder_it_cannot_write_gives_one_warning_and_the_ipus_are_attached_all_the_same(
    tmp_path, monkeypatch, capsys
):
    blocker = tmp_path / "a file"
    blocker.write_text("mine")
    monkeypatch.setenv(attachments.ENV_VAR, str(blocker))
    configure(ipus=1)
    configure(ipus=2)
    out = capsys.readouterr().out
    assert out.count("WARNING:ipu_teach:gc-monitor cannot see this process's simulated IPUs") == 1
    assert f"Set {attachments.ENV_VAR} to a folder you own" in out
    assert ipu.system.current().num_ipus == 2
    assert blocker.read_text() == "mine"


def test_the_default_folder_is_the_users_runtime_folder_else_shared_memory_else_the_temporary_folder(
    tmp_path, monkeypatch
):
    monkeypatch.delenv(attachments.ENV_VAR)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    assert attachments.run_folder() == str(tmp_path / "runtime" / "ipu-teach")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setattr(attachments, "SHARED_MEMORY", str(tmp_path))
    assert attachments.run_folder() == str(tmp_path / f"ipu-teach-run-{attachments._user()}")
    monkeypatch.setattr(attachments, "SHARED_MEMORY", str(tmp_path / "none"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "temp"))
    assert attachments.run_folder() == str(tmp_path / "temp" / f"ipu-teach-run-{attachments._user()}")


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_default_folder_others_can_write_is_not_used(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(attachments.ENV_VAR)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(attachments, "SHARED_MEMORY", str(tmp_path))
    shared = Path(attachments.run_folder())
    assert shared.parent == tmp_path and shared.name.startswith("ipu-teach-run-")
    shared.mkdir()
    shared.chmod(0o777)
    configure(ipus=1)
    assert "is not a private folder of this user" in capsys.readouterr().out
    assert os.listdir(shared) == []
    shared.chmod(0o700)
    configure(ipus=1)
    assert os.listdir(shared) == [f"{os.getpid()}.json"]
    assert (shared.stat().st_mode & 0o777) == 0o700


@pytest.mark.parametrize("module", [gc_tools, attachments])
def test_module_examples_run(module):
    globs = {"ipu": ipu, "os": os, **vars(module)}
    result = doctest.testmod(module, globs=globs, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
