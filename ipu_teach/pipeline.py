"""The name ``ipu_teach.schedules`` had before 2026-11, kept for one release: import ``ipu_teach.schedules``."""

from .schedules import *  # noqa: F403
from .schedules import __all__  # noqa: F401
