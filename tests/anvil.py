"""The local chain for tests (oracle.devchain) plus test-only helpers; fixtures in conftest."""

from __future__ import annotations

from oracle.devchain import (
    DEV_ADDRESSES,
    DEV_KEYS,
    REPO,
    Anvil,
    AnvilFactory,
    anvil_binary,
    free_port,
)

__all__ = [
    "DEV_ADDRESSES",
    "DEV_KEYS",
    "REPO",
    "Anvil",
    "AnvilFactory",
    "anvil_binary",
    "dead_url",
    "free_port",
]


def dead_url() -> str:
    """A URL on which nothing listens."""
    return f"http://127.0.0.1:{free_port()}"
