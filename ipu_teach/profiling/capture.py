"""When to write reports and whether out-of-memory programs may compile (POPLAR_ENGINE_OPTIONS)."""
import json
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineOptions:
    auto_report: bool = False
    directory: str = "./report"
    graph_profile: bool = False
    execution_profile: bool = False
    allow_out_of_memory: bool = False


def engine_options(configuration) -> EngineOptions:
    """Options from POPLAR_ENGINE_OPTIONS (as on the real system) merged with IPUConfig.profiling."""
    env = json.loads(os.environ.get("POPLAR_ENGINE_OPTIONS", "{}") or "{}")
    profiling = configuration.profiling
    every = str(env.get("autoReport.all", "false")).lower() == "true"
    graph = every or str(env.get("autoReport.outputGraphProfile", "false")).lower() == "true"
    execution = every or str(env.get("autoReport.outputExecutionProfile", "false")).lower() == "true"
    auto = bool(profiling.get("auto_report")) or graph or execution
    return EngineOptions(auto, env.get("autoReport.directory", profiling.get("directory", "./report")),
                         graph or bool(profiling.get("auto_report")), execution or bool(profiling.get("auto_report")),
                         str(env.get("debug.allowOutOfMemory", "false")).lower() == "true"
                         or bool(profiling.get("allow_out_of_memory")))


def on_compile(model, mode, executable, configuration, options) -> None:
    """Write a report for a newly compiled executable when reports are on (filled in by the report writer)."""
