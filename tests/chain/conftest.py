"""Debug switch for the chain tests; the anvil fixtures are shared (tests/conftest.py)."""

from __future__ import annotations

import os

if os.environ.get("ORACLE_CHAIN_TEST_DEBUG"):
    import logging

    logging.basicConfig(level=logging.DEBUG)
