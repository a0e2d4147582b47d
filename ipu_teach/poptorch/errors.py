"""PopTorch's error type (``poptorch.Error``), apart so that every poptorch module can raise it."""


class Error(RuntimeError):
    """PopTorch's error (``poptorch.Error``): what PopTorch refuses, with its message.

    Example:

    >>> from ipu_teach import poptorch, torch
    >>> model = poptorch.inferenceModel(torch.nn.Linear(3, 2), poptorch.Options().deviceIterations(4))
    >>> try:
    ...     model(torch.zeros(6, 3))
    ... except poptorch.Error as error:
    ...     print(error)
    Invalid batch dimension: In the input torch.Size([6, 3]), the batch dimension (6) must be a multiple of ...
    """
