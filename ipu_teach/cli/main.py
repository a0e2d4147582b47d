"""Argument parsing for ``ipu-teach``; each sub-command lives in its own module."""

import argparse

from . import course, info, run, tour


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ipu-teach", description="Learn how a Graphcore IPU is programmed, on a simulated IPU (no IPU needed)."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (course, tour, info, run):
        module.add_parser(commands)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return args.run(args)
