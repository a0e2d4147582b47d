"""Integer arithmetic every layer of the package shares (it imports nothing of ours, so any module may use it)."""


def ceil_div(a, b):
    """``a / b`` rounded up, for integers or integer arrays (bytes to cycles, samples to batches, items to
    groups), exact where ``math.ceil(a / b)`` would go through a float.

    Example:

    >>> ceil_div(10, 4), ceil_div(8, 4)
    (3, 2)
    """
    return -(-a // b)
