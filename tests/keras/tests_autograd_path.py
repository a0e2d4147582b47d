"""The autograd tests' gradient checker, for the layer tests (tests/autograd is not a package)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "autograd"))
from gradcheck import check_gradients  # noqa: E402

__all__ = ["check_gradients"]
