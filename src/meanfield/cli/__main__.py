"""``python -m meanfield.cli``: the same as the ``meanfield`` command."""

from __future__ import annotations

import sys

from ._main import main

sys.exit(main())
