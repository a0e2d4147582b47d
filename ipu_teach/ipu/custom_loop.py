"""Custom training loops on the simulated IPU: ``strategy.run(fn, args=...)`` costed as the IPU runs it.

Graphcore's TensorFlow compiles the function ``strategy.run`` calls into one Poplar program, compiled on its
first call (and again when a call traces differently: new shapes, another number of steps). Each call is one
execution: the host calls the program (the ``custom_loop`` front end of ``hardware.HOST_APIS``), and the
program runs its steps on the device: a ``for _ in tf.range(n)`` loop taking each step's batch from an infeed
(``next(iterator)``) is n steps in one execution, as ``steps_per_execution=n`` is in Keras, each step
streaming its batch in and what it enqueues on outfeeds out. Without an infeed, a call is one step whose
arguments are streamed in. What the function returns goes to the host once per call, after its steps; a
program with nothing to stream one way has no stream (and no host sync) that way.

Here the function runs on the host's numpy (the CPU's numerics) while a :class:`LoopCall` watches it: the
ops of its first step (``autograd.record``, from the first infeed dequeue to the second), how many steps it
ran (infeed dequeues), the bytes enqueued on outfeeds and returned, and whether it took gradients (training: a
backward pass and a weight update per step). That step is lowered and costed by the executor's
``compile_executable``, as a Keras step is (``lowering.RecordedStep``, with a :class:`LoopProgram` standing in
for the model): the BSP Engine counts its cycles, the host its call.

An on-device loop of 4 steps over an infeed, with an outfeed, called twice (one program, compiled once):

Example:

>>> import ipu_teach.tensorflow as tf
>>> from ipu_teach.examples import configure_ipus
>>> config = configure_ipus(1)
>>> strategy = ipu.ipu_strategy.IPUStrategy()
>>> @tf.function(jit_compile=True)
... def loop(iterator, steps, outfeed):
...     for _ in tf.range(steps):
...         outfeed.enqueue(tf.reduce_sum(model(next(iterator))))
>>> with strategy.scope():
...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
...     outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
...     batches = iter(tf.data.Dataset.from_tensor_slices(np.ones((64, 4), np.float32)).batch(8).repeat())
...     for _ in range(2):
...         strategy.run(loop, args=[batches, 4, outfeed])
INFO:ipu_teach:Compiled `loop` for the IPU (a custom loop, 4 step(s) per call, inference): ...
>>> timing = ipu.custom_loop.timings()["loop"]
>>> timing.calls, timing.steps, timing.executable.steps_per_execution, outfeed.dequeue().shape
(2, 8, 4, (8,))
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import types
from dataclasses import dataclass, field

import numpy as np

from .. import nest, session
from ..autograd import record
from ..keras.metrics import Metric
from ..keras.models import Model
from ..keras.optimizers import SGD, Optimizer
from . import messages, preparation
from .executor import Setup, compile_executable
from .keras_extensions import ExtensionOptions
from .lowering import RecordedStep

_calls: list = []
"""The LoopCall of each ``strategy.run`` running now (innermost last)."""


@dataclass
class LoopCall:
    """What one call of a function on the IPU did, as far as the program's cost depends on it."""

    steps: int = 0
    """Infeed dequeues: the steps of the device loop (0: no infeed, one step)."""
    first_element: object = None
    step_ops: list = field(default_factory=list)
    """The ops of the first step (of the whole call when there is no infeed)."""
    outfeed_bytes: int = 0
    result_bytes: int = 0
    """What the call returns to the host, once, after its steps."""
    metric_updates: list = field(default_factory=list)
    """``(steps so far, metric, shape of its predictions or values)`` of each metric object update."""
    trained: bool = False
    trainable: list = field(default_factory=list)
    recording: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)


def running() -> bool:
    """True while ``strategy.run`` runs a function on the IPU (TensorFlow's XLA context)."""
    return bool(_calls)


