"""Layer: weights plus a call, usable eagerly on arrays or symbolically on ``KerasTensor``s.

Calling a layer on a ``KerasTensor`` (the result of ``keras.Input``) builds the layer, checks the
input, and returns a new ``KerasTensor`` remembering where it came from: that history is the
functional model's graph. Its shape comes from the layer's ``compute_output_shape``: no data is made
or run, so building costs the same whatever the shapes, as in Keras.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math

import numpy as np

from ...autograd import Tensor, no_grad, ops, precision, unrecorded
from ...autograd.symbolic import ShapedArray
from .. import backend, initializers, regularizers
from ..engine import call_context, config, shape_only_weights, weight_budget
from ..ipu.pipeline_stage import current_stage
from ..mixed_precision import policy as dtype_policies


def format_shape(shape) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def same_shape(layer, input_shape) -> tuple:
    """``compute_output_shape`` of the layers whose output has their input's shape (activations,
    normalisations, dropout), as Keras' own return ``input_shape``."""
    return tuple(input_shape)


def known_size(dims):
    """The number of values in ``dims``, or None if one of them is unknown (None)."""
    return None if any(d is None for d in dims) else math.prod(dims)


_ADD_WEIGHT_OPTIONS = frozenset(
    {
        "use_resource",
        "synchronization",
        "aggregation",
        "partitioner",
        "autocast",
        "collections",
        "experimental_autocast",
        "caching_device",
        "getter",
        "layout",
        "experimental_enable_variable_lifting",
    }
)
"""``add_weight``'s keywords beyond its named arguments that Keras accepts (tf-keras 2.x base_layer.py)."""


_running = [0]
"""How many layer or model calls are running: the outermost one starts its layers' activity losses afresh."""
_forward_passes = [0]
"""How many outermost calls have begun: the number of the one running identifies its forward pass."""


def forward_pass_number():
    """The number of the forward pass running (the outermost layer or model call), None outside any call: what
    TensorFlow traces as one graph (an outfeed's ``enqueued``, an RNN outlined within one pass)."""
    return _forward_passes[0] if _running[0] else None


@contextlib.contextmanager
def outermost_call(layers):
    """Runs a layer or model call; the outermost one clears the activity losses of ``layers`` first, so
    ``losses`` holds those of the latest call (Keras' eager layers do the same)."""
    if not _running[0]:
        _forward_passes[0] += 1
        for layer in layers:
            layer._activity_losses = []
    _running[0] += 1
    try:
        yield
    finally:
        _running[0] -= 1


@functools.cache
def _takes_mask(cls) -> bool:
    """Whether ``cls.call`` has a ``mask`` argument (Keras passes the input's mask to those)."""
    return "mask" in inspect.signature(cls.call).parameters


class KerasTensor:
    """A symbolic tensor: a shape with ``None`` for the batch, and the layer call that made it."""

    def __init__(self, shape, layer, inputs):
        self.shape = tuple(shape)
        self.layer = layer
        self.inputs = list(inputs)
        self.dtype = "float32"
        self.index = 0
        """Which output of its layer's call this is (LSTM(return_state=True) has three)."""
        self.siblings = None
        """All the outputs of that call, for a layer with several; None for one output."""

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={format_shape(self.shape)} created by layer '{self.layer.name}'>"


