"""``keras.Model`` (functional) and ``keras.Sequential``."""

from __future__ import annotations

import os

import numpy as np

from ..autograd import Tensor, no_grad, ops
from ..not_simulated import NotSimulatedError
from . import backend, mixed_precision
from . import losses as losses_module
from . import optimizers as optimizers_module
from .engine import (
    atomic_step,
    call_context,
    device,
    extensions,
    graph,
    hdf5_format,
    keras_zip,
    model_config,
    model_file,
    on_batch,
    sample_weights,
    saving,
    step_overrides,
    subclassed,
    training,
)
from .engine import overwrite as overwrite_module
from .engine import summary as summary_module
from .engine.compiled_outputs import CompiledOutputs, LossValue
from .ipu import layers as ipu_layers
from .layers.base import Input, InputLayer, KerasTensor, Layer, format_shape, input_value_dtype, outermost_call


def _values(output):
    return [o.data for o in output] if isinstance(output, list) else output.data


def _loss_value(loss, parts) -> LossValue:
    value = LossValue(loss.data)
    if len(parts) > 1:
        value.per_output = parts
    return value


def _symbolic(value) -> bool:
    """Whether ``value`` is a ``keras.Input`` tensor (or a list of them): what a functional model is made from."""
    return isinstance(value, KerasTensor) or (isinstance(value, (list, tuple)) and any(map(_symbolic, value)))


def _fits(shape, declared) -> bool:
    """A size the model's input leaves unknown (None, as in ``keras.Input((None, 8))``) takes any value."""
    return len(shape) == len(declared) and all(want is None or want == got for want, got in zip(declared, shape))


