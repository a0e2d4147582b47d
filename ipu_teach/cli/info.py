"""``ipu-teach info``: the simulated system, listed as Graphcore's ``gc-info -l`` lists a real one."""

from .. import hardware
from ..ipu import system


def describe_system(name: str) -> str:
    total = system.SYSTEMS[name]
    spec = hardware.MK2
    lines = [
        f"Simulated system: {name} ({total} x {spec.name} IPUs, {spec.ipus_per_machine} per machine)",
        "",
        "Devices (auto_select_ipus picks the first free one of the size asked; select_ipus names one):",
        f"{'ID':>4}  {'IPUs':>4}  {'IPU numbers':<12}",
    ]
    for device_id, first, size in system.device_table(total):
        ipus = str(first) if size == 1 else f"{first}-{first + size - 1}"
        lines.append(f"{device_id:>4}  {size:>4}  {ipus:<12}")
    lines += [
        "",
        f"IPU: {spec.name} (figures and where they come from)",
        hardware.describe(spec),
        "",
        "Host and compiler (figures and where they come from)",
        hardware.figure_table(hardware.HOST),
        "",
        "Code and runtime state per tile",
        hardware.figure_table(hardware.CODE),
        "",
        "Vector units: codelets (tile cycles per fp32 element), reductions, rearrangements",
        hardware.figure_table(hardware.VECTOR),
    ]
    return "\n".join(lines)


def add_parser(commands):
    parser = commands.add_parser(
        "info",
        help="describe the simulated IPU system (like gc-info)",
        description="Describe the simulated IPU system, its devices and the figures of its IPUs with their sources.",
    )
    parser.add_argument(
        "--system",
        choices=sorted(system.SYSTEMS),
        default=system.DEFAULT_SYSTEM,
        help=f"which simulated machine (default {system.DEFAULT_SYSTEM})",
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    print(describe_system(args.system))
    return 0
