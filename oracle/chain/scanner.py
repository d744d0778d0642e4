"""LogScanner: one contract event, scanned in bounded block ranges behind a confirmation depth.

Each `poll()`:

1. reads the head and scans only up to `head - confirmations`, so a reorg shallower than
   the depth never touches a scanned block;
2. checks that the last scanned block still has the hash the checkpoint recorded; if not
   (a reorg deeper than the depth), rewinds `rewind_blocks` and scans again;
3. fetches logs in ranges of at most `max_block_range` blocks (halving the range when a
   node refuses a large one), decodes them in (block, log index) order, drops ids it has
   delivered already (`delivered` in the checkpoint, kept for `rewind_blocks`), hands the
   new ones to the handler, and only then saves the checkpoint.

Delivery is therefore at-least-once across crashes (a crash after the handler and before
the checkpoint save repeats that range; handlers must be idempotent by id, as a database
keyed by question id is) and exactly-once across reorgs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from hexbytes import HexBytes
from web3.exceptions import Web3RPCError

from oracle.chain.checkpoint import Checkpoint, CheckpointStore
from oracle.chain.events import DecodedLog, EventDecoder
from oracle.chain.rpc import RpcPool, Web3, rpc_error_message
from oracle.chain.settings import ScannerSettings
from oracle.log import emit

logger = logging.getLogger(__name__)

Handler = Callable[[list[DecodedLog]], Awaitable[None]]
T = TypeVar("T")
IdOf = Callable[[DecodedLog], str]
_RANGE_REFUSED = ("range", "limit", "too many", "exceed", "max results", "response size")


def log_position(log: DecodedLog) -> str:
    return f"{log.tx_hash}:{log.log_index}"


def scan_name(source: str, chain_id: int, contract: str) -> str:
    """The name a venue's scan of `contract` keeps its checkpoint under: one per source,
    chain and contract, so a source pointed at another chain or contract starts afresh."""
    return f"{source}:{chain_id}:{contract.lower()}"


class LogScanner:
    def __init__(
        self,
        pool: RpcPool,
        *,
        address: str,
        decoder: EventDecoder,
        checkpoints: CheckpointStore,
        name: str,
        settings: ScannerSettings | None = None,
        start_block: int = 0,
        id_of: IdOf = log_position,
        rewind_blocks: int = 128,
        topics: Sequence[str | Sequence[str] | None] = (),
    ) -> None:
        self._pool = pool
        self._address = address
        self._decoder = decoder
        self._checkpoints = checkpoints
        self.name = name
        self._settings = settings or ScannerSettings()
        self._start = start_block
        self._id_of = id_of
        self._rewind = max(rewind_blocks, self._settings.confirmations + 1)
        # Filters on the indexed arguments after the event's own topic (eth_getLogs'
        # `topics[1:]`: one value, any of several, or None for any).
        self._topics = [t if t is None or isinstance(t, str) else list(t) for t in topics]

    async def _block_hash(self, number: int) -> str | None:
        async def run(w3: Web3) -> Any:
            return await w3.eth.get_block(number)

        try:
            block = await self._pool.call("eth_getBlockByNumber", run)
        except Exception as error:
            if "not found" in str(error).lower():
                return None
            raise
        return HexBytes(block["hash"]).to_0x_hex()

    async def _logs(self, first: int, last: int) -> list[DecodedLog]:
        """Logs of [first, last], splitting the range while the node refuses it."""
        params: dict[str, Any] = {
            "address": self._address,
            "topics": [self._decoder.topic, *self._topics],
            "fromBlock": first,
            "toBlock": last,
        }

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_logs(params)  # type: ignore[arg-type]

        try:
            raw = await self._pool.call("eth_getLogs", run)
        except Web3RPCError as error:
            message = rpc_error_message(error).lower()
            if last > first and any(m in message for m in _RANGE_REFUSED):
                middle = (first + last) // 2
                return await self._logs(first, middle) + await self._logs(middle + 1, last)
            raise
        logs = [self._decoder.decode(entry) for entry in raw if not entry.get("removed")]
        return sorted(logs, key=lambda log: (log.block_number, log.log_index))

    async def checkpoint(self) -> Checkpoint:
        saved = await self._checkpoints.load(self.name)
        return saved if saved is not None else Checkpoint(next_block=self._start)

    async def poll(self, handler: Handler | None = None) -> list[DecodedLog]:
        """Scan what became safe since the last poll; returns the newly delivered logs."""
        cp = await self.checkpoint()
        head = int(await self._pool.call("eth_blockNumber", lambda w3: w3.eth.block_number))
        safe = head - self._settings.confirmations
        if cp.last_block_hash is not None and cp.next_block > 0:
            current = await self._block_hash(cp.next_block - 1)
            if current != cp.last_block_hash:
                rewound = max(self._start, cp.next_block - self._rewind)
                emit(
                    logger,
                    logging.WARNING,
                    "scanner.deep_reorg",
                    scanner=self.name,
                    block=cp.next_block - 1,
                    rescan_from=rewound,
                )
                cp = cp.model_copy(update={"next_block": rewound, "last_block_hash": None})
        delivered: list[DecodedLog] = []
        while cp.next_block <= safe:
            last = min(safe, cp.next_block + self._settings.max_block_range - 1)
            logs = await self._logs(cp.next_block, last)
            last_hash = await self._block_hash(last)
            fresh = [log for log in logs if self._id_of(log) not in cp.delivered]
            if handler is not None and fresh:
                await handler(fresh)
            seen = {**cp.delivered, **{self._id_of(log): log.block_number for log in fresh}}
            horizon = last + 1 - self._rewind
            cp = Checkpoint(
                next_block=last + 1,
                last_block_hash=last_hash,
                delivered={k: b for k, b in seen.items() if b >= horizon},
            )
            await self._checkpoints.save(self.name, cp)
            delivered += fresh
            if fresh:
                emit(
                    logger,
                    logging.INFO,
                    "scanner.found",
                    scanner=self.name,
                    count=len(fresh),
                    first_block=fresh[0].block_number,
                    last_block=last,
                )
        return delivered

    async def poll_parsed(
        self,
        parse: Callable[[DecodedLog], T],
        handler: Callable[[list[T]], Awaitable[None]] | None = None,
        wanted: Callable[[T], bool] = lambda _: True,
    ) -> list[T]:
        """`poll`, each new log read by `parse` and kept when `wanted`: those kept go to
        `handler` (when there are any) before the checkpoint moves, and are returned."""
        found: list[T] = []

        async def kept(logs: list[DecodedLog]) -> None:
            items = [item for item in map(parse, logs) if wanted(item)]
            if items and handler is not None:
                await handler(items)
            found.extend(items)

        await self.poll(kept)
        return found
