"""PopTorch's error type (``poptorch.Error``), apart so that every poptorch module can raise it."""


class Error(RuntimeError):
    """PopTorch's error (``poptorch.Error``)."""
