"""RpcPool: one chain reached through one or more JSON-RPC nodes.

* `start()` asks every node for its chain id; a node on another chain than the configured
  one (or than the others) is a configuration error. Nodes that do not answer are marked
  down and retried later; at least one must answer.
* `call(what, op)` runs `op(w3)` on the first node in rotation (the configured order is
  the preference order). A transport failure (connection refused, timeout, HTTP error,
  garbage instead of JSON) takes the node out of rotation with exponential backoff and
  the call moves on to the next node; when every node is out, it waits for the earliest
  retry until `call_deadline` has passed, then raises `RpcUnavailable`.
* Errors the node reports about the request itself (JSON-RPC errors such as "nonce too
  low" or a revert) are not node failures: they reach the caller unchanged.
* `eth_calls(what, to, calldata)` makes contract reads cheaply: straight to the node's
  provider, several in one JSON-RPC batch request; only a call whose answer is not a clean
  result is made again through web3, so its error is the one a web3 call raises.
* Every `health_check_interval` the pool polls all nodes' block heights; a node more than
  `max_block_lag` blocks behind the best one leaves the rotation until it catches up, and
  nodes whose backoff has expired are probed (chain id included) and re-admitted.

Nodes are named by `redact_url(url)` in every message and log: RPC URLs often embed an
API key. web3's own loggers, which print endpoint URLs, get a filter that redacts them.

Every call made on a node, health probes included, is reported to the pool's observer
(`oracle.chain.observer`; the daemon's metrics): the node's redacted name, how long it
took, and whether the node failed; after each health check (and each node failure), what
the pool knows of every node: usable or not, and the timestamp of its latest block (the
daemon exports each node's head age from it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import aiohttp
from eth_typing import ChecksumAddress, HexStr
from pydantic import SecretStr
from web3 import AsyncWeb3
from web3.exceptions import (
    BadResponseFormat,
    CannotHandleRequest,
    ProviderConnectionError,
    Web3RPCError,
)
from web3.middleware import ExtraDataToPOAMiddleware
from web3.types import RPCEndpoint, TxParams

from oracle.chain.observer import SILENT, ChainObserver
from oracle.chain.settings import RpcSettings
from oracle.chain.transport import KeepAliveHTTPProvider
from oracle.core.urls import redact_url
from oracle.errors import ChainIdMismatch, RpcError, RpcUnavailable
from oracle.log import emit

logger = logging.getLogger(__name__)

T = TypeVar("T")
Web3 = AsyncWeb3[KeepAliveHTTPProvider]


class _NodeDown:
    """What `RpcPool._attempt` gives when the node failed (and is marked down)."""


_NODE_DOWN = _NodeDown()

# JSON-RPC errors that mean "this node cannot serve the request", not "the request is bad".
_NODE_TROUBLE = ("header not found", "missing trie node", "unknown block", "internal error")
_ETH_CALL = RPCEndpoint("eth_call")


class _RedactFilter(logging.Filter):
    """Replaces secret URLs in web3's log records by their redacted form."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[str, str] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret, shown in self.secrets.items():
            redacted = redacted.replace(secret, shown)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_REDACT = _RedactFilter()


def _protect_web3_logs(urls: Sequence[str]) -> None:
    for url in urls:
        _REDACT.secrets[url] = redact_url(url)
    for name in list(logging.Logger.manager.loggerDict):
        if name == "web3" or name.startswith("web3."):
            log = logging.getLogger(name)
            if _REDACT not in log.filters:
                log.addFilter(_REDACT)


def describe_failure(error: BaseException) -> str:
    """A short reason that never quotes the URL (aiohttp puts it in its messages)."""
    if isinstance(error, aiohttp.ClientResponseError):
        return f"HTTP {error.status}"
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        return "timed out"
    if isinstance(error, aiohttp.ClientConnectorError):
        return f"connection failed ({error.os_error.strerror or type(error.os_error).__name__})"
    if isinstance(error, aiohttp.ClientError):
        return f"connection error ({type(error).__name__})"
    if isinstance(error, OSError):
        return f"connection error ({error.strerror or type(error).__name__})"
    if isinstance(error, Web3RPCError):
        return f"node error: {rpc_error_message(error)}"
    return f"unusable answer ({type(error).__name__})"