class Layer:
    """Base class. Subclasses set ``min_ndim`` / ``ndim`` and write ``build`` and ``call``."""

    min_ndim = None
    ndim = None
    multi_input = False
    """True for layers called on a list of tensors (the merge layers); a layer class of the user's own
    becomes one for the instance first called on a list, as Keras' layers take any structure."""
    is_model = False
    takes_lists = False
    """True for a built-in layer that takes a list as well as a tensor (Lambda)."""

    def __setattr__(self, name, value):
        """Keras' tracking: a layer (or a list, tuple or dict of them) kept in an attribute is a sublayer."""
        tracked = self.__dict__.setdefault("_tracked", {})
        empty = isinstance(value, (list, tuple, dict)) and not value
        if value is not self and call_context.holds_layers(value, Layer) and not (empty and name.startswith("_")):
            tracked[name] = value  # an empty public list or dict may be filled with layers later
        else:
            tracked.pop(name, None)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self.__dict__.get("_tracked", {}).pop(name, None)
        object.__delattr__(self, name)

    def _sublayers(self) -> list:
        """The layers this layer holds in its attributes, each once, in the order they were assigned."""
        tracked = self.__dict__.get("_tracked")
        return call_context.layers_in(tracked.values(), Layer, self) if tracked else []

    def _flatten_layers(self):
        """This layer and every layer inside it, depth first (as Keras' ``_flatten_layers``)."""
        yield self
        for layer in self._sublayers():
            yield from layer._flatten_layers()

    supports_masking = False
    """True for layers that pass a mask on (or make one): Keras' ``supports_masking``. A layer without it
    drops the mask of its input, as Keras' layers do."""

    @config.recording_arguments
    def __init__(
        self,
        name=None,
        trainable=True,
        input_shape=None,
        batch_input_shape=None,
        dtype=None,
        activity_regularizer=None,
        **kwargs,
    ):
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) {sorted(kwargs)}")
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self._regularized: list = []  # (weight, regularizer) pairs
        self._activity_losses: list = []
        self.name = name or backend.unique_name(backend.snake_case(type(self).__name__))
        self._trainable = bool(trainable)
        self.built = False
        self._weights: list[Tensor] = []
        self._trainable_flags: list[bool] = []
        if batch_input_shape is not None:
            input_shape = tuple(batch_input_shape)[1:]
        self._declared_input_shape = tuple(input_shape) if input_shape is not None else None
        self.input_shape = None
        self.output_shape = None
        self.pipeline_stage = current_stage()  # a layer made inside PipelineStage(n) belongs to stage n
        self._dtype_policy = dtype_policies.for_layer(dtype)

    # ----- precision -----------------------------------------------------------------------------
    dtype_policy = property(lambda self: self._dtype_policy)
    compute_dtype = property(
        lambda self: self._dtype_policy.compute_dtype,
        doc="""The dtype of the layer's computations.

    The dtype policy's compute dtype: ``"float16"`` under ``mixed_float16``, while the weights stay in
    ``variable_dtype`` (``"float32"``) and are cast for each use, as Keras' mixed precision does. On the
    IPU the AMP does 4 times the FLOPs per cycle in fp16, and activations take half the bytes.

    Example:

    >>> keras.layers.Dense(2).compute_dtype
    'float32'
    >>> keras.layers.Dense(2, dtype="mixed_float16").compute_dtype
    'float16'
    """,
    )
    variable_dtype = property(lambda self: self._dtype_policy.variable_dtype)
    dtype = variable_dtype  # Keras: a layer's dtype is its variables'

    # ----- weights -------------------------------------------------------------------------------
    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value) -> None:
        """A frozen layer's weights take no gradient at all (none is kept to be applied on unfreezing);
        as in Keras, its sublayers are frozen (or unfrozen) with it."""
        self._trainable = bool(value)
        for weight, flag in zip(self._weights, self._trainable_flags):
            weight.requires_grad = self._trainable and flag
            weight.grad = None
        for layer in self._sublayers():
            layer.trainable = value

    def add_weight(
        self,
        name=None,
        shape=None,
        dtype=None,
        initializer=None,
        regularizer=None,
        trainable=None,
        constraint=None,
        **kwargs,
    ) -> Tensor:
        """Adds a new weight to the layer and returns it, with Keras' arguments in Keras' order.

        Layers call it from ``build``; the weight is named ``"<layer>/<name>:0"`` as in TensorFlow, which
        is also the name reports show for it on the simulated IPU. As in Keras (base_layer.py
        ``add_weight``), a float weight starts from ``"glorot_uniform"`` and an integer or boolean one from
        zeros unless told otherwise, and a weight without a name is called ``Variable``.

        Args:
          name: String, the weight's name within the layer. Default: None, ``"Variable"``.
          shape: Tuple of ints, the weight's shape. Default: None, a scalar.
          dtype: The weight's dtype. Default: None, the layer's ``variable_dtype``.
          initializer: An initializer name (``"zeros"``, ``"ones"``, ``"glorot_uniform"``, ...) or object.
            Default: None, ``"glorot_uniform"`` for floats, ``"zeros"`` for integers and booleans.
          regularizer: A ``keras.regularizers`` penalty (or its name) on this weight, in ``losses``. Default: None.
          constraint: Not simulated yet: anything but None is refused (rather than ignored).
          trainable: Boolean, whether the weight takes gradients (if the layer is trainable). Default: None, True.
          **kwargs: Keras' distribution and variable options (``use_resource``, ``synchronization``,
            ``aggregation``, ``caching_device``, ...), accepted and meaningless on one simulated device.

        Returns:
          The weight, a Tensor.

        Raises:
          ValueError: with no initializer for a weight that is neither a number nor a boolean, or a constraint.
          TypeError: for a keyword Keras does not know, as Keras.

        Example:

        >>> w = keras.layers.Dense(1).add_weight("w", (2,), initializer="ones")
        >>> w.name, w.shape, w.data
        ('dense/w:0', (2,), array([1., 1.], dtype=float32))
        >>> keras.layers.Dense(1, name="d").add_weight(shape=(2, 3)).name
        'd/Variable:0'
        """
        unknown = sorted(set(kwargs) - _ADD_WEIGHT_OPTIONS)
        if unknown:
            raise TypeError("Unknown keyword argument:", unknown[0])
        if constraint is not None:
            raise ValueError(
                f"Layer {self.name!r}: add_weight(constraint=...) is not simulated by ipu-teach yet, and ignoring it "
                "would train a different model; remove constraint="
            )
        regularizer = regularizers.get(regularizer)
        trainable = True if trainable is None else trainable
        try:
            dtype = np.dtype(dtype or self.variable_dtype)
        except TypeError:
            raise TypeError(
                f"Layer {self.name!r}: add_weight's dtype {dtype!r} is not a dtype; as in Keras the third positional "
                f"argument is the dtype: to start the weight from {dtype!r}, pass initializer={dtype!r}"
            ) from None
        name = "Variable" if name is None else name
        if initializer is None:
            if dtype.kind not in "fiub":
                raise ValueError(
                    f"An initializer for variable {name} of type {dtype} is required for layer {self.name}: "
                    "pass initializer=..."
                )
            initializer = "glorot_uniform" if dtype.kind == "f" else "zeros"
        shape = () if shape is None else tuple(shape)
        if any(d is None for d in shape):
            raise ValueError(
                f'Layer "{self.name}": its weight {name!r} would have shape {format_shape(shape)}, a size taken '
                "from an axis of the input that is unknown (None); give that axis a size in keras.Input(shape=...), "
                "as Keras requires (e.g. the last axis of a Dense layer's input)"
            )
        weight_budget.spend(f"{self.name}/{name}:0", shape)  # before allocating: a file may declare any size
        if shape_only_weights.active():  # sizing a model: a shape and a dtype, no values
            value = ShapedArray(shape, dtype)
        else:
            value = np.asarray(initializers.get(initializer)(shape, dtype=dtype), dtype=dtype)
        weight = Tensor(value, requires_grad=trainable and self.trainable, name=f"{self.name}/{name}:0")
        self._weights.append(weight)
        self._trainable_flags.append(trainable)
        if regularizer is not None:
            self._regularized.append((weight, regularizer))
        return weight

    @property
    def losses(self) -> list:
        """The penalties of this layer's regularizers, as scalar Tensors, in Keras' order (``Layer.losses``):
        the activity regularizer's on the outputs of the latest call (divided by the batch size), then each
        weight regularizer's on the current weights.

        Example:

        >>> layer = keras.layers.Dense(2, kernel_initializer="ones", kernel_regularizer=keras.regularizers.l2(0.1))
        >>> _ = layer(np.ones((1, 3), np.float32))
        >>> [float(loss.data) for loss in layer.losses]
        [0.6000000238418579]
        """
        return list(self._activity_losses) + [regularizer(weight) for weight, regularizer in self._regularized]

    @property
    def weights(self) -> list:
        """As in Keras: the trainable weights, then the others; a layer's own before its sublayers'."""
        return self.trainable_weights + self.non_trainable_weights

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        own = [w for w, t in zip(self._weights, self._trainable_flags) if t]
        return call_context.distinct(own + [w for layer in self._sublayers() for w in layer.trainable_weights])

    @property
    def non_trainable_weights(self) -> list:
        own = [w for w, t in zip(self._weights, self._trainable_flags) if not t or not self.trainable]
        inner = [w for layer in self._sublayers() for w in layer.non_trainable_weights]
        trainable = {id(w) for w in self.trainable_weights}
        return call_context.distinct(w for w in own + inner if id(w) not in trainable)

    # TensorFlow's names for the same lists, as custom training loops use them
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def count_params(self) -> int:
        return int(sum(w.size for w in self.weights))

    def get_weights(self) -> list:
        return [w.data.copy() for w in self.weights]

    def set_weights(self, weights) -> None:
        weights, mine = list(weights), self.weights
        if len(weights) != len(mine):
            raise ValueError(f"Layer '{self.name}' expects {len(mine)} weights, but was given {len(weights)}")
        for w, value in zip(mine, weights):
            value = np.asarray(value)
            if value.shape != w.shape:
                raise ValueError(
                    f"Layer '{self.name}': weight {w.name} has shape {w.shape}, "
                    f"but the value given has shape {value.shape}"
                )
        for w, value in zip(mine, weights):
            w.data = np.array(value, dtype=w.dtype)

    # ----- building and calling ------------------------------------------------------------------
    def build(self, input_shape) -> None:
        """Create the weights for inputs of ``input_shape`` (batch axis included, as None)."""

    def call(self, inputs, training=False):
        raise NotImplementedError

    def check_input(self, shape, index=0) -> None:
        """Raise Keras' 'incompatible with the layer' error naming this layer, expected and found."""
        shape = tuple(shape)
        found = f"Full shape received: {format_shape(shape)}"
        if self.ndim is not None and len(shape) != self.ndim:
            raise ValueError(
                f'Input {index} of layer "{self.name}" is incompatible with the layer: '
                f"expected ndim={self.ndim}, found ndim={len(shape)}. {found}"
            )
        if self.min_ndim is not None and len(shape) < self.min_ndim:
            raise ValueError(
                f'Input {index} of layer "{self.name}" is incompatible with the layer: '
                f"expected min_ndim={self.min_ndim}, found ndim={len(shape)}. {found}"
            )
        if self.built and self.input_shape is not None and len(shape) == len(self.input_shape):
            for axis, (want, got) in enumerate(zip(self.input_shape, shape)):
                if axis and want is not None and got is not None and want != got:
                    raise ValueError(
                        f'Input {index} of layer "{self.name}" is incompatible with the layer: '
                        f"expected axis {axis} of input shape to have value {want}, "
                        f"but received input with shape {format_shape(shape)}"
                    )

    def _ensure_built(self, shape) -> None:
        """``shape`` is one shape, or a list of them for a multi-input layer."""
        if not self.multi_input:
            self.check_input(shape)
        if not self.built:
            self.build([tuple(s) for s in shape] if self.multi_input else tuple(shape))
            self.input_shape = (
                [(None,) + tuple(s[1:]) for s in shape] if self.multi_input else (None,) + tuple(shape[1:])
            )
            self.built = True

    def _check_arity(self, inputs) -> None:
        if self.multi_input and not isinstance(inputs, (list, tuple)):
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) should be called on a list of inputs. "
                f"Received: inputs={inputs}"
            )
        if not self.multi_input and isinstance(inputs, (list, tuple)):
            raise TypeError(f"Layer '{self.name}' takes one input, got a list of {len(inputs)}")

    def __call__(self, inputs, training=None, **kwargs):
        if isinstance(inputs, KerasTensor) or (
            isinstance(inputs, (list, tuple)) and inputs and isinstance(inputs[0], KerasTensor)
        ):
            return self._call_symbolic(inputs, current_stage())
        self._take_lists(inputs)
        if self.multi_input and isinstance(inputs, (list, tuple)):
            tensor = [t if isinstance(t, Tensor) else Tensor(np.asarray(t, dtype=np.float32)) for t in inputs]
            self._ensure_built([t.shape for t in tensor])
        else:
            self._check_arity(inputs)
            tensor = inputs if isinstance(inputs, Tensor) else Tensor(np.asarray(inputs, dtype=np.float32))
            self._ensure_built(tensor.shape)
        mask = [t._keras_mask for t in tensor] if self.multi_input else tensor._keras_mask
        if _takes_mask(type(self)) and "mask" not in kwargs:
            kwargs["mask"] = mask
        with outermost_call([self]), precision.autocast(self.compute_dtype):
            output = call_context.invoke(self, tensor, training, kwargs)
            if self.supports_masking:
                # of several outputs (an RNN's with its states) the first carries the mask, as Keras'
                (output[0] if isinstance(output, list) else output)._keras_mask = self.compute_mask(tensor, mask)
            if self.activity_regularizer is not None:
                batch = np.asarray(output.shape[0], output.dtype)
                self._activity_losses.append(ops.div(self.activity_regularizer(output), batch))
            return output

    def compute_mask(self, inputs, mask=None):
        """The mask of this layer's output, from its input's (Keras' ``Layer.compute_mask``): the input's mask
        for a layer that supports masking, none for one that does not (an error if it is given one).

        Example:

        >>> keras.layers.Dense(2).compute_mask(None, np.array([[True, False]])).tolist()
        [[True, False]]
        """
        if not self.supports_masking:
            if mask is not None and any(m is not None for m in (mask if isinstance(mask, list) else [mask])):
                raise TypeError(f"Layer {self.name} does not support masking, but was passed an input_mask: {mask}")
            return None
        return mask

    def _take_lists(self, inputs) -> None:
        """A layer class of the user's own (or a Lambda) takes a list as Keras' layers do: as a merge layer."""
        user_class = not type(self).__module__.startswith("ipu_teach.")
        if isinstance(inputs, (list, tuple)) and (user_class or self.takes_lists):
            self.multi_input = True

    def _call_symbolic(self, inputs, stage):
        """Builds the layer and computes its output shape from the input shapes alone: no data is made
        or run, whatever the shapes (as Keras' functional API builds from shapes). ``stage`` is the
        PipelineStage open at call time; it wins over the one at construction."""
        self._take_lists(inputs)
        self._check_arity(inputs)
        given = list(inputs) if self.multi_input else [inputs]
        shape = [t.shape for t in given] if self.multi_input else inputs.shape
        self._ensure_built(shape)
        shapes = self.compute_output_shape(shape)
        several = isinstance(shapes, list)  # a layer with several outputs states a list of shapes
        shapes = [tuple(s) for s in shapes] if several else [tuple(shapes)]
        self.output_shape = shapes if several else shapes[0]
        outputs = [KerasTensor(s, self, given) for s in shapes]
        for index, out in enumerate(outputs):
            out.index, out.siblings = index, outputs if several else None
            out.pipeline_stage = stage if stage is not None else self.pipeline_stage
        return outputs if several else outputs[0]

    def compute_output_shape(self, input_shape):
        """The output shape for inputs of ``input_shape`` (batch axis included; a list of shapes for a
        multi-input layer), from the shapes alone.

        Every built-in layer states its own, as Keras' layers do. This default is for a custom layer that
        does not: it runs ``call`` once on one zero sample, where Keras traces ``call`` on placeholders
        (tf-keras ``Layer.compute_output_shape``); a custom layer given large inputs should override it.

        Example:

        >>> keras.layers.Dense(4).compute_output_shape((None, 60000, 60000))
        (None, 60000, 4)
        """
        self._ensure_built(input_shape)  # as Keras' default builds the layer first
        shapes = input_shape if self.multi_input else [input_shape]
        probes = [Tensor(np.zeros((1,) + tuple(s[1:]), dtype=np.float32)) for s in shapes]
        with no_grad(), unrecorded(), call_context.traced(f"{self.name}_scratch_graph"):
            probe = call_context.invoke(self, probes if self.multi_input else probes[0], False, {})
        return (shapes[0][0],) + tuple(probe.shape[1:])

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = config.recording_arguments(cls.__init__)

    def get_config(self) -> dict:
        """The arguments this layer was made with (as Keras' ``get_config``): ``from_config`` remakes it."""
        return {**config.encode(getattr(self, "_init_arguments", {})), "name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, layer_config):
        return cls(**config.decode(layer_config))

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class InputLayer(Layer):
    """The graph's entry point; it has no weights and passes its input through."""

    def __init__(self, shape, name=None, input_dtype="float32"):
        super().__init__(name=name or backend.numbered_name("input"))
        self.input_shape = self.output_shape = (None,) + tuple(shape)
        self.input_dtype = input_dtype
        """The dtype the input was declared with (``keras.Input(dtype=...)``), saved with the model."""
        self.built = True

    def call(self, inputs, training=False):
        return inputs


def Input(shape=None, batch_size=None, name=None, dtype=None, batch_shape=None):
    """``keras.Input()`` is used to instantiate a symbolic Keras tensor, the entry point of a model.

    The shape is per sample: the batch axis is implied (``None``), as the batch size is chosen by ``fit``.
    Layers called on it return symbolic tensors; ``keras.Model(inputs, outputs)`` then builds the model.

    Args:
      shape: A shape tuple (integers or None), not including the batch size.
      batch_size: Optional static batch size (accepted for Keras compatibility; the batch stays ``None``).
      name: Optional name for the input layer. Default: None, ``input_<n>``.
      dtype: The data type expected by the input. An integer or boolean one (``"int32"`` ids, ``"uint8"``
        pixels) is the dtype the model's input holds and the host streams (8-bit images take a quarter of
        fp32's bytes); the layer reading it casts it (``Rescaling``, as Keras'). Other inputs are held in
        float32, each layer casting them to its compute dtype. Default: None (float32).
      batch_shape: A shape tuple including the batch size, instead of ``shape``.

    Returns:
      A symbolic tensor (``KerasTensor``).

    Raises:
      ValueError: with no shape, a dimension that is not a positive integer, or an unknown dtype.

    Example:

    >>> x = keras.Input(shape=(28, 28, 1))
    >>> x.shape
    (None, 28, 28, 1)
    >>> keras.layers.Flatten()(x).shape
    (None, 784)
    """
    if batch_shape is not None:
        shape = tuple(batch_shape)[1:]
    if shape is None:
        raise ValueError("keras.Input needs a shape, e.g. keras.Input(shape=(28, 28, 1))")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d is not None and (not isinstance(d, (int, np.integer)) or d <= 0) for d in shape):
        raise ValueError(f"keras.Input: every dimension of shape must be a positive integer, got {shape}")
    try:  # a tf.DType, numpy's dtype or a name
        declared = np.dtype(getattr(dtype, "name", dtype) or "float32").name
    except TypeError:
        raise ValueError(
            f"keras.Input: dtype must be a dtype such as 'float32', 'int32' or 'uint8', got {dtype!r}"
        ) from None
    layer = InputLayer(shape, name, declared)
    tensor = KerasTensor(layer.output_shape, layer, [])
    tensor.dtype = layer.input_dtype
    tensor.pipeline_stage = None
    return tensor


def input_value_dtype(keras_input) -> np.dtype:
    """The dtype a model's input value is held in: an integer or boolean ``Input``'s own (ids, 8-bit pixels), else
    float32 (each layer casts it to its compute dtype)."""
    dtype = np.dtype(keras_input.dtype)
    return dtype if dtype.kind in "biu" else np.dtype(np.float32)
