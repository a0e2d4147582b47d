"""``ipu_tensorflow_addons.keras``: the IPU Keras layers (:mod:`.layers`)."""

from . import layers

__all__ = ["layers"]
