"""The ``ipu-teach`` command: ``course``, ``tour`` and ``info``."""
