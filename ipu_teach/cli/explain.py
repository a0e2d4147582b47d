"""``ipu-teach explain SCRIPT.py [ARGS...]``: run a script, then explain each IPU executable it compiled."""

from .run import add_script_arguments, require_script


def add_parser(commands):
    parser = commands.add_parser(
        "explain",
        help="run a script, then explain each IPU executable it compiled: its ops and where the time goes",
        description="Run a TensorFlow 2 Keras script as `ipu-teach run` does, then print, for each IPU "
        "executable it compiled, one line per lowered op (layer, op, FLOPs, AMP or vector unit, tiles, cycles, "
        "exchange bytes, temporary memory) and where one execution's simulated time comes from.",
    )
    add_script_arguments(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..ipu.executor import compiled_executables
    from ..tensorflow.runner import run_script

    require_script(args)
    with compiled_executables() as compiled:
        status = run_script(args.script, args.args)  # imports and sys.argv put back: the explaining comes after
    if not compiled:
        print(
            f"ipu-teach explain: {args.script} compiled no IPU executable (a model compiled inside an "
            "IPUStrategy scope compiles one when it first runs fit, evaluate or predict)"
        )
    for name, mode, executable in compiled:
        print(f"\n== `{name}` ({mode}) ==")
        print(executable.explain())
    return status
