"""The ``ipu-teach`` command: ``course``, ``tour``, ``info``, ``run`` and ``explain``."""
