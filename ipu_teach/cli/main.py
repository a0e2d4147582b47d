"""Argument parsing for ``ipu-teach``; each sub-command lives in its own module."""

import argparse
import os
import sys

from . import course, explain, gc_tools, info, run, tour

CLOSED_PIPE_STATUS = 1  # Python's for an output pipe closed early, as in its docs' recipe (signal module) and pip's


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ipu-teach", description="Learn how a Graphcore IPU is programmed, on a simulated IPU (no IPU needed)."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (course, tour, info, gc_tools, run, explain):
        module.add_parser(commands)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "run":  # the script's own output: on a closed pipe it does what it does under `python`
        return args.run(args)
    try:
        status = args.run(args)
        sys.stdout.flush()  # where a closed pipe shows when the output is still buffered
    except BrokenPipeError:
        return _stop_writing_to_the_closed_pipe()
    return status


def _stop_writing_to_the_closed_pipe() -> int:
    """``ipu-teach tour | head -1``: the reader has what it wanted, so end quietly, with no traceback now and no
    second BrokenPipeError when Python flushes stdout on exit (its output goes to devnull from here)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return CLOSED_PIPE_STATUS
