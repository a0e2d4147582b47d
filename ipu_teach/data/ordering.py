"""Reordering a sequence of dataset elements: batching chunks, repeating passes, TensorFlow's buffer shuffle."""

import itertools

import numpy as np

# Shuffle randomness is drawn in blocks to keep the per-element cost low.
_RANDOM_BLOCK = 1024


def chunks(iterator, size, drop_remainder):
    """Consecutive lists of ``size`` items; a shorter last list unless ``drop_remainder``."""
    while chunk := list(itertools.islice(iterator, size)):
        if len(chunk) < size and drop_remainder:
            return
        yield chunk


def repeated(make_iterator, count):
    """The sequence ``count`` times over (forever when -1); stops early if a pass yields nothing, as tf.data does."""
    for _ in itertools.repeat(None) if count == -1 else range(count):
        produced = False
        for item in make_iterator():
            produced = True
            yield item
        if not produced:
            return


def buffer_shuffle(elements, buffer_size, rng):
    """TensorFlow's shuffle: fill a buffer, then emit a random buffered element and put the next one in its place."""
    buffer = list(itertools.islice(elements, buffer_size))
    # Incoming elements are taken in blocks so the random slots can be drawn in one numpy call per block.
    while block := list(itertools.islice(elements, _RANDOM_BLOCK)):
        slots = (rng.random(len(block)) * len(buffer)).astype(np.int64)
        for slot, element in zip(slots.tolist(), block):
            yield buffer[slot]
            buffer[slot] = element
    for picked in rng.permutation(len(buffer)).tolist():
        yield buffer[picked]
