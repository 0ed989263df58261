"""`python -m ibvp` is the `ibvp` command (ibvp.cli)."""
import sys

from .cli import main

sys.exit(main())
