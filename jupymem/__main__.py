"""``python -m jupymem``: the command line."""

import sys

from .faces.cli import main

if __name__ == "__main__":
    sys.exit(main())
