"""``TF_POPLAR_FLAGS``, parsed as Graphcore's TensorFlow parses it.

Graphcore's port reads the variable with XLA's ``ParseFlagsFromEnvAndDieIfUnknown``
(graphcore/tensorflow ``tensorflow/compiler/plugin/poplar/driver/tools/flags.cc``): flags are
``--name=value`` or ``--name`` separated by whitespace, and a value holding spaces is quoted with
single or double quotes (``--executable_cache_path='/tmp/my cache'``); an unknown flag stops the
program. Here an unknown or misspelled flag, or a word that is not a flag (the rest of an unquoted
path with a space), is a ValueError saying what to write instead.
"""

from __future__ import annotations

import os
import re

from ..validation import closest

ENV_VAR = "TF_POPLAR_FLAGS"
# Every flag Graphcore's flags.cc defines (and its deprecated ones); only executable_cache_path acts here.
KNOWN_FLAGS = frozenset(
    (
        "help",
        "use_synthetic_data",
        "synthetic_data_categories",
        "synthetic_data_initializer",
        "use_ipu_model",
        "log_cycle_count",
        "while_loop_brute_force_max_trip_count",
        "max_compilation_threads",
        "max_infeed_threads",
        "save_vertex_graph",
        "save_interval_report",
        "executable_cache_path",
        "dump_schedule_as_dot",
        "tensor_map_file_path",
        "fallback_scheduler",
        "allow_nans",
        "null_data_feed",
        "show_progress_bar",
        "on_demand_device_poll_time",
        "on_demand_device_timeout",
        "ipu_model_tiles",
        "sync_replica_start",
        "enable_hlo_verifier",
        "disable_poplar_version_check",
        "dump_text_reports_to_stdio",
        "add_all_reduce_copies",
        "force_replicated_mode",
        "save_oom_profiler",
    )
)
_FLAG = re.compile(
    r"""--(?P<name>[A-Za-z0-9_]+)(?:=(?:'(?P<single>[^']*)'|"(?P<double>(?:\\.|[^"\\])*)"|(?P<bare>[^\s'"]\S*|)))?(?=\s|$)"""
)


def parse(text: str) -> dict:
    """``{flag: value}`` (``True`` for a flag without ``=value``) of a TF_POPLAR_FLAGS string."""
    flags, position = {}, 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return flags
        match = _FLAG.match(text, position)
        if match is None:
            word = text[position:].split()[0]
            raise ValueError(
                f"{ENV_VAR}={text!r}: {word!r} is not a --flag=value; a value holding spaces must be "
                f"quoted, e.g. --executable_cache_path='/tmp/my cache'"
            )
        name = match["name"]
        if name not in KNOWN_FLAGS:
            raise ValueError(
                f"{ENV_VAR}: unknown flag --{name}{closest(name, KNOWN_FLAGS)} (Graphcore's TensorFlow "
                "stops on an unknown flag too)"
            )
        if match["double"] is not None:
            flags[name] = re.sub(r"\\(.)", r"\1", match["double"])
        else:
            flags[name] = next((v for v in (match["single"], match["bare"]) if v is not None), True)
        position = match.end()


def flags() -> dict:
    return parse(os.environ.get(ENV_VAR, ""))