def dequeued(element):
    """An infeed gave ``element`` to the function running now: a step begins (called by the infeeds)."""
    if _calls:
        call = _calls[-1]
        call.steps += 1
        if call.steps == 1:  # the ops before the first step are not a step's: record the first step's, from here...
            call.first_element = element
            call.recording.close()
            call.step_ops = call.recording.enter_context(record())
        elif call.steps == 2:
            call.recording.close()  # ... to the next step's dequeue
    return element


def enqueued(element) -> None:
    """An outfeed took ``element`` from the function running now (called by the outfeeds)."""
    if _calls:
        _calls[-1].outfeed_bytes += streamed_bytes(element)


def host_array(value) -> np.ndarray:
    """``value`` as the IPU streams it: an array or tensor keeps its dtype, a Python number takes TensorFlow's
    (a float is float32, an int int32 unless it needs 64 bits: ``tf.convert_to_tensor``'s defaults, where numpy
    would make 64 bits of every one)."""
    if hasattr(value, "dtype"):
        return np.asarray(value)
    array = np.asarray(value)
    if array.dtype.kind == "f":
        return array.astype(np.float32)
    int32 = np.iinfo(np.int32)
    if array.dtype.kind == "i" and array.size and int32.min <= array.min() and array.max() <= int32.max:
        return array.astype(np.int32)
    return array


def streamed_bytes(structure) -> int:
    """The bytes of the tensors and numbers in ``structure`` (nested lists, tuples and dicts); anything else
    (None, a Python object) is not a tensor and streams nothing."""
    values = [v for v in nest.leaves(structure) if _is_data(v) or isinstance(v, (bool, int, float, np.generic))]
    return sum(host_array(v).nbytes for v in values)


def took_gradients(sources) -> None:
    """The function running now differentiated with respect to ``sources`` (called by ``tf.GradientTape``)."""
    if _calls:
        call = _calls[-1]
        call.trained = True
        call.trainable += [s for s in sources if all(s is not t for t in call.trainable)]


@dataclass
class LoopTiming:
    """A function's calls on the simulated IPU: how many, their steps, and their simulated seconds (compile
    included), per function name; :func:`timings` gives them."""

    calls: int = 0
    steps: int = 0
    seconds: float = 0.0
    compile_seconds: float = 0.0
    executable: object = None
    """The last program compiled for the function (``executor.Executable``: ``explain()``, ``timeline``...)."""


def clear_timings() -> None:
    """Forget the timings so far (``ipu-teach run`` reports each script's own; ``reset_session`` does too)."""
    session.runtime.loop_timings.clear()


def summary() -> str:
    """One line per function ``strategy.run`` ran: its calls, steps and simulated seconds; "" if none ran.

    Example:

    >>> ipu.custom_loop.summary()
    ''
    """
    return "\n".join(
        f"ipu-teach: `{name}` ran {t.calls} call(s), {t.steps} step(s) on the simulated IPU: {t.seconds:.2f} s "
        f"simulated (compile {t.compile_seconds:.1f} s, then {(t.seconds - t.compile_seconds) * 1e3 / t.steps:.3f} "
        "ms per step)"
        for name, t in session.runtime.loop_timings.items()
    )


def timings() -> dict:
    """``{function name: LoopTiming}`` of the functions ``strategy.run`` ran on the simulated IPU (ipu-teach's
    own: the simulated time of a custom loop, which a script's ``time.time()`` does not measure).

    Example:

    >>> import ipu_teach.tensorflow as tf
    >>> from ipu_teach.examples import configure_ipus
    >>> config = configure_ipus(1)
    >>> with ipu.ipu_strategy.IPUStrategy().scope() as strategy:
    ...     for _ in range(3):
    ...         doubled = strategy.run(tf.function(lambda x: x * 2), args=[np.ones((8, 4), np.float32)])
    INFO:ipu_teach:Compiled `<lambda>` for the IPU (a custom loop, 1 step(s) per call, inference): ...
    >>> timing = ipu.custom_loop.timings()["<lambda>"]
    >>> timing.calls, timing.steps, timing.seconds > timing.compile_seconds > 0
    (3, 3, True)
    """
    return dict(session.runtime.loop_timings)


