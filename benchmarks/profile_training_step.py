"""Where one training step of the tutorial's CNN spends its time, by op: each op's forward and backward
(timed around the op's own numpy code), the optimizer's update, and the rest (the tape, the layers,
``fit``'s loop, metrics: Python overhead), on the CPU path or inside IPUStrategy, with or without
portable numerics. Prints a Markdown table (milliseconds per step of batch 64, of the process and of its main
thread) for benchmarks/README.md, each thread's processor time with the critical path (the busiest thread) and the
parallel efficiency, and with ``--cprofile`` the functions that take the most time.

Model: Conv2D(32, 3x3, relu) -> MaxPool 2x2 -> Conv2D(64, 3x3, relu) -> MaxPool 2x2 -> Flatten ->
Dropout(0.5) -> Dense(10, softmax); SGD(0.01), categorical cross-entropy, batch 64.
Not a test. Run:
    PYTHONPATH=. python benchmarks/profile_training_step.py [--threads 1] [--ipu] [--portable] [--steps 40]
"""

import argparse
import os
import sys


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--ipu", action="store_true", help="train inside IPUStrategy (a simulated IPU)")
    parser.add_argument("--portable", action="store_true", help="portable numerics (as the tests and notebooks)")
    parser.add_argument("--steps", type=int, default=40, help="steps timed, after 4 steps of warm-up")
    parser.add_argument("--cprofile", action="store_true", help="also print cProfile's 20 slowest functions")
    return parser.parse_args()


ARGS = parse_arguments() if __name__ == "__main__" else None
if ARGS is not None:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(ARGS.threads)  # before numpy loads its BLAS
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # as the course's kernels (ipu_teach/notebook_environment.py)

import contextlib  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402

import numpy as np  # noqa: E402

import ipu_teach.keras as keras  # noqa: E402
from ipu_teach import autograd  # noqa: E402
from ipu_teach.autograd import Function  # noqa: E402
from ipu_teach.autograd.ops import gemm  # noqa: E402
from ipu_teach.examples import configure_ipus, tutorial_model_fn  # noqa: E402

BATCH = 64


def clocks():
    """Processor seconds of the process and of the calling thread (the step's main thread: with more than one thread,
    what it runs itself is what the step waits for)."""
    return np.array([time.process_time(), time.thread_time()])


def all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from all_subclasses(sub)


PASS_OF_METHOD = {
    "forward": "forward",
    "backward": "backward",
    "backward_through": "backward",
    "backward_before_relu": "backward",
}
"""The op methods timed, and the pass each counts as: ``backward_through`` (a consumer running its producer's
backward with its own, ``Function.backward_through``) as the consumer's backward, the producer's part of it
(``backward_before_relu``) as the producer's."""


@contextlib.contextmanager
def op_timers(seconds):
    """Every op's ``forward`` and ``backward`` timed into ``seconds[(op, "forward" | "backward")]``, in
    processor time of the process and of the main thread (``clocks``: the load of other processes on a shared
    machine does not count)."""
    patched = []
    for cls in [Function, *all_subclasses(Function)]:
        for method in PASS_OF_METHOD:
            raw = cls.__dict__.get(method)
            if raw is None or getattr(raw.__func__, "__isabstractmethod__", False):
                continue
            patched.append((cls, method, raw))
            setattr(cls, method, _timed(raw, cls.__name__, method, seconds))
    try:
        yield
    finally:
        for cls, method, raw in patched:
            setattr(cls, method, raw)


_open_timers = []
"""The processor time spent in timed calls inside each timed op method running, innermost last: a fused op's call to
another op's method is timed as the fused op's, except a producer's ``backward_before_relu``, which is its own (and not
the caller's)."""


def _timed(raw, owner, method, seconds):
    function = raw.__func__
    is_classmethod = isinstance(raw, classmethod)

    def timed(*args, **kwargs):
        if _open_timers and method != "backward_before_relu":
            return function(*args, **kwargs)
        name = args[0].__name__ if is_classmethod else owner
        began = clocks()
        _open_timers.append(0.0)
        try:
            return function(*args, **kwargs)
        finally:
            elapsed, inner = clocks() - began, _open_timers.pop()
            seconds[(name, PASS_OF_METHOD[method])] += elapsed - inner
            if _open_timers:
                _open_timers[-1] += elapsed

    return classmethod(timed) if is_classmethod else staticmethod(timed)


@contextlib.contextmanager
def product_timer(seconds):
    """Every matrix product the ops compute (``gemm._product``: BLAS, with its casts and pieces) timed into
    ``seconds[(m, k, n)]``, in processor time (``clocks``): how much of the ops' time is arithmetic BLAS already does at
    its peak, and how much is numpy's passes around it."""
    raw = gemm._product

    def timed(a, b, *rest):
        began = clocks()
        try:
            return raw(a, b, *rest)
        finally:
            seconds[a.shape + b.shape[1:]] += clocks() - began

    gemm._product = timed
    try:
        yield
    finally:
        gemm._product = raw


@contextlib.contextmanager
def optimizer_timer(optimizer, seconds):
    apply = optimizer.apply_gradients

    def timed(pairs):
        began = clocks()
        try:
            return apply(pairs)
        finally:
            seconds[("optimizer", "update")] += clocks() - began

    optimizer.apply_gradients = timed
    try:
        yield
    finally:
        del optimizer.apply_gradients


