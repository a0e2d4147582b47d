"""Runs Graphcore's public TensorFlow 2 scripts kept verbatim in tests/tf_scripts/public/ with ``ipu-teach run``, as
a porter would, and prints one table: script, source, whether it ran, the simulated figures it printed, and the
first error of those that did not (issue 22's yardstick). Each run is listed in tests/tf_scripts/public/runs.json
(source repository, path, commit, license, the script's own arguments, and for the scripts whose own mistake stops
them on TensorFlow too, which); the unit suite runs only the short ones (tests/test_public_tf_scripts.py). Not a
test: the whole table takes several minutes. Run:
    PYTHONPATH=. python tools/run_public_scripts.py [--timeout SECONDS] [--only SUBSTRING] [--markdown]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PUBLIC = REPO / "tests" / "tf_scripts" / "public"
# Lines a run prints that carry simulated figures: Keras' progress lines (loss, metrics, step time) and the lines
# ipu-teach prints after a custom loop.
_FIGURE_LINE = re.compile(r"(loss\W|ipu-teach: )", re.IGNORECASE)
_PROGRESS_BAR = re.compile(r"^\s*\d+/\d+ \[[=>.]*\] ")


def load_runs() -> list:
    """The runs of runs.json, in its order."""
    return json.loads((PUBLIC / "runs.json").read_text())["runs"]


def run_label(run: dict) -> str:
    """The script and its arguments, as the table shows them."""
    return " ".join([run["script"], *run["args"]])


def first_error(stderr: str) -> str:
    """The exception line of the first traceback (``Name: message``), or the last line printed."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last):"):
            for later in lines[index + 1 :]:
                if not later.startswith(" "):
                    return later.strip()
    return lines[-1].strip() if lines else ""


def figures(stdout: str) -> str:
    """The last Keras progress line and the last two lines of simulated times ipu-teach printed after the script
    (not its notices, such as which MNIST it read), or the run's last line."""
    lines = [line.split("\r")[-1].strip() for line in stdout.splitlines()]
    chosen = [line for line in lines if _FIGURE_LINE.search(line)]
    keras = [line for line in chosen if not line.startswith("ipu-teach: ")]
    ours = [line for line in chosen if line.startswith("ipu-teach: ") and "simulated" in line]
    picked = keras[-1:] + ours[-2:]
    if not picked:
        picked = [line for line in lines if line][-1:]
    return " | ".join(_PROGRESS_BAR.sub("", line) for line in picked)


def run_one(run: dict, timeout: int) -> dict:
    """Runs one script in a fresh folder; its exit status, seconds, figures and first error."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_POPLAR_FLAGS", "POPLAR_ENGINE_OPTIONS")}
    env["PYTHONPATH"] = str(REPO)
    script = PUBLIC / run["script"]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="public-script-") as folder:
        try:
            result = subprocess.run(
                [sys.executable, "-m", "ipu_teach", "run", str(script), *run["args"]],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as expired:
            out = expired.stdout.decode() if isinstance(expired.stdout, bytes) else expired.stdout or ""
            return {"runs": "timeout", "seconds": timeout, "figures": figures(out), "error": f"over {timeout} s"}
    seconds = time.monotonic() - started
    ran = result.returncode == 0
    return {
        "runs": "yes" if ran else ("no, as on TensorFlow" if run.get("tensorflow_stops") else "no"),
        "seconds": seconds,
        "figures": figures(result.stdout),
        "error": "" if ran else first_error(result.stderr),
    }


def table(rows: list, markdown: bool) -> str:
    """The results as a Markdown table or as aligned text."""
    header = ["script", "source", "runs?", "simulated figures it prints", "first error"]
    cells = [
        [
            run_label(run),
            f"{run['repository']} {run['path']} @{run['commit'][:7]}",
            f"{result['runs']} ({result['seconds']:.0f} s)",
            result["figures"][:160],
            result["error"][:200],
        ]
        for run, result in rows
    ]
    if markdown:
        return "\n".join(
            "| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in [header, ["---"] * 5] + cells
        )
    return "\n\n".join("\n".join(f"{h}: {c}" for h, c in zip(header, row)) for row in cells)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=int, default=600, help="seconds each script may run (default 600)")
    parser.add_argument("--only", default="", help="run only the scripts whose path contains this")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    rows = []
    for run in load_runs():
        if args.only in run_label(run):
            result = run_one(run, args.timeout)
            print(f"{run_label(run)}: {result['runs']} {result['error']}", file=sys.stderr, flush=True)
            rows.append((run, result))
    print(table(rows, args.markdown))
    passed = sum(result["runs"] == "yes" for _, result in rows)
    as_tensorflow = sum(result["runs"] == "no, as on TensorFlow" for _, result in rows)
    print(
        f"\n{passed} of {len(rows)} runs ran to the end; {as_tensorflow} stopped at their own mistake, where "
        "TensorFlow stops them (runs.json says which)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