class Model(Layer):
    """A graph of layers from ``inputs`` to ``outputs``, with Keras' training and inference methods.

    Built with the functional API: call layers on ``keras.Input`` tensors, then give the model its inputs
    and outputs. Created inside ``ipu.ipu_strategy.IPUStrategy().scope()``, its ``fit``,
    ``evaluate`` and ``predict`` run on the simulated IPU, with the numerics of the CPU. Another package can
    add methods to every model built after it registers them (:mod:`.engine.extensions`): that is how
    ``ipu_teach.ipu`` adds Graphcore's methods (``set_pipelining_options``, ``set_gradient_accumulation_options``, ...).

    Args:
      inputs: The input(s) of the model: a ``keras.Input`` tensor or a list of them.
      outputs: The output(s) of the model: tensors computed from ``inputs`` by layers.
      name: String, the name of the model. Default: None, ``model``, ``model_1``, ...

    Raises:
      ValueError: if only one of ``inputs`` and ``outputs`` is given, or the outputs do not depend on them.

    Example:

    >>> inputs = keras.Input(shape=(4,))
    >>> outputs = keras.layers.Dense(2, activation="softmax")(inputs)
    >>> model = keras.Model(inputs, outputs)
    >>> model.output_shape, model.count_params()
    ((None, 2), 10)
    """

    def __new__(cls, *args, **kwargs):
        """A model is built as its class with the registered extensions (``engine.extensions``)."""
        return super().__new__(extensions.extended_class(cls))

    def __getattr__(self, name):
        """Called only for a name the model does not have: say how to get it if an extension provides it."""
        raise extensions.missing_attribute(self, name)

    is_model = True

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        super().__init__(name=name or backend.unique_name(self._default_name()), **kwargs)
        own_call = type(self).call is not Model.call
        if own_call and outputs is None and inputs is not None and not _symbolic(inputs):
            inputs = None  # as Keras, a subclass's lone positional argument is ignored (Graphcore's docs pass self)
        # written as a class: layers made in __init__, a call of its own (engine/subclassed.py)
        self.subclassed = inputs is None and own_call
        self.traced = False  # a subclassed model's call traced into a graph of layer calls (for pipelining)
        self.trace_error = None
        self.step_logs = {}  # the logs the model's own train_step / test_step last returned, by mode
        self.compiled = False
        self._captured_gradients = []  # per batch since the last update, those of keras.ipu.layers capture layers
        self.stop_training = False
        self.steps_per_execution = 1
        self.device_executor = None  # set by compile: the executor of the model's strategy (engine.device)
        self._distribution_strategy = device.current()  # as in Keras: the model keeps the strategy it is created under
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("keras.Model(inputs, outputs) needs both inputs and outputs")
            self._init_graph(inputs, outputs)

    @classmethod
    def _default_name(cls):
        return "model" if cls is Model or not issubclass(cls, Model) else backend.snake_case(cls.__name__)

    def _init_graph(self, inputs, outputs):
        self._single_input = isinstance(inputs, KerasTensor)
        self._single_output = isinstance(outputs, KerasTensor)
        self.inputs, self.outputs = graph.as_list(inputs), graph.as_list(outputs)
        self._order = graph.topological_order(self.outputs)
        graph.check_inputs_reach(self.inputs, self._order)
        self._layers = graph.keras_order(self.outputs, graph.layers_in_order(self._order))
        self.input_shape = self.inputs[0].shape if self._single_input else [t.shape for t in self.inputs]
        self.output_shape = self.outputs[0].shape if self._single_output else [t.shape for t in self.outputs]
        self.built = True

    # ----- structure -----------------------------------------------------------------------------
    @property
    def layers(self) -> list:
        """The model's layers: a subclassed model's are those its attributes hold, in the order assigned."""
        if self.subclassed:
            return Layer._sublayers(self)
        return list(self._layers) if self.built else []

    def _sublayers(self) -> list:
        return self.layers

    def get_layer(self, name=None, index=None) -> Layer:
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[layer.name for layer in self.layers]}")

    def inbound_layers(self, layer) -> list:
        """The layers feeding ``layer``, per call (once for a call with several outputs, LSTM's with its states)."""
        calls = {id(t.siblings) if t.siblings else id(t): t for t in getattr(self, "_order", ()) if t.layer is layer}
        return [parent.layer for t in calls.values() for parent in t.inputs]

    def is_sequential_like(self) -> bool:
        """A single chain (each layer fed by the one before): summary then omits 'Connected to'."""
        if self.subclassed:  # Keras lists its layers without their connections
            return True
        calls = [t for t in self._order if not isinstance(t.layer, InputLayer)]
        if len(self.inputs) != 1 or len(self.outputs) != 1 or len({id(t.layer) for t in calls}) != len(calls):
            return False
        return all(len(t.inputs) == 1 for t in calls) and len(calls) + 1 == len(self._order)

    @Layer.trainable.setter
    def trainable(self, value) -> None:
        """As in Keras, freezing (or unfreezing) a model does the same to every layer in it."""
        Layer.trainable.fset(self, value)
        for layer in self.layers:
            layer.trainable = value

    @property
    def weights(self) -> list:
        """Each layer's weights, in the order of ``layers``, then the model's own (``add_weight``), as in Keras."""
        return call_context.distinct([w for layer in self.layers for w in layer.weights] + self._weights)

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        own = [w for w, t in zip(self._weights, self._trainable_flags) if t]
        return call_context.distinct([w for layer in self.layers for w in layer.trainable_weights] + own)

    @property
    def non_trainable_weights(self) -> list:
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in trainable]

    # TensorFlow's names for the same lists, as custom training loops use them (tape.gradient, apply_gradients)
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def get_config(self) -> dict:
        """The model's architecture as Keras' configuration: its layers (each one's class, arguments and
        the layers it is called on), its inputs and its outputs. ``Model.from_config`` makes the same
        architecture again, with new weights. A subclass built without ``inputs`` and ``outputs`` gives
        the arguments it was made with, as a layer does.

        Returns:
          A dict of JSON-ready values.

        Example:

        >>> inputs = keras.Input(shape=(4,), name="x")
        >>> model = keras.Model(inputs, keras.layers.Dense(2, name="d")(inputs), name="m")
        >>> config = model.get_config()
        >>> [(layer["name"], layer["inbound_nodes"]) for layer in config["layers"]]
        [('x', []), ('d', [[['x', 0, 0, {}]]])]
        >>> keras.Model.from_config(config).count_params()
        10
        """
        if self.subclassed or not hasattr(self, "_order"):
            return super().get_config()
        return model_config.functional_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A model made from ``get_config``'s configuration (layer classes of one's own in ``custom_objects``)."""
        if "layers" not in config:
            return super().from_config(config)
        return model_config.functional_from_config(cls, config, custom_objects)

    def get_weights(self) -> list:
        """Retrieves the weights of the model, as numpy arrays (copies), in the order of ``model.weights``.

        After training on the IPU the weights are back on the host, as Graphcore's Keras copies them
        after each execution: comparing them with a CPU run shows the two compute the same.

        Returns:
          A flat list of numpy arrays.

        Example:

        >>> model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
        >>> [w.shape for w in model.get_weights()]
        [(3, 2), (2,)]
        """
        return [w.data.copy() for w in self.weights]

    def set_weights(self, weights) -> None:
        weights = list(weights)
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"Model '{self.name}' has {len(mine)} weights, but {len(weights)} were given")
        for w, value in zip(mine, weights):
            if np.shape(value) != w.shape:
                raise ValueError(
                    f"Model '{self.name}': weight {w.name} has shape {w.shape}, "
                    f"but the value given has shape {np.shape(value)}"
                )
        for w, value in zip(mine, weights):
            w.data = np.array(value, dtype=w.dtype)

    def save_weights(self, filepath, overwrite=True, save_format=None, options=None) -> None:
        """Every weight, in model order: to a name ending ``.h5`` (or ``save_format="h5"``) in Keras 2's HDF5
        layout, which real Keras loads; otherwise in one ``.npz`` file (no pickle). ``load_weights`` reads both.

        The file is written atomically (``ipu_teach/atomic.py``): never half-written; a replaced file keeps
        its permissions, a symbolic link is written through, a hard link's other names keep the old contents.
        With ``overwrite=False`` an existing file is replaced only if you answer "y" when asked, as in Keras;
        where nobody can be asked (no terminal) it is kept and FileExistsError raised.
        """
        if overwrite or overwrite_module.proceed_with_overwrite(filepath, "model.save_weights"):
            if _hdf5_wanted(filepath, save_format):
                hdf5_format.save_weights(self, filepath)
            else:
                saving.save_weights(self, filepath)

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None, **kwargs) -> None:
        """The whole model (architecture, weights, compile arguments and optimizer state). To a name ending
        ``.h5`` (or ``save_format="h5"``): Keras 2's HDF5 model file; ending ``.keras`` (or
        ``save_format="keras"``): Keras 2.13+'s ``.keras`` zip; both are files real Keras loads. Otherwise one
        zip file of ipu-teach's, without pickle; ``keras.models.load_model`` reads all three.

        Written atomically, and ``overwrite=False`` asks first, as ``save_weights`` says."""
        if self.subclassed:
            raise NotImplementedError(
                f"model.save: model '{self.name}' is a subclassed model, defined by the body of its call method, "
                "which cannot be saved as an architecture (as Keras says of HDF5 files); use model.save_weights, "
                "and make the model again from its class to load_weights into it"
            )
        if overwrite or overwrite_module.proceed_with_overwrite(filepath, "model.save"):
            if _hdf5_wanted(filepath, save_format):
                hdf5_format.save_model(self, filepath, include_optimizer)
            elif _keras_wanted(filepath, save_format):
                keras_zip.save_model(self, filepath, include_optimizer)
            else:
                model_file.save_model(self, filepath)

    def load_weights(self, filepath, by_name=False, skip_mismatch=False, options=None) -> None:
        """Weights saved by ``save_weights`` (ipu-teach's or real Keras' ``.h5``), or those of a Keras
        ``.keras`` file. Every array is checked against the model before any weight changes.

        Args:
          filepath: The file; its kind is read from its contents, not its name.
          by_name: HDF5 files only: load into the layers of the same name (the others are left alone),
            as Keras does, rather than by layer order.
          skip_mismatch: With ``by_name``: skip (with a warning) a layer whose weights differ in number or
            shape, rather than fail.
          options: Accepted for Keras compatibility.
        """
        if self.subclassed and not self.built:
            raise ValueError(
                "Unable to load weights into a subclassed Model which has not created its variables yet. "
                "Call the Model first, then load the weights."
            )
        self.ensure_built()
        filepath = os.fspath(filepath)
        if not os.path.exists(filepath):
            raise FileNotFoundError(f"load_weights: no such file {filepath!r}")
        kind = _format_of(filepath)
        if kind == "h5":
            hdf5_format.load_weights(self, filepath, by_name, skip_mismatch)
            return
        if by_name:
            raise NotImplementedError(
                "Weights may only be loaded based on topology into Models when loading TensorFlow-formatted "
                "weights (got by_name=True to load_weights)."
            )
        if kind == "keras":
            keras_zip.load_weights(self, filepath)
        else:
            saving.load_weights(self, filepath)

    def summary(self, line_length=None, positions=None, print_fn=None) -> None:
        """Prints a string summary of the network: each layer, its output shape and parameter count.

        Args:
          line_length: Total length of printed lines. Default: None, Keras' 65.
          positions: Relative or absolute positions of the log elements in each line. Default: None.
          print_fn: Print function to use, called with each line. Default: None, ``print``.

        Raises:
          ValueError: if the model has not been built yet.

        Example:

        >>> model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
        >>> model.summary()
        Model: "sequential"
        _________________________________________________________________
        Layer (type)                 Output Shape              Param #
        =================================================================
        dense (Dense)                (None, 2)                 8
        =================================================================
        Total params: 8
        Trainable params: 8
        Non-trainable params: 0
        _________________________________________________________________
        """
        self.ensure_built()
        summary_module.print_summary(self, line_length, positions, print_fn)

    def count_params(self) -> int:
        return int(sum(w.size for w in self.weights))

    def ensure_built(self):
        if not self.built and self.subclassed:
            raise ValueError(
                "This model has not yet been built. Build the model first by calling `build()` or by calling "
                "the model on a batch of data."
            )
        if not self.built:
            raise ValueError(
                f"Model '{self.name}' has not been built yet: call it on data, call fit, or give the "
                "first layer an input_shape (e.g. Dense(10, input_shape=(784,)))"
            )

    # ----- running -------------------------------------------------------------------------------
    def call(self, inputs, training=False):
        given = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        if len(given) != len(self.inputs):
            raise ValueError(f"Model '{self.name}' expects {len(self.inputs)} input(s), got {len(given)}")
        given = [
            value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=input_value_dtype(keras_input)))
            for value, keras_input in zip(given, self.inputs)
        ]
        with outermost_call(self._every_layer()):
            values = graph.run(self.inputs, given, self._order, lambda layer, x: layer(x, training=training))
        return self._outputs_of(values)

    def _every_layer(self) -> list:
        """This model's layers and those of the models among them."""
        return [self] + [
            inner for layer in self.layers for inner in (layer._every_layer() if isinstance(layer, Model) else [layer])
        ]

    @property
    def losses(self) -> list:
        """The regularization losses of every layer (weight penalties on the current weights, activity
        penalties of the latest call), as Keras' ``Model.losses``; ``fit`` and ``evaluate`` add their sum to
        the compiled loss, as Keras does.

        Example:

        >>> model = keras.Sequential([keras.layers.Dense(1, kernel_regularizer="l2", input_shape=(2,))])
        >>> len(model.losses)
        1
        """
        return super().losses + [loss for layer in self.layers for loss in layer.losses]

    def compute_output_shape(self, input_shape):
        """The output shape(s) for inputs of ``input_shape``: each layer's, through the graph (as Keras'
        functional models compute it), without running any layer."""
        if not self.built:
            self.build(input_shape)  # a Sequential learns its input shape, as Keras builds a layer first
        if self.subclassed and not self.traced:  # a call of tf ops: run on a zero sample, as a custom layer's
            return super().compute_output_shape(input_shape)
        given = [input_shape] if self._single_input else list(input_shape)
        shapes = graph.run(self.inputs, given, self._order, lambda layer, shape: layer.compute_output_shape(shape))
        return self._outputs_of(shapes)

    def _outputs_of(self, values):
        outputs = [values[id(t)] for t in self.outputs]
        return outputs[0] if self._single_output else outputs

    def __call__(self, inputs, training=None, **kwargs):
        if isinstance(inputs, KerasTensor) or (
            isinstance(inputs, (list, tuple)) and inputs and isinstance(inputs[0], KerasTensor)
        ):
            return super().__call__(inputs, training=training)
        if self.subclassed:
            return subclassed.call(self, inputs, training, kwargs, builds=type(self).build is not Model.build)
        self.build_from_data(inputs)
        return self.call(inputs, training=bool(call_context.training(training)))

    def build(self, input_shape=None) -> None:
        """Builds a subclassed model for inputs of ``input_shape`` (batch axis included, None or a size): its
        layers create their weights, and its call is traced for pipelining, as Graphcore's Keras does.

        Raises:
          ValueError: with no ``input_shape``, or one that is not a shape, a list or a dict of shapes.
        """
        if self.subclassed:
            subclassed.build(self, input_shape)

    def build_from_data(self, x) -> None:
        """Functional models are built at construction; Sequential and subclassed models on their first data."""
        if self.subclassed:
            subclassed.build_from_data(self, x)

    def check_input_data(self, x) -> None:
        """Keras' 'incompatible with the layer' error for data that does not fit the model's input."""
        self.build_from_data(x)
        if self.subclassed:  # its layers check what they are given, as in Keras
            return
        given = x if isinstance(x, (list, tuple)) else [x]
        for i, (symbolic, value) in enumerate(zip(self.inputs, given)):
            shape = np.shape(value)
            if not _fits(shape[1:], symbolic.shape[1:]):
                hint = ""
                if tuple(shape[1:]) + (1,) == tuple(symbolic.shape[1:]):
                    hint = " Add the missing channel axis with np.expand_dims(x, -1)."
                raise ValueError(
                    f'Input {i} of layer "{self.name}" is incompatible with the layer: expected '
                    f"shape={format_shape(symbolic.shape)}, found shape={format_shape(shape)}.{hint}"
                )

    # ----- compile and the steps -----------------------------------------------------------------
    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        metrics=None,
        loss_weights=None,
        weighted_metrics=None,
        run_eagerly=None,
        steps_per_execution=1,
        jit_compile=None,
        **kwargs,
    ):
        """Configures the model for training: optimizer, loss and metrics.

        A model created inside an ``IPUStrategy`` scope is attached to the simulated IPU when compiled,
        inside the scope or not (it keeps the strategy it was created under, as in Keras);
        ``steps_per_execution`` is then how many batches one execution of the IPU program runs, with the
        host overhead paid once per execution (the tutorial's first speed-up). With a ``mixed_float16``
        policy the optimizer is wrapped in a ``LossScaleOptimizer``, as in Keras.

        Args:
          optimizer: String (name of optimizer, ``"sgd"``, ``"adam"``, ``"rmsprop"``) or optimizer instance.
            Default: ``"rmsprop"``.
          loss: Loss function: a name such as ``"categorical_crossentropy"``, a callable, or a list / dict
            with one per output. Default: None.
          metrics: List of metrics to be evaluated during training and testing, e.g. ``["accuracy"]``.
            Default: None.
          loss_weights: Scalars weighting the loss of each output. Default: None.
          weighted_metrics: Metrics weighted by ``sample_weight`` (or ``class_weight``) in ``fit`` and
            ``evaluate``; ``metrics`` are not weighted. Default: None.
          run_eagerly: Accepted for Keras compatibility; the simulator always runs numpy eagerly.
          steps_per_execution: Integer, the number of batches to run during each execution (each
            ``tf.function`` call in Keras, each Poplar program run on the IPU). Default: 1.
          jit_compile: Accepted for Keras compatibility.

        Raises:
          ValueError: if ``steps_per_execution`` is not a positive integer, or a model with weights created
            outside a strategy's scope is compiled inside it.
          RuntimeError: in the scope of a strategy other than the one the model was created under.
          TypeError: for an unknown keyword argument.

        Example:

        >>> model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(3,))])
        >>> model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=4)
        >>> type(model.optimizer).__name__, model.steps_per_execution
        ('SGD', 4)
        """
        if kwargs:
            raise TypeError(f"compile() got unexpected keyword argument(s) {sorted(kwargs)}")
        if not isinstance(steps_per_execution, (int, np.integer)) or steps_per_execution < 1:
            raise ValueError(f"compile: steps_per_execution must be a positive integer, got {steps_per_execution!r}")
        strategy = device.strategy_for(self)
        self.optimizer = optimizers_module.get(optimizer)
        if self.compute_dtype == "float16" and not isinstance(self.optimizer, mixed_precision.LossScaleOptimizer):
            self.optimizer = mixed_precision.LossScaleOptimizer(self.optimizer)  # as Keras' compile does
        self.loss = losses_module.get(loss) if loss is not None and not isinstance(loss, (list, tuple, dict)) else loss
        self.compiled_outputs = CompiledOutputs(loss, loss_weights, metrics, weighted_metrics)
        self.steps_per_execution = int(steps_per_execution)
        self.compiled = True
        device.attach(self, strategy)

    def assert_compiled(self, what):
        if not self.compiled:
            raise RuntimeError(
                f"You must compile your model before {'training/testing' if what != 'predict' else what}. "
                f"Use `model.compile(optimizer, loss)`."
            )
        own_step = what != "predict" and step_overrides.overridden(self, "train" if what == "fit" else "test")
        if self.loss is None and what in ("fit", "evaluate") and not own_step:
            raise ValueError(f"{what}: the model was compiled without a loss; pass loss=... to compile()")

    @property
    def output_names(self) -> list:
        """The outputs' names (a subclassed model's are ``output_1``, ``output_2``, ... as Keras names them)."""
        if self.subclassed:
            return [f"output_{i + 1}" for i in range(self._output_count)] if self.built else []
        return [t.layer.name for t in self.outputs] if self.built else []

    @property
    def metrics(self) -> list:
        return self.compiled_outputs.resolve(self).metrics if self.compiled else []

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def metric_logs(self) -> dict:
        return {m.name: m.result() for m in self.metrics}

    def labels_in_output_order(self, y):
        """Labels given as a dict keyed by output name, as the list of outputs expects them."""
        if not isinstance(y, dict):
            return y
        unknown = sorted(set(y) - set(self.output_names))
        if unknown or len(y) != len(self.outputs):
            raise ValueError(f"The labels dict has keys {sorted(y)} but the model's outputs are {self.output_names}")
        return [y[name] for name in self.output_names]

    def check_labels(self, y) -> None:
        shapes = self.output_shape if not self._single_output else [self.output_shape]
        self.compiled_outputs.resolve(self).check_labels(sample_weights.unpack(y)[0], shapes)

    def loss_and_parts(self, y, output):
        """The scalar Tensor to minimise (the compiled losses plus ``self.losses``, the regularization
        penalties, as Keras' ``compute_loss``) and each output's loss (without them, as Keras reports it)."""
        loss, parts = self.compiled_outputs.resolve(self).loss(y, output)
        for penalty in self.losses:
            loss = ops.add(loss, penalty)
        return loss, parts

    @property
    def compiled_loss(self):
        """Keras' container of compile's losses, for a ``train_step`` of one's own: ``self.compiled_loss(y,
        y_pred)`` is the loss tensor, also added to the ``loss`` metric. None before compile."""
        return step_overrides.CompiledLoss(self) if self.compiled else None

    @property
    def compiled_metrics(self):
        """Keras' container of compile's metrics: ``self.compiled_metrics.update_state(y, y_pred)``.
        None before compile."""
        return step_overrides.CompiledMetrics(self) if self.compiled else None

    def compute_gradients(self, x, y):
        """Loss and gradients of one batch (no weight update): what a replica computes on the IPU."""
        output = self(x, training=True)
        loss, parts = self.loss_and_parts(y, output)
        scale = getattr(self.optimizer, "loss_scale", None)  # a LossScaleOptimizer's: d(scale * loss)
        loss.backward(None if scale is None else np.full(loss.shape, scale, loss.dtype))
        grads = []
        for w in self.trainable_weights:
            grads.append(w.grad if w.grad is not None else np.zeros_like(w.data))
            w.grad = None
        if scale is not None:
            grads = self.optimizer.get_unscaled_gradients(grads)
        captured = ipu_layers.captured_gradients(self)
        if captured:
            self._captured_gradients.append(captured)
        return _loss_value(loss, parts), grads, _values(output)

    def apply_gradients(self, grads) -> None:
        """The optimizer's update; one that ``supports_captured_grads`` (Graphcore's ``ALSOptimizer``) also gets the
        gradients ``keras.ipu.layers`` capture layers kept, as ``captured_grads``."""
        captured, self._captured_gradients = self._captured_gradients, []
        if not getattr(self.optimizer, "supports_captured_grads", False):
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            return
        if len(captured) > 1:
            raise NotSimulatedError(
                "keras.ipu.layers capture layers with replication or gradient accumulation (ipu-teach passes the "
                "captured gradients of one batch to the optimizer: use one replica and no gradient accumulation)"
            )
        self.optimizer.apply_gradients(
            zip(grads, self.trainable_weights), captured_grads=captured[0] if captured else {}
        )

    def update_metrics(self, loss_value, y, y_pred) -> None:
        self.compiled_outputs.update(loss_value, y, y_pred)

    def train_batch(self, x, y) -> float:
        """The built-in training step on one batch (the engine's; Keras' ``train_step`` runs it)."""
        # the forward's moving statistics are written with the weights' update: all or nothing
        loss_value, y_pred = atomic_step.run(self._update_from, x, y)
        self.update_metrics(loss_value, y, y_pred)
        return loss_value

    def _update_from(self, x, y):
        loss_value, grads, y_pred = self.compute_gradients(x, y)
        self.apply_gradients(grads)
        return loss_value, y_pred

    def test_batch(self, x, y) -> float:
        """Runs with the graph recorded (never differentiated) so that, as in Keras, a cross-entropy
        finds the logits under a softmax output in evaluation too, not only in training."""
        output = self(x, training=False)
        loss, parts = self.loss_and_parts(y, output)
        loss_value = _loss_value(loss, parts)
        self.update_metrics(loss_value, y, _values(output))
        return loss_value

    def predict_batch(self, x, y=None):
        with no_grad():
            out = self(x, training=False)
        return _values(out)

    # Keras' steps, as a class of one's own overrides them (Keras 2's semantics: engine/step_overrides.py)
    def train_step(self, data) -> dict:
        """One training step on a batch ``data`` (``(x, y)`` or ``(x, y, sample_weight)``); returns the logs.

        ``fit`` runs it on every batch. Override it to train differently (e.g. with a ``tf.GradientTape``,
        ``self.compiled_loss``, ``self.optimizer.apply_gradients`` and ``self.compiled_metrics``), returning
        ``{m.name: m.result() for m in self.metrics}``, as in Keras.
        """
        x, y, sample_weight = step_overrides.unpack_x_y_sample_weight(data)
        self.train_batch(x, y if sample_weight is None else sample_weights.Weighted(y, sample_weight))
        return self.metric_logs()

    def test_step(self, data) -> dict:
        """One evaluation step on a batch ``data``; returns the logs. ``evaluate`` runs it on every batch."""
        x, y, sample_weight = step_overrides.unpack_x_y_sample_weight(data)
        self.test_batch(x, y if sample_weight is None else sample_weights.Weighted(y, sample_weight))
        return self.metric_logs()

    def predict_step(self, data):
        """The predictions for a batch ``data`` (``(x,)`` or ``x``). ``predict`` runs it on every batch."""
        x, _, _ = step_overrides.unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def executor(self):
        return self.device_executor or training.CPUExecutor()

    # ----- Keras' public loops -------------------------------------------------------------------
    # Keras' loops, one function each in engine/training.py with Keras' signatures and docstrings.
    fit = training.fit
    evaluate = training.evaluate
    predict = training.predict

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True, return_dict=False):
        return on_batch.run(self, "train", x, y, sample_weight, class_weight, reset_metrics, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
        return on_batch.run(self, "test", x, y, sample_weight, None, reset_metrics, return_dict)

    def predict_on_batch(self, x):
        return on_batch.run(self, "predict", x)


class Sequential(Model):
    """``Sequential`` groups a linear stack of layers into a ``Model``, each layer feeding the next.

    It is built as soon as the input shape is known: from ``input_shape=`` on the first layer, from an
    ``InputLayer`` / ``keras.Input``, or from the first data it is called on or fitted to. Its layers can
    be given pipeline stages with ``set_pipeline_stage_assignment``, one per layer, as Graphcore's Keras does.

    Args:
      layers: Optional list of layers to add to the model. Default: None.
      name: Optional name for the model. Default: None, ``sequential``, ``sequential_1``, ...

    Example:

    >>> model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(16,)),
    ...                           keras.layers.Dense(4)])
    >>> model.output_shape, len(model.layers)
    ((None, 4), 2)
    """

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._pending: list = []
        self.built = False
        for layer in layers or []:
            self.add(layer)

    @classmethod
    def _default_name(cls):
        return "sequential"

    def add(self, layer) -> None:
        if isinstance(layer, KerasTensor) and isinstance(layer.layer, InputLayer):
            self._input_tensor = layer
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add expects a keras layer, got {type(layer).__name__}")
        if self.built:
            self._append(layer)
            return
        self._pending.append(layer)
        start = getattr(self, "_input_tensor", None)
        if start is None and self._pending[0]._declared_input_shape is not None:
            start = Input(self._pending[0]._declared_input_shape)
            self._input_tensor = start
        if start is not None:
            self._build_from(start)

    def _append(self, layer) -> None:
        """Keras' ``add`` on a built model: only the new layer is called, on the last output's shape, and
        the chain grows by one (no earlier layer runs again)."""
        output = _single_output(layer(self.outputs[0]))
        self._order.append(output)
        if layer not in self._layers:  # a layer added twice shares its weights and is listed once
            self._layers.append(layer)
        self.outputs, self.output_shape = [output], output.shape

    def pop(self) -> None:
        if not self.layers:
            raise TypeError("There are no layers in the model.")
        if not self.built:
            self._pending.pop()
        elif len(self._order) > 2:
            self._init_graph(self._input_tensor, self._order[-2])
        else:
            self._pending, self.built = [], False

    def _build_from(self, start):
        x = start
        for layer in self._pending:
            x = _single_output(layer(x))
        self._init_graph(start, x)

    def build_from_data(self, x) -> None:
        if not self.built:
            if not self._pending:
                raise ValueError(f"Sequential model '{self.name}' has no layers; add some with .add(...)")
            self._input_tensor = Input(np.shape(x)[1:])
            self._build_from(self._input_tensor)

    def build(self, input_shape=None) -> None:
        if input_shape is not None and not self.built:
            self._input_tensor = Input(tuple(input_shape)[1:])
            self._build_from(self._input_tensor)

    @property
    def layers(self) -> list:
        if not self.built:
            return list(self._pending)
        return [layer for layer in self._layers if not isinstance(layer, InputLayer)]

    def is_sequential_like(self) -> bool:
        return True

    def get_config(self) -> dict:
        """Keras' configuration of a Sequential model: its name and its layers, in order (the input
        layer first once the model is built); ``Sequential.from_config`` makes it again."""
        return model_config.sequential_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return model_config.sequential_from_config(cls, config, custom_objects)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True, **kwargs):
    """A model written by ``model.save``: ipu-teach's, or real Keras' ``.h5`` or ``.keras`` file; ready to
    predict, and (when it was compiled) to train on. No code is ever run from the file (a Lambda layer
    is refused whatever ``safe_mode`` says)."""
    kind = _format_of(filepath) if os.path.exists(filepath) else None
    if kind == "h5":
        return hdf5_format.load_model(filepath, custom_objects, compile)
    if kind == "keras":
        return keras_zip.load_model(filepath, custom_objects, compile)
    return model_file.load_model(filepath, custom_objects, compile)


