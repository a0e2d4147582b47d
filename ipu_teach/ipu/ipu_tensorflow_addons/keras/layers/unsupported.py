"""The refusal Graphcore's IPU layers give for a Keras argument they take only for API consistency."""


def check_unsupported(layer, method: str = "__init__", **arguments) -> None:
    """Raises NotImplementedError, as Graphcore's ``IPULayer._check_unsupported`` does, for the first of
    ``arguments`` that is set (truthy) although the IPU layer does not support it."""
    for name, value in arguments.items():
        if value:
            kind = type(layer).__name__
            raise NotImplementedError(
                f"ipu_tensorflow_addons.keras.layers.{kind} does not support {method} argument {name}. It is "
                f"included for API consistency with keras.{kind}: leave it out to run on the IPU"
            )
