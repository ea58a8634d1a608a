"""``python -m incast`` is the ``incast`` command."""

import sys

from incast.cli import main

sys.exit(main())
