"""PopVision-like profiling of the simulated IPU: reports of memory per tile, liveness and the execution.

    with ipu_teach.profiling.auto_report("./report"):      # or POPLAR_ENGINE_OPTIONS / IPUConfig
        model.fit(...)
    report = ipu_teach.profiling.open_report(ipu_teach.profiling.last_report_path())
    ipu_teach.profiling.print_profile_summary(report)

Example:

>>> from ipu_teach import profiling
>>> config = ipu.config.IPUConfig()
>>> config.auto_select_ipus = 1
>>> config.ipu_model.tiles_per_ipu = 16
>>> config.configure_ipu_system()
>>> with profiling.auto_report("report"), ipu.ipu_strategy.IPUStrategy().scope():
...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
...     model.compile("sgd", "mse", steps_per_execution=2)
...     history = model.fit(np.ones((8, 4), np.float32), np.ones((8, 2), np.float32), batch_size=4, verbose=0)
>>> report = profiling.open_report(profiling.last_report_path())
>>> report.compilation.target.numTiles, report.execution.total_cycles()
(16, 87376)
"""
from .build import build_report
from .capture import EngineOptions, auto_report, engine_options, last_report_path, written_reports
from .compare import compare_reports, comparison_rows
from .files import open_report, write_report
from .report import ProgramVisitor, Report
from .summary import print_profile_summary, profile_summary
from .trace import chrome_trace_events, write_chrome_trace

__all__ = ["EngineOptions", "ProgramVisitor", "Report", "auto_report", "build_report", "chrome_trace_events",
           "compare_reports", "comparison_rows", "engine_options", "last_report_path", "open_report",
           "print_profile_summary", "profile_summary", "write_chrome_trace", "write_report", "written_reports"]
