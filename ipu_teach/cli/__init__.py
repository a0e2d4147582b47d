"""The ``ipu-teach`` command: ``course``, ``tour``, ``info`` and ``run``."""
