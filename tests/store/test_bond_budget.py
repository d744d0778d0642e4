"""The bond budget in every intent store: a bond is reserved with its intent, released
when the intent ends without a bond on chain or when a scan started after its
confirmation counts it; two replicas (two engines on one database) reserving at once
never pass the cap together."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from oracle.chain.intents import BondHold, BondLedger, IntentState, IntentStore
from oracle.core.budget import BudgetCaps, check_budget
from oracle.errors import BondRefused
from oracle.store.engine import make_engine
from oracle.store.intents import DatabaseIntentStore
from oracle.store.migrate import upgrade
from oracle.store.repository import Store

from ..conftest import empty_postgres_database
from .test_intent_stores import SENDER, _factory, intent

TOKEN = "0x00000000000000000000000000000000000000Cc"
SCOPE = "0x00000000000000000000000000000000000000dd"


def hold(amount: int, *, cap: int | None = 150, per_request: int | None = None) -> BondHold:
    return BondHold(
        scope=SCOPE,
        currency=TOKEN,
        amount=amount,
        max_outstanding=cap,
        max_per_request=per_request,
    )


@pytest.fixture(params=["memory", "file", "sqlite", "postgresql"])
def make_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], IntentStore]]:
    with _factory(request.param, request, tmp_path) as factory:
        yield factory


def test_the_rule_refuses_per_request_then_outstanding() -> None:
    caps = BudgetCaps(max_per_request=100, max_outstanding=150)
    assert check_budget(caps, amount=100, outstanding=20, reserved=30) is None
    refusal = check_budget(caps, amount=101, outstanding=0, reserved=0)
    assert refusal is not None
    assert refusal.reason == "per_request_cap"
    refusal = check_budget(caps, amount=100, outstanding=20, reserved=31)
    assert refusal is not None
    assert refusal.reason == "outstanding_cap"
    named = BudgetCaps(max_per_request=10, per_request_reason="per_question_cap")
    refusal = check_budget(named, amount=5, stake=11, outstanding=0, reserved=0)
    assert refusal is not None
    assert refusal.reason == "per_question_cap"


def test_a_reservation_is_weighed_kept_and_released(
    make_store: Callable[[], IntentStore],
) -> None:
    async def run() -> None:
        store = make_store()
        assert isinstance(store, BondLedger)
        await store.put(intent("a", 0), [hold(105)])
        with pytest.raises(BondRefused) as refused:
            await store.put(intent("b", 1), [hold(105)])
        assert refused.value.reason == "outstanding_cap"
        assert await store.get("b") is None  # nothing stored with a refused bond
        with pytest.raises(BondRefused) as refused:
            await store.put(intent("c", 1), [hold(20, per_request=10)])
        assert refused.value.reason == "per_request_cap"
        # The same intent put again (broadcast, mined) reserves nothing more.
        await store.put(intent("a", 0, IntentState.BROADCAST), [hold(105)])
        book = await store.observe_bonds(1, SENDER, SCOPE, {}, store.bond_clock())
        assert book.reserved == {TOKEN: 105}
        assert book.mine == {TOKEN: 105}
        # Reverted: released at once.
        await store.put(intent("a", 0, IntentState.REVERTED))
        await store.put(intent("b", 1), [hold(105)])
        # Confirmed: kept until a scan started after the confirmation counts it.
        await store.put(intent("b", 1, IntentState.CONFIRMED))
        before = store.bond_clock() - 1000
        book = await store.observe_bonds(1, SENDER, SCOPE, {}, before)
        assert book.reserved == {TOKEN: 105}
        book = await store.observe_bonds(1, SENDER, SCOPE, {TOKEN: 105}, store.bond_clock())
        assert (book.on_chain, book.reserved, book.mine) == ({TOKEN: 105}, {}, {TOKEN: 105})
        # On chain it still counts: no room for another 105.
        with pytest.raises(BondRefused):
            await store.put(intent("c", 2), [hold(105)])
        # An older scan than the last one stored changes nothing.
        book = await store.observe_bonds(1, SENDER, SCOPE, {}, before)
        assert book.on_chain == {TOKEN: 105}
        # The bond returned: the next scan finds nothing, room again.
        await store.observe_bonds(1, SENDER, SCOPE, {}, store.bond_clock())
        await store.put(intent("c", 2), [hold(105)])

    asyncio.run(run())


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_replicas_reserving_at_once_never_pass_the_cap(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'oracle.db'}"
        if backend == "sqlite"
        else empty_postgres_database(request)
    )
    engines = [make_engine(url) for _ in range(2)]
    upgrade(engines[0])
    stores = [DatabaseIntentStore(Store(engine)) for engine in engines]
    per_replica, amount, cap = 10, 40, 300
    start = threading.Barrier(2 * per_replica)
    taken: list[str] = []
    refused: list[str] = []
    lock = threading.Lock()

    def deliver(replica: int, n: int) -> None:
        key = f"r{replica}-{n}"
        start.wait()
        try:
            stores[replica]._put(intent(key, None), [hold(amount, cap=cap)])
        except BondRefused:
            with lock:
                refused.append(key)
            return
        with lock:
            taken.append(key)

    threads = [
        threading.Thread(target=deliver, args=(replica, n))
        for replica in range(2)
        for n in range(per_replica)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(taken) == cap // amount  # 7 of 20 fit: 280 <= 300
    assert len(refused) == 2 * per_replica - len(taken)
    book = asyncio.run(stores[1].observe_bonds(1, SENDER, SCOPE, {}, 0.0))
    assert book.reserved == {TOKEN: amount * len(taken)}
    for engine in engines:
        engine.dispose()