def _format_of(filepath) -> str:
    """The reader a file needs, from its contents: "h5" (HDF5), "keras" (Keras' ``.keras`` zip) or "ipu-teach"
    (its own zip or ``.npz``, also under a ``.h5`` name, as ipu-teach wrote before it wrote HDF5). A file that
    is neither HDF5 nor a zip goes by its name, so a ``.h5`` one is told it is not HDF5."""
    if hdf5_format.is_hdf5(filepath):
        return "h5"
    entries = keras_zip.zip_entries(filepath)
    if entries is not None:
        return "keras" if keras_zip.WEIGHTS in entries else "ipu-teach"
    return "h5" if hdf5_format.is_hdf5_name(filepath) else "ipu-teach"


def _hdf5_wanted(filepath, save_format) -> bool:
    """Keras' choice of format: ``save_format`` "h5" / "hdf5", or a name ending ``.h5`` / ``.hdf5``."""
    if save_format is not None:
        return str(save_format).lower() in ("h5", "hdf5")
    return hdf5_format.is_hdf5_name(filepath)


def _keras_wanted(filepath, save_format) -> bool:
    """Keras' choice of its ``.keras`` format: ``save_format="keras"``, or a name ending ``.keras``."""
    if save_format is not None:
        return str(save_format).lower() == "keras"
    return os.fspath(filepath).endswith(".keras")


def save_model(model, filepath, overwrite=True, save_format=None, **kwargs):
    """``model.save(filepath, overwrite=...)``, as Keras' function is."""
    model.save(filepath, overwrite=overwrite, save_format=save_format, **kwargs)


def _single_output(output):
    """A Sequential model's layer output, refused when the layer has several (LSTM's with its states)."""
    if isinstance(output, list):
        raise ValueError(
            "All layers in a Sequential model should have a single output tensor. For multi-output layers, "
            "use the functional API."
        )
    return output
