"""Integer arithmetic every layer of the package shares (it imports nothing of ours, so any module may use it)."""


def ceil_div(a, b):
    """``a / b`` rounded up, for integers or integer arrays (bytes to cycles, samples to batches, items to
    groups), exact where ``math.ceil(a / b)`` would go through a float.

    Example:

    >>> ceil_div(10, 4), ceil_div(8, 4)
    (3, 2)
    """
    return -(-a // b)


def divisors(n: int) -> list:
    """The positive divisors of ``n`` in increasing order: the values that split ``n`` items into equal groups
    (samples into batches, steps into executions), for messages that suggest one. O(sqrt(n)).

    Example:

    >>> divisors(12), divisors(7)
    ([1, 2, 3, 4, 6, 12], [1, 7])
    """
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]
