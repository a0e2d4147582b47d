"""``python -m ipu_teach`` / ``ipu-teach``: start the course, take the tour, describe the system."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
