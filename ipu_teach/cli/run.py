"""``ipu-teach run SCRIPT.py [ARGS...]``: run an unchanged TensorFlow 2 Keras (or PyTorch / PopTorch) script on the
simulated IPU."""

import argparse


def add_parser(commands):
    parser = commands.add_parser(
        "run",
        help="run an unchanged TensorFlow 2 Keras or PopTorch script on the simulated IPU",
        description="Run a TensorFlow 2 Keras script as `python SCRIPT.py ARGS` would, with its imports of "
        "tensorflow, tensorflow.keras, tensorflow.python.ipu, tensorflow.python.data and keras "
        "(and torch, torchvision and poptorch) resolved to ipu-teach (the table is in the README). A TensorFlow "
        "or PyTorch name ipu-teach does not simulate raises an error naming it.",
    )
    add_script_arguments(parser)
    parser.set_defaults(run=run)


def add_script_arguments(parser) -> None:
    """The SCRIPT and ARGS of a command that runs a script as ``python SCRIPT ARGS`` would; without a SCRIPT,
    :func:`require_script` says what to give (argparse alone would ask for "script, args")."""
    parser.add_argument(
        "script", nargs="?", help="the Python script to run (or a folder or zip file holding a __main__.py)"
    )
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script (its sys.argv[1:])")
    parser.set_defaults(script_parser=parser)


def require_script(args) -> None:
    """Exits with a usage error that says what the command needs when no script was given."""
    if args.script is None:
        args.script_parser.error(
            f"give the TensorFlow 2 script to run, e.g. `{args.script_parser.prog} train.py`; "
            "the script's own arguments follow it"
        )


def run(args) -> int:
    from ..tensorflow.runner import run_script

    require_script(args)
    return run_script(args.script, args.args, as_the_program=True)
