"""``ipu-teach gc-info -l`` and ``ipu-teach gc-monitor``: Graphcore's two first commands on a Pod, simulated.

The options are Graphcore's (``gc-info --list-devices``; ``gc-monitor --no-card-info --all-partitions``) plus
``--system`` to pick the simulated machine and ``--pid`` to show one process.
"""

from ..ipu import gc_tools, system


def add_parser(commands):
    info = commands.add_parser(
        "gc-info",
        help="list the simulated system's devices, as gc-info -l does",
        description="List the devices of the simulated IPU system as Graphcore's gc-info --list-devices does: "
        "single IPUs, then the multi-IPU devices a program can attach (select_ipus takes these IDs).",
    )
    commands_of_info = info.add_mutually_exclusive_group(required=True)
    commands_of_info.add_argument(
        "-l", "--list-devices", action="store_true", help="list all devices (the only gc-info command simulated)"
    )
    _system_option(info)
    info.set_defaults(run=run_info)

    monitor = commands.add_parser(
        "gc-monitor",
        help="show which simulated IPUs running ipu-teach processes hold, as gc-monitor does",
        description="Show the simulated partition's IPUs and which of them each running ipu-teach process of "
        "yours holds (a process attaches IPUs with configure_ipu_system and releases them with "
        "ipu.system.reset() or when it ends), as Graphcore's gc-monitor does.",
    )
    monitor.add_argument("--pid", type=int, help="show only the IPUs this process holds")
    monitor.add_argument("--no-card-info", action="store_true", help="leave out the table of machines and IPUs")
    monitor.add_argument(
        "--all-partitions", action="store_true", help="also show processes attached to other simulated systems"
    )
    _system_option(monitor)
    monitor.set_defaults(run=run_monitor)


def _system_option(parser):
    parser.add_argument(
        "--system",
        choices=sorted(system.SYSTEMS),
        default=system.DEFAULT_SYSTEM,
        help=f"which simulated machine (default {system.DEFAULT_SYSTEM})",
    )


def run_info(args) -> int:
    gc_tools.gc_info(args.system)
    return 0


def run_monitor(args) -> int:
    print(gc_tools.monitor_text(args.system, args.pid, not args.no_card_info, args.all_partitions))
    return 0
