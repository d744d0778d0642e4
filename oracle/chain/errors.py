"""Exceptions raised by the chain layer.

The tree (all under `oracle.errors.OracleError`)::

    ChainError                   base of every chain-layer error
    ├── RpcError                 a node failed or disagreed; names the node's redacted URL
    │   ├── ChainIdMismatch      a node serves another chain than the configured one
    │   └── RpcUnavailable       no node answered within the deadline
    ├── KeystoreError            a keystore or password cannot be read or used
    ├── TxError                  a transaction could not be built, sent or completed
    │   ├── TxReverted           the call reverts; carries the decoded custom error
    │   └── SubjectsHeld         another intent already acts on what this one would
    └── DeploymentError          a deployment file or contract artifact is missing or malformed

No message ever contains a private key, a password, a keystore's contents or the
credentials of an RPC URL (see `oracle.core.urls.redact_url`).
"""

from __future__ import annotations

from collections.abc import Mapping

from oracle.errors import OracleError


class ChainError(OracleError):
    """Base class for the chain layer's errors."""


class RpcError(ChainError):
    """A node failed, timed out or answered something unusable."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url


class ChainIdMismatch(RpcError):
    """A node reports a different chain id than the one configured (or than the others)."""

    def __init__(self, url: str, expected: int, actual: int) -> None:
        super().__init__(url, f"serves chain id {actual}, expected {expected}")
        self.expected = expected
        self.actual = actual


class RpcUnavailable(ChainError):
    """No node of the pool answered in time."""


class KeystoreError(ChainError):
    """A keystore file or its password cannot be read, or the password is wrong."""


class TxError(ChainError):
    """A transaction could not be built, sent or brought to a final state."""


class TxReverted(TxError):
    """The transaction (or its gas estimate) reverts; `error` is the decoded reason and
    `name` the custom error's name (`Error` for a string, `Panic`, `Unknown`, `Empty`)."""

    def __init__(self, key: str, error: str, name: str = "") -> None:
        super().__init__(f"{key}: reverts with {error}")
        self.key = key
        self.error = error
        self.name = name


class SubjectsHeld(TxError):
    """Another recorded intent (unfinished, or confirmed) acts on some of the subjects of
    the one being sent, so it must not be sent; `holders` maps each such subject to the
    key of the intent that holds it. Nothing was recorded or sent."""

    def __init__(self, key: str, holders: Mapping[str, str]) -> None:
        named = ", ".join(f"{s} by {k}" for s, k in sorted(holders.items()))
        super().__init__(f"{key}: already in another transaction: {named}")
        self.key = key
        self.holders = dict(holders)


class DeploymentError(ChainError):
    """A deployment file or an exported contract artifact is missing or malformed."""