def rpc_error_message(error: Web3RPCError) -> str:
    """The node's own error message from a JSON-RPC error response."""
    response = error.rpc_response or {}
    body = response.get("error") if isinstance(response, dict) else None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    if isinstance(body, str):
        return body
    return str(error.message)


def is_node_failure(error: BaseException) -> bool:
    """True when the node (not the request) is at fault: try another node."""
    if isinstance(error, Web3RPCError):
        message = rpc_error_message(error).lower()
        return any(trouble in message for trouble in _NODE_TROUBLE)
    return isinstance(
        error,
        aiohttp.ClientError
        | TimeoutError
        | asyncio.TimeoutError
        | OSError
        | BadResponseFormat
        | ProviderConnectionError
        | CannotHandleRequest
        | json.JSONDecodeError,  # an HTML error page instead of JSON
    )


def _clean_result(answer: Any) -> bytes | None:
    """The result of a well-formed, successful `eth_call` answer; None for anything else."""
    if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0" or "error" in answer:
        return None
    result = answer.get("result")
    if not isinstance(answer.get("id"), int) or not isinstance(result, str):
        return None
    if not result.startswith("0x"):
        return None
    try:
        return bytes.fromhex(result[2:])
    except ValueError:
        return None


def _one_per_call(answers: Any, count: int) -> list[Any]:
    """A batch's answers in call order; `count` Nones unless there is exactly one per call.

    web3 sorts a batch's answers by id, and the ids of one batch are consecutive, so
    consecutive ids mean call order. A node that refuses batches answers with one error
    instead of a list.
    """
    if isinstance(answers, list) and len(answers) == count:
        ids = [answer.get("id") if isinstance(answer, dict) else None for answer in answers]
        first = ids[0]
        if isinstance(first, int) and ids == list(range(first, first + count)):
            return answers
    return [None] * count


async def _eth_calls(to: ChecksumAddress, calldata: Sequence[HexStr], w3: Web3) -> list[bytes]:
    """`eth_call` results for `calldata` to `to` from one node, in one request if it can.

    Straight to the provider: web3's middleware and formatters cost several times the
    request itself (and ask the node its chain id on every call). A call whose answer is
    not a clean result (a revert, a node error, a malformed or missing answer) is made
    again through web3, so that it fails, or succeeds, exactly as a web3 call does.
    """
    calls = [TxParams(to=to, data=data) for data in calldata]
    if len(calls) == 1:
        answers = [await w3.provider.make_request(_ETH_CALL, [calls[0], "latest"])]
    else:
        batch = await w3.provider.make_batch_request([(_ETH_CALL, [c, "latest"]) for c in calls])
        answers = _one_per_call(batch, len(calls))
    results = []
    for call, answer in zip(calls, answers, strict=True):
        result = _clean_result(answer)
        if result is None:
            result = bytes(await w3.eth.call(call))
        results.append(result)
    return results


@dataclass
class NodeStatus:
    """A node as logs and metrics may show it."""

    name: str
    up: bool
    lagging: bool
    height: int | None
    failures: int
    last_error: str


class _Node:
    def __init__(self, url: str, timeout: float) -> None:
        self.name = redact_url(url)
        provider = KeepAliveHTTPProvider(url, timeout=timeout)
        self.w3: Web3 = AsyncWeb3(provider)
        self.w3.middleware_onion.inject(ExtraDataToPOAMiddleware, layer=0)
        self.failures = 0
        self.down_until = 0.0
        self.height: int | None = None
        self.head_timestamp: int | None = None  # of the latest block it reported
        self.lagging = False
        self.disabled = False  # serves another chain: never used again
        self.last_error = ""
        self.verified = False  # chain id checked since (re)admission

    def usable(self, now: float) -> bool:
        return not self.disabled and not self.lagging and self.down_until <= now

    def __repr__(self) -> str:
        return f"_Node({self.name})"


