"""Graphcore's INFO and WARNING lines, printed where the real system logs them.

They go to standard output (not a logger on stderr) so that in a notebook they stay in order
with the progress bar, every run.
"""


def info(message: str) -> None:
    print(f"INFO:ipu_teach:{message}")


def warning(message: str) -> None:
    print(f"WARNING:ipu_teach:{message}")
