"""Graphcore's public TF2 scripts kept verbatim in tests/tf_scripts/public run unchanged with ``ipu-teach run``:
the short ones listed for the unit suite in its runs.json (tools/run_public_scripts.py runs them all and prints
the table). Each must end as runs.json says: printing what it expects, or stopped by its own mistake where
TensorFlow stops it."""

import json
from pathlib import Path

import pytest
from script_runner import run_script

PUBLIC = Path(__file__).parent / "tf_scripts" / "public"
RUNS = [run for run in json.loads((PUBLIC / "runs.json").read_text())["runs"] if run["unit_suite"]]


@pytest.mark.parametrize("run", RUNS, ids=lambda run: " ".join([run["script"], *run["args"]]))
def test_the_public_script_runs_unchanged(run, tmp_path):
    result = run_script(PUBLIC / run["script"], *run["args"], cwd=tmp_path, timeout=300)
    if run["tensorflow_stops"]:
        assert result.returncode == 1 and "ValueError" in result.stderr.splitlines()[-1], result.stderr
        return
    assert result.returncode == 0, result.stdout + result.stderr
    assert run["expect"] in result.stdout


def test_every_run_names_its_source_and_every_kept_script_is_in_the_readme():
    runs = json.loads((PUBLIC / "runs.json").read_text())["runs"]
    readme = (PUBLIC / "README.md").read_text()
    for run in runs:
        assert (PUBLIC / run["script"]).is_file() and len(run["commit"]) == 40 and run["license"] in readme
        assert run["repository"] in readme and run["commit"] in readme
    assert {run["script"].split("/")[0] for run in runs} == {"keras_docs", "tensorflow_docs", "examples"}
