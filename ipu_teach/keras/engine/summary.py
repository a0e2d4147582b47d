"""``model.summary()`` in the TensorFlow 2.x layout the Graphcore tutorial prints."""

from ..layers.base import InputLayer, format_shape


def print_row(fields, positions, print_fn):
    """Keras' fixed-width row: each field cut to its column, one space kept between columns."""
    line = ""
    for i, field in enumerate(fields):
        if i > 0:
            line = line[:-1] + " "
        line += str(field)
        line = line[: positions[i]]
        line += " " * (positions[i] - len(line))
    print_fn(line)


def _output_shape(model, layer) -> str:
    """A subclassed model's layers show "multiple", as in Keras (its call may use a layer several times); a
    layer with several outputs shows each, as Keras prints them."""
    shape = layer.output_shape
    if shape is None or model.subclassed:
        return "multiple"
    if isinstance(shape, list):
        return "[" + ", ".join(format_shape(s) for s in shape) + "]"
    shape = format_shape(shape)
    return f"[{shape}]" if isinstance(layer, InputLayer) else shape


def print_summary(model, line_length=None, positions=None, print_fn=None):
    print_fn = print_fn or print
    sequential_like = model.is_sequential_like()
    if sequential_like:
        line_length = line_length or 65
        positions = positions or [0.45, 0.85, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #"]
    else:
        line_length = line_length or 98
        positions = positions or [0.33, 0.55, 0.67, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    print_row(header, positions, print_fn)
    print_fn("=" * line_length)
    layers = model.layers
    for i, layer in enumerate(layers):
        fields = [f"{layer.name} ({type(layer).__name__})", _output_shape(model, layer), layer.count_params()]
        if not sequential_like:
            sources = model.inbound_layers(layer)
            fields.append(", ".join(f"{s.name}[0][0]" for s in sources))
        print_row(fields, positions, print_fn)
        print_fn(("=" if i == len(layers) - 1 else "_") * line_length)
    trainable = sum(int(w.size) for w in model.trainable_weights)
    total = sum(int(w.size) for w in model.weights)
    print_fn(f"Total params: {total:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {total - trainable:,}")
    print_fn("_" * line_length)