class LoopProgram:
    """What lowering needs of a Keras model, for a custom loop's function: the layers and weights of the
    models it uses, the variables it trains and the optimizer that updates them."""

    def __init__(self, name, models, optimizer, trainable):
        self.name = name
        self._models = models
        self.layers = [layer for model in models for layer in model.layers]
        self.weights = [w for model in models for w in model.weights]
        self.weights += [v for v in trainable if all(v is not w for w in self.weights)]
        self.trainable_weights = list(trainable)
        self.optimizer = optimizer
        self.metrics = []

    def inbound_layers(self, layer) -> list:
        return [p for model in self._models if layer in model.layers for p in model.inbound_layers(layer)]


class CustomLoopPrograms:
    """The programs one strategy compiled for the functions it ran, keyed by function and trace."""

    def __init__(self):
        self._programs = {}
        self._configuration = None

    def run(self, function, args, kwargs):
        """Call ``function(*args, **kwargs)`` as one execution on the IPUs; returns what it returns."""
        configuration = preparation.configured_system()
        if configuration.num_ipus > 1:
            from ..not_simulated import NotSimulatedError

            raise NotSimulatedError(
                f"tensorflow.python.ipu.ipu_strategy.IPUStrategy.run on {configuration.num_ipus} replicas "
                "(a custom loop is simulated on one IPU: set auto_select_ipus = 1)"
            )
        if configuration != self._configuration:  # a new configure_ipu_system: nothing compiled is kept
            self._programs.clear()
            self._configuration = configuration
        call = LoopCall()
        models, optimizers, metrics = _keras_objects(function, args, kwargs)
        iterations = [optimizer.iterations for optimizer in optimizers]
        with contextlib.ExitStack() as stack:
            _calls.append(call)
            stack.callback(_calls.pop)
            for metric in metrics:
                _watch_updates(metric, call, stack)
            stack.callback(call.recording.close)
            call.step_ops = call.recording.enter_context(record())  # the whole call's ops, unless it has steps
            result = nest.map_structure(_without_history, function(*args, **kwargs))
        call.result_bytes = streamed_bytes(result)
        if [optimizer.iterations for optimizer in optimizers] != iterations:  # also optimizer.minimize(...)
            call.trained = True
            call.trainable = call.trainable or [w for model in models for w in model.trainable_weights]
        self._cost(function, args, call, configuration, models, optimizers)
        return result

    def _cost(self, function, args, call, configuration, models, optimizers) -> None:
        steps = max(call.steps, 1)
        x, y = _inputs(call.first_element) if call.steps else _inputs([a for a in args if _is_data(a)])
        mode = "train" if call.trained else ("test" if y is not None else "predict")
        first_step = 1 if call.steps else 0  # the updates of the step recorded (of the whole call without an infeed)
        updates = [(metric, shape) for step, metric, shape in call.metric_updates if step == first_step]
        metric_work = tuple((metric.name, metric.device_work(shape)) for metric, shape in updates)
        recorded = RecordedStep(tuple(call.step_ops), call.outfeed_bytes // steps, call.result_bytes, metric_work)
        name = getattr(function, "__name__", type(function).__name__)
        key = (
            _identity(function),
            mode,
            steps,
            _shape(x),
            _shape(y),
            recorded.output_bytes,
            recorded.result_bytes,
            tuple(repr(work) for work in metric_work),
            tuple((r.op, r.input_shapes, r.output_shape) for r in recorded.ops),
        )
        executable = self._programs.get(key)
        due, compiled = 0.0, None
        if executable is None:
            optimizer = optimizers[0] if optimizers else SGD()
            program = LoopProgram(name, models, optimizer, call.trainable)
            options = ExtensionOptions()
            setup = Setup(
                mode,
                configuration,
                None,
                1,
                1,
                options.gradient_accumulation_reduction_method,
                steps,
                x,
                y,
                "custom_loop",
                recorded=recorded,
            )
            executable, due = compile_executable(program, setup)
            self._programs[key] = compiled = executable
            done, what = ("Loaded", "load") if executable.from_cache else ("Compiled", "compile")
            messages.info(
                f"{done} `{name}` for the IPU (a custom loop, {steps} step(s) per call, "
                f"{'training' if call.trained else 'inference'}): simulated {what} {due:.1f} s, then "
                f"{executable.seconds_per_execution * 1e3:.3f} ms per call"
            )
        note_execution(name, steps, executable.seconds_per_execution * configuration.runs + due, due, compiled)


def note_execution(name, steps, seconds, compile_seconds=0.0, compiled=None) -> None:
    """Count one call of the program ``name`` (a custom loop's function, a PopTorch model): its steps and simulated
    seconds, of which ``compile_seconds`` compiling ``compiled`` (the executable, when this call compiled it)."""
    timing = session.runtime.loop_timings.setdefault(name, LoopTiming())
    timing.calls += 1
    timing.steps += steps
    timing.seconds += seconds
    timing.compile_seconds += compile_seconds
    if compiled is not None:
        timing.executable = compiled


def _watch_updates(metric, call, stack) -> None:
    """Note each ``update_state`` of ``metric`` in ``call`` (as ``metric(...)`` makes too) while the call runs: in
    TensorFlow a metric updated inside the function is part of the program, as fit's compiled metrics are."""
    update_state = metric.update_state
    parameters = list(inspect.signature(update_state).parameters)

    def noted_update_state(*args, **kwargs):
        given = {**dict(zip(parameters, args)), **kwargs}
        watched = given["values"] if "values" in given else given.get("y_pred")  # a Mean's values, or predictions
        call.metric_updates.append((call.steps, metric, np.shape(watched)))
        return update_state(*args, **kwargs)

    metric.update_state = noted_update_state
    stack.callback(vars(metric).pop, "update_state", None)


def _without_history(value):
    """A tensor the function returns, as the host gets it: its values, without the ops that made it (which
    would keep every step's activations alive while the caller keeps the result, as a list of losses does)."""
    if getattr(value, "node", None) is None:
        return value
    returned = copy.copy(value)
    returned.node, returned.requires_grad = None, False
    return returned


def _identity(function):
    """A function's identity across calls: a bound method's underlying function and object."""
    inner = getattr(function, "python_function", function)
    return (getattr(inner, "__func__", inner), id(getattr(inner, "__self__", None)))


def _is_data(value) -> bool:
    return isinstance(value, np.ndarray) or (hasattr(value, "shape") and hasattr(value, "dtype"))


def _inputs(element) -> tuple:
    """A step's features and labels, as the program streams them in: of an element ``(x, y)``, ``(x,)`` or
    ``x`` (a dict: its values), the first two arrays; no arrays at all is one sample of nothing."""
    if isinstance(element, dict):
        element = list(element.values())
    if not isinstance(element, (list, tuple)):
        element = [element]
    parts = [np.asarray(part) for part in element if _is_data(part)]
    return (parts[0] if parts else np.zeros((1, 0), np.float32)), (parts[1] if len(parts) > 1 else None)


def _shape(array):
    return None if array is None else (np.shape(array), np.asarray(array).dtype.str)


def _keras_objects(function, args, kwargs) -> tuple:
    """The Keras models, optimizers and metrics ``function`` uses: in its arguments, its closure, the globals it names
    (and the functions it calls by name, one level down), and a method's object's attributes."""
    found, seen = [], set()

    def visit(value, depth):
        if id(value) in seen or depth > 2:
            return
        seen.add(id(value))
        if isinstance(value, (Model, Optimizer, Metric)):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item, depth)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item, depth)
        elif callable(value) and hasattr(value, "python_function"):  # a tf.function
            visit(value.python_function, depth)
        elif isinstance(value, types.MethodType):
            visit(value.__func__, depth)
            for item in vars(value.__self__).values() if hasattr(value.__self__, "__dict__") else ():
                visit(item, depth + 1)
        elif inspect.isfunction(value):
            closure = inspect.getclosurevars(value)
            for item in [*closure.nonlocals.values(), *closure.globals.values()]:
                visit(item, depth + 1)

    visit(function, 0)
    for value in [*args, *kwargs.values()]:
        visit(value, 0)
    return tuple([v for v in found if isinstance(v, kind)] for kind in (Model, Optimizer, Metric))