def thread_seconds() -> dict:
    """Processor seconds each thread of this process has run so far, by thread id (BLAS' threads and the sample
    pool's included): ``/proc/self/task/*/schedstat`` (nanoseconds), else ``stat``'s utime + stime (clock ticks);
    empty where neither exists. Robust to other processes' load, which wall time is not."""
    times = {}
    tasks = "/proc/self/task"
    if not os.path.isdir(tasks):
        return times
    ticks = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(tasks):
        try:
            with open(f"{tasks}/{tid}/schedstat") as schedstat:
                times[int(tid)] = int(schedstat.read().split()[0]) / 1e9
        except OSError:
            try:
                with open(f"{tasks}/{tid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                times[int(tid)] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
            except OSError:
                continue  # the thread ended
    return times


def per_thread(before: dict, after: dict, steps: int) -> list:
    """Processor milliseconds per step each thread ran between ``before`` and ``after``, largest first (threads
    that ran less than 0.01 ms a step left out)."""
    ms = [1000 * (after[tid] - before.get(tid, 0.0)) / steps for tid in after]
    return sorted((value for value in ms if value >= 0.01), reverse=True)


def build(ipu: bool):
    """The compiled model and a function that opens its scope (IPUStrategy's, or none for the CPU path)."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    scope = contextlib.nullcontext
    if ipu:
        from ipu_teach import ipu as ipu_module

        configure_ipus(1)
        scope = ipu_module.ipu_strategy.IPUStrategy().scope
    with scope():
        model = keras.Model(*tutorial_model_fn())
        model.compile(keras.optimizers.SGD(learning_rate=0.01), "categorical_crossentropy", metrics=["accuracy"])
    return model, scope


def data(samples):
    (x, y), _ = keras.datasets.mnist.load_data()
    x = (x[:samples].astype("float32") / 255)[..., None]
    return x, keras.utils.to_categorical(y[:samples], 10).astype("float32")


def profile(ipu: bool, portable: bool, steps: int):
    """Milliseconds per step by (op, pass) and by matrix product (m, k, n), the total wall and processor time, and
    the cProfile of the run."""
    autograd.set_portable_numerics(portable)
    model, scope = build(ipu)
    x, y = data(BATCH * steps)
    with scope():
        model.fit(x[: 4 * BATCH], y[: 4 * BATCH], batch_size=BATCH, epochs=1, verbose=0)  # warm-up (and compile)
        seconds, products = defaultdict(lambda: np.zeros(2)), defaultdict(lambda: np.zeros(2))
        profiler = cProfile.Profile() if ARGS.cprofile else contextlib.nullcontext()
        with op_timers(seconds), optimizer_timer(model.optimizer, seconds), product_timer(products):
            threads, wall, cpu = thread_seconds(), time.perf_counter(), clocks()
            with profiler:  # only with --cprofile: its hooks on every call would count as the step's Python
                model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
            wall, cpu = time.perf_counter() - wall, clocks() - cpu
            threads = per_thread(threads, thread_seconds(), steps)
    per_step = [{k: 1000 * v / steps for k, v in times.items()} for times in (seconds, products)]
    return *per_step, 1000 * wall / steps, 1000 * cpu / steps, threads, profiler


def table(ms, wall, cpu) -> str:
    """Milliseconds per step by op and pass, the rest of the step (Python), and the step's total: processor time of
    the process and of the main thread (``cpu`` and each value of ``ms``: the pair ``clocks`` gives). With more than one
    thread, an op whose main-thread time is its processor time runs serially."""
    rows = sorted(ms.items(), key=lambda item: -item[1][0])
    lines = ["| op | pass | processor ms / step | main thread | share |", "|---|---|---:|---:|---:|"]
    lines += [
        f"| {op} | {what} | {value[0]:.2f} | {value[1]:.2f} | {value[0] / cpu[0]:.0%} |"
        for (op, what), value in rows
        if value[0] >= 0.005
    ]
    rest = cpu - sum(ms.values())
    lines.append(
        f"| (tape, layers, fit loop, metrics) | Python | {rest[0]:.2f} | {rest[1]:.2f} | {rest[0] / cpu[0]:.0%} |"
    )
    lines.append(f"| **step** | processor (wall) | **{cpu[0]:.2f}** ({wall:.2f}) | {cpu[1]:.2f} | 100% |")
    return "\n".join(lines)


def thread_summary(threads: list, cores: int) -> str:
    """The threads' processor ms per step (``per_thread``), the critical path (the busiest thread: the step's wall time
    on ``cores`` idle cores cannot be shorter) and the parallel efficiency (their sum over ``cores`` times the critical
    path)."""
    critical, total = threads[0], sum(threads)
    return (
        f"per thread (processor ms / step): {', '.join(f'{value:.2f}' for value in threads)}\n"
        f"critical path {critical:.2f} ms, sum {total:.2f} ms, "
        f"parallel efficiency {total / (cores * critical):.0%} of {cores} thread(s)"
    )


def main():
    ms, products, wall, cpu, threads, profiler = profile(ARGS.ipu, ARGS.portable, ARGS.steps)
    where = "inside IPUStrategy" if ARGS.ipu else "CPU path"
    numerics = "portable numerics" if ARGS.portable else "float32 numerics"
    print(f"{where}, {numerics}, {ARGS.threads} BLAS thread(s), batch {BATCH}, {ARGS.steps} steps")
    print(f"load average: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{BATCH * 1000 / wall:.0f} samples/s wall, {BATCH * 1000 / cpu[0]:.0f} samples per processor-second\n")
    print(table(ms, wall, cpu))
    if threads:
        print(f"\n{thread_summary(threads, ARGS.threads)}")
    total = sum(products.values(), np.zeros(2))
    print(f"\nof which matrix products (BLAS, inside the ops above), ms / step: {total[0]:.2f} (main {total[1]:.2f})")
    for (m, k, n), value in sorted(products.items(), key=lambda item: -item[1][0]):
        print(f"  {m} x {k} times {k} x {n}: {value[0]:.2f} ({value[1]:.2f})")
    if ARGS.cprofile:
        print()
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
