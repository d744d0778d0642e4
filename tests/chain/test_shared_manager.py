"""One transaction manager shared by several venues of one chain: the pre-send check of a
recorded intent is the one its contract's venue registered."""

from __future__ import annotations

import asyncio
from typing import Any

from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState
from oracle.chain.txmanager import TxManager

FIRST = "0x" + "aa" * 20
SECOND = "0x" + "BB" * 20


def _intent(key: str, to: str | None) -> Intent:
    return Intent(
        key=key,
        chain_id=1,
        sender="0x" + "11" * 20,
        to=to,
        state=IntentState.SIGNED,
        created_at=0,
        updated_at=0,
    )


def test_a_recorded_intent_is_checked_by_its_own_contracts_venue() -> None:
    manager = TxManager(object(), object(), InMemoryIntentStore())  # type: ignore[arg-type]
    asked: list[str] = []

    def check(name: str, answer: bool) -> Any:
        async def run(intent: Intent) -> bool:
            asked.append(f"{name}:{intent.key}")
            return answer

        return run

    # Two deployments of one contract on one manager register the same prefix.
    manager.register_precheck("uma-propose:", check("first", True), contract=FIRST)
    manager.register_precheck("uma-propose:", check("second", False), contract=SECOND.lower())
    manager.register_precheck("settle:", check("any", True))

    async def run() -> list[bool | None]:
        return [
            await manager._precheck(_intent("uma-propose:1:a", FIRST.upper().replace("0X", "0x"))),
            await manager._precheck(_intent("uma-propose:1:b", SECOND)),
            await manager._precheck(_intent("uma-propose:1:c", "0x" + "cc" * 20)),
            await manager._precheck(_intent("settle:1", SECOND)),
        ]

    assert asyncio.run(run()) == [True, False, None, True]
    assert asked == ["first:uma-propose:1:a", "second:uma-propose:1:b", "any:settle:1"]
