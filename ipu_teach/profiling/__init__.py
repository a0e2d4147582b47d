"""PopVision-like profiling of the simulated IPU: reports of memory per tile, liveness and the execution.

    with ipu_teach.profiling.auto_report("./report"):      # or POPLAR_ENGINE_OPTIONS / IPUConfig
        model.fit(...)
    report = ipu_teach.profiling.open_report(ipu_teach.profiling.last_report_path())
    ipu_teach.profiling.print_profile_summary(report)

Example:

>>> from ipu_teach.examples import small_report
>>> report = small_report()                # a Dense model trained on 16 tiles, profiled
>>> report.compilation.target.numTiles, report.execution.total_cycles()
(16, 96680)
"""

from .build import build_report
from .capture import EngineOptions, auto_report, engine_options, last_report_path, written_reports
from .compare import compare_reports, comparison_rows
from .files import open_report, write_report
from .report import ProgramVisitor, Report
from .summary import print_profile_summary, profile_summary
from .trace import chrome_trace_events, write_chrome_trace

__all__ = [
    "EngineOptions",
    "ProgramVisitor",
    "Report",
    "auto_report",
    "build_report",
    "chrome_trace_events",
    "compare_reports",
    "comparison_rows",
    "engine_options",
    "last_report_path",
    "open_report",
    "print_profile_summary",
    "profile_summary",
    "write_chrome_trace",
    "write_report",
    "written_reports",
]
