"""``ipu-teach course``: JupyterLab on the course notebooks, bound to 127.0.0.1."""
import os
import subprocess
import sys
from pathlib import Path


def notebooks_folder(given=None) -> Path:
    """The course's notebooks: the folder given, else the checkout's ``notebooks/`` beside the package."""
    folder = Path(given) if given else Path(__file__).resolve().parents[2] / "notebooks"
    if not (folder / "00_ipu_and_bsp.ipynb").exists():
        raise SystemExit(f"ipu-teach course: no course notebooks in {folder}; pass the folder that holds them "
                         "with --notebooks (they are in the repository's notebooks/ folder)")
    return folder


def add_parser(commands):
    parser = commands.add_parser("course", help="start JupyterLab on the course notebooks (127.0.0.1)",
                                 description="Start JupyterLab on the course notebooks, listening on 127.0.0.1 only.")
    parser.add_argument("--notebooks", help="folder holding the notebooks (default: the repository's notebooks/)")
    parser.add_argument("--port", type=int, default=8888, help="port to listen on (default 8888)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    parser.set_defaults(run=run)


def command(args) -> list:
    cmd = [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={args.port}",
           f"--ServerApp.root_dir={notebooks_folder(args.notebooks)}"]
    if args.no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def run(args) -> int:
    try:
        import jupyterlab  # noqa: F401  (only checking it is installed)
    except ImportError:
        print("ipu-teach course needs JupyterLab: pip install -e '.[notebooks]'", file=sys.stderr)
        return 1
    return subprocess.call(command(args))
