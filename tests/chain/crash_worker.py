"""A process that records and broadcasts one transaction, then dies (for the crash tests).

    python -m tests.chain.crash_worker URL STORE_FILE KEY TO VALUE DATA MODE

MODE `after-broadcast`: print `BROADCAST <hash>` once the node accepted the transaction,
then wait to be SIGKILLed by the test. MODE `after-record`: SIGKILL itself right after
the signed transaction was recorded and before it is broadcast.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from oracle.chain.intents import FileIntentStore, Intent, IntentState
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.txmanager import TxManager, TxRequest
from tests.anvil import DEV_KEYS
from tests.chain.helpers import FAST_RPC, FAST_TX


class DyingStore(FileIntentStore):
    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.SIGNED:
            os.kill(os.getpid(), signal.SIGKILL)


async def main(argv: list[str]) -> None:
    url, path, key, to, value, data, mode = argv
    store = DyingStore(path) if mode == "after-record" else FileIntentStore(path)
    pool = RpcPool([url], FAST_RPC)
    await pool.start()
    manager = TxManager(
        pool, LocalSigner(DEV_KEYS[0]), store, FAST_TX.model_copy(update={"confirmations": 3})
    )
    intent = await manager.send(TxRequest(key=key, to=to, value=int(value), data=data))
    print(f"BROADCAST {intent.latest.tx_hash}", flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:8]))