class RpcPool:
    """Failover over the RPC nodes of one chain. Create, `await start()`, use, `await close()`."""

    def __init__(
        self,
        urls: Sequence[str | SecretStr],
        settings: RpcSettings | None = None,
        *,
        chain_id: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        observer: ChainObserver = SILENT,
    ) -> None:
        if not urls:
            raise ValueError("an RpcPool needs at least one URL")
        self._settings = settings or RpcSettings()
        plain = [u.get_secret_value() if isinstance(u, SecretStr) else u for u in urls]
        _protect_web3_logs(plain)
        self._nodes = [_Node(url, self._settings.request_timeout) for url in plain]
        self._expected = chain_id if chain_id is not None else self._settings.chain_id
        self._chain_id: int | None = None
        self._clock = clock
        self._observer = observer
        self._last_health = -float("inf")
        self._health_lock = asyncio.Lock()

    @classmethod
    def from_settings(cls, settings: RpcSettings, observer: ChainObserver = SILENT) -> RpcPool:
        return cls(settings.urls, settings, observer=observer)

    @property
    def chain_id(self) -> int:
        if self._chain_id is None:
            raise RuntimeError("RpcPool.start() has not completed")
        return self._chain_id

    def status(self) -> list[NodeStatus]:
        now = self._clock()
        return [
            NodeStatus(
                n.name, n.usable(now) or n.lagging, n.lagging, n.height, n.failures, n.last_error
            )
            for n in self._nodes
        ]

    def __repr__(self) -> str:
        return f"RpcPool({', '.join(n.name for n in self._nodes)})"

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> int:
        """Check every node's chain id; returns the chain id. Fails if no node answers."""
        results = await asyncio.gather(*(self._probe(n, verify=False) for n in self._nodes))
        answered = [(node, cid) for node, cid in zip(self._nodes, results, strict=True) if cid]
        if not answered:
            reasons = "; ".join(f"{n.name} ({n.last_error})" for n in self._nodes)
            raise RpcUnavailable(f"no RPC node answered: {reasons}")
        expected = self._expected if self._expected is not None else answered[0][1]
        for node, cid in answered:
            if cid != expected:
                raise ChainIdMismatch(node.name, expected, cid)
        self._chain_id = expected
        self._last_health = self._clock()
        self._report()
        emit(
            logger,
            logging.INFO,
            "rpc.started",
            chain_id=expected,
            nodes=[n.name for n in self._nodes],
            up=[n.name for n, _ in answered],
        )
        return expected

    async def close(self) -> None:
        for node in self._nodes:
            try:
                await node.w3.provider.disconnect()
            except Exception as error:  # closing must not mask the caller's outcome
                logger.debug("closing %s failed: %s", node.name, type(error).__name__)

    async def __aenter__(self) -> RpcPool:
        try:
            await self.start()
        except BaseException:
            await self.close()  # the nodes' sessions were opened by the probes
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- node bookkeeping -------------------------------------------------------------------

    def _mark_down(self, node: _Node, error: BaseException) -> None:
        node.failures += 1
        backoff = min(
            self._settings.retry_backoff * 2 ** (node.failures - 1),
            self._settings.retry_backoff_max,
        )
        node.down_until = self._clock() + backoff
        node.verified = False
        node.last_error = describe_failure(error)
        self._report()
        emit(
            logger,
            logging.WARNING,
            "rpc.node_down",
            node=node.name,
            reason=node.last_error,
            retry_in_seconds=round(backoff, 2),
        )

    def _mark_up(self, node: _Node) -> None:
        if node.failures:
            emit(logger, logging.INFO, "rpc.node_up", node=node.name)
        node.failures = 0
        node.down_until = 0.0
        node.last_error = ""

    def _report(self) -> None:
        """Every node's state to the observer (once the chain id is known)."""
        if self._chain_id is None:
            return
        now = self._clock()
        for index, node in enumerate(self._nodes):
            self._observer.rpc_node(
                self._chain_id,
                index,
                node.name,
                up=node.usable(now),
                head_timestamp=node.head_timestamp,
            )

    def _observe(self, node: _Node, started: float, *, failed: bool) -> None:
        self._observer.rpc_call(node.name, time.perf_counter() - started, failed=failed)

    async def _attempt(self, node: _Node, op: Callable[[Web3], Awaitable[T]]) -> T | _NodeDown:
        """`op` on `node`, its time and outcome observed. A node failure marks the node
        down (`_NodeDown` returned); any other error is the call's own and is raised."""
        started = time.perf_counter()
        try:
            result = await op(node.w3)
        except Exception as error:
            failed = is_node_failure(error)
            self._observe(node, started, failed=failed)
            if not failed:
                raise
            self._mark_down(node, error)
            return _NODE_DOWN
        self._observe(node, started, failed=False)
        return result

    async def _probe(self, node: _Node, *, verify: bool = True) -> int | None:
        """Chain id and height of one node; None (and the node marked down) on failure.

        With `verify`, a node on another chain is disabled for good (and None returned).
        """
        answered = await self._attempt(
            node, lambda w3: asyncio.gather(w3.eth.chain_id, w3.eth.get_block("latest"))
        )
        if isinstance(answered, _NodeDown):
            return None
        chain_id, head = answered
        expected = self._expected if self._expected is not None else self._chain_id
        if verify and expected is not None and chain_id != expected:
            node.disabled = True
            node.last_error = f"serves chain id {chain_id}, expected {expected}"
            emit(logger, logging.ERROR, "rpc.wrong_chain", node=node.name, chain_id=chain_id)
            return None
        node.height = int(head["number"])
        node.head_timestamp = int(head["timestamp"])
        node.verified = True
        self._mark_up(node)
        return int(chain_id)

    async def check_health(self) -> None:
        """Probe nodes due for a retry, refresh heights, and set each node's lag flag."""
        async with self._health_lock:
            now = self._clock()
            due = [n for n in self._nodes if not n.disabled and n.down_until <= now]
            await asyncio.gather(*(self._probe(n) for n in due))
            heights = [n.height for n in self._nodes if n.usable(now) or n.lagging]
            best = max((h for h in heights if h is not None), default=None)
            for node in self._nodes:
                if best is None or node.height is None or node.down_until > self._clock():
                    continue
                lagging = best - node.height > self._settings.max_block_lag
                if lagging != node.lagging:
                    emit(
                        logger,
                        logging.WARNING if lagging else logging.INFO,
                        "rpc.node_lagging" if lagging else "rpc.node_caught_up",
                        node=node.name,
                        height=node.height,
                        best=best,
                    )
                node.lagging = lagging
            self._last_health = self._clock()
            self._report()

    # -- calls ------------------------------------------------------------------------------

    async def call(self, what: str, op: Callable[[Web3], Awaitable[T]]) -> T:
        """Run `op` on a healthy node, failing over; `what` names the call in errors."""
        if self._clock() - self._last_health >= self._settings.health_check_interval:
            await self.check_health()
        deadline = self._clock() + self._settings.call_deadline
        while True:
            now = self._clock()
            candidates = [n for n in self._nodes if n.usable(now)] or [
                # Better a lagging node than none at all.
                n
                for n in self._nodes
                if n.lagging and not n.disabled and n.down_until <= now
            ]
            for node in candidates:
                if not node.verified and await self._probe(node) is None:
                    continue
                result = await self._attempt(node, op)
                if isinstance(result, _NodeDown):
                    continue
                return result
            waits = [n.down_until for n in self._nodes if not n.disabled]
            if not waits or min(waits) > deadline:
                break
            await asyncio.sleep(max(0.0, min(waits) - self._clock()))
        reasons = "; ".join(f"{n.name}: {n.last_error or 'unavailable'}" for n in self._nodes)
        raise RpcUnavailable(f"{what}: no RPC node answered within the deadline ({reasons})")

    async def eth_calls(
        self, what: str, to: ChecksumAddress, calldata: Sequence[HexStr]
    ) -> list[bytes]:
        """The results of `eth_call`s of `calldata` to `to` (latest block), in order.

        Up to `max_batch_size` calls go in one JSON-RPC request, each request through
        `call` (failover, errors as a web3 `eth_call` raises them).
        """
        size = self._settings.max_batch_size
        chunks = [calldata[start : start + size] for start in range(0, len(calldata), size)]
        answers = await asyncio.gather(
            *(self.call(what, partial(_eth_calls, to, chunk)) for chunk in chunks)
        )
        return [result for chunk in answers for result in chunk]

    async def request(self, method: str, params: Sequence[Any] = ()) -> Any:
        """A raw JSON-RPC call (e.g. `anvil_mine`); node errors raise `Web3RPCError`."""

        async def run(w3: Web3) -> Any:
            return await w3.manager.coro_request(RPCEndpoint(method), list(params))

        return await self.call(method, run)


__all__ = [
    "ChainIdMismatch",
    "NodeStatus",
    "RpcError",
    "RpcPool",
    "RpcUnavailable",
    "describe_failure",
    "is_node_failure",
    "rpc_error_message",
]
