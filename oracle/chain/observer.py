"""What the chain layer reports while it works, for whoever watches it.

The chain layer knows nothing of Prometheus or of the daemon (it is below them): a pool
and a transaction manager are given a `ChainObserver`, and the composition root
(`oracle.app`) hands them the daemon's metrics, which implement it. Without one, nothing
is reported (`SILENT`). An observer must be quick and must not raise: it runs inside
every RPC call.
"""

from __future__ import annotations

from typing import Protocol


class ChainObserver(Protocol):
    def rpc_call(self, endpoint: str, seconds: float, *, failed: bool) -> None:
        """One call on one RPC node took `seconds`. `endpoint` is the node's redacted URL
        (`redact_url`: never credentials); `failed` means the node failed (transport,
        timeout, node trouble), not that it refused the request (a revert is an answer)."""

    def tx_replaced(self) -> None:
        """A transaction was replaced by one with higher fees at the same nonce."""

    def rpc_node(
        self, chain_id: int, index: int, endpoint: str, *, up: bool, head_timestamp: int | None
    ) -> None:
        """What the pool's last health check (or failed call) found of node `index` (its
        place in `chain.rpc.urls`) of chain `chain_id`: whether the pool may use it (`up`:
        answering, on the chain, not lagging) and the timestamp of the latest block it
        reported (None before it ever answered). `endpoint` is redacted as for `rpc_call`."""


class _Silent:
    def rpc_call(self, endpoint: str, seconds: float, *, failed: bool) -> None:
        pass

    def tx_replaced(self) -> None:
        pass

    def rpc_node(
        self, chain_id: int, index: int, endpoint: str, *, up: bool, head_timestamp: int | None
    ) -> None:
        pass


SILENT: ChainObserver = _Silent()
