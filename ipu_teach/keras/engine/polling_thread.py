"""When callbacks run once per step on a polling thread beside the executions (Graphcore's asynchronous callbacks).

With ``model.set_asynchronous_callbacks(True)`` Graphcore's Keras starts a thread (graphcore/keras
keras/ipu/extensions/polling_thread.py) that takes each step's results off the outfeed as the device produces
them and calls the callbacks' ``on_*_batch_begin`` and ``on_*_batch_end`` for that step, while the main thread
runs the executions; ``fit`` and ``evaluate`` join it at the end of the pass. The thread finishes a step when
the device has produced it and the thread has finished the step before, plus its own work on the step. So a
host that is quicker than the device shows the device's step, and a slower one its own work per step.

Example:

>>> [round(t * 1e3, 3) for t in completions([1e-3, 1.1e-3, 1.2e-3], seconds_per_step=0.15e-3)]
[1.15, 1.3, 1.45]
>>> [round(t * 1e3, 3) for t in completions([1e-3, 2e-3], seconds_per_step=0.15e-3)]
[1.15, 2.15]
"""


def completions(arrivals, seconds_per_step: float, free_at: float = 0.0) -> list:
    """The times at which the polling thread has finished each step's callbacks.

    Args:
      arrivals: The times, in step order, at which each step's results reach the host's outfeed.
      seconds_per_step: The thread's work on one step (``hardware.HostSpec.callback_step_s``).
      free_at: When the thread finished the steps before these (it carries over from one execution to the next).
    """
    done = []
    for arrival in arrivals:
        free_at = max(arrival, free_at) + seconds_per_step
        done.append(free_at)
    return done


class PollingThread:
    """The polling thread of one pass of ``fit``, ``evaluate`` or ``predict`` (Graphcore's ``PollingThread``): for
    each step of an execution and each replica, ``on_*_batch_begin(step)`` and ``on_*_batch_end(step, logs)``,
    and the progress bar at the simulated time the thread finished that step."""

    def __init__(self, executor, plan, mode, hooks, cbs, bar):
        self.executor, self.plan, self.mode, self.hooks, self.cbs, self.bar = executor, plan, mode, hooks, cbs, bar
        self.free_at = 0.0
        """When the thread finished the steps so far."""

    def run(self, first_step, start, seconds, step_logs) -> dict:
        """The steps of the execution that started at ``start`` and took ``seconds``, after ``first_step`` steps;
        ``step_logs`` are each step's (and replica's) logs. Returns the last metric logs."""
        replicas, (begin, end) = self.plan.replicas, self.hooks
        arrivals = [start + at for at in self.executor.step_arrivals(self.mode, seconds) for _ in range(replicas)]
        finished = completions(arrivals, self.plan.callback_seconds_per_step, self.free_at)
        logs = {}
        for index, (at, log) in enumerate(zip(finished, step_logs)):
            step = first_step + index // replicas
            getattr(self.cbs, begin)(step)
            getattr(self.cbs, end)(step, log)
            logs = {} if self.mode == "predict" else log  # the bar shows no outputs
            self.bar.update(step + 1, list(logs.items()), at, finalize=False)
        self.free_at = finished[-1]
        return logs
