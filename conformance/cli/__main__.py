"""``python -m conformance.cli``: the same as ``drift-conformance``."""

import sys

from conformance.cli.main import main

sys.exit(main())
