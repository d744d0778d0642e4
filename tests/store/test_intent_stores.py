"""One contract suite for every `IntentStore`: in memory, file, and the daemon's database
on SQLite and PostgreSQL (the contract is in oracle/chain/intents.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from oracle.chain.intents import (
    Attempt,
    FileIntentStore,
    InMemoryIntentStore,
    Intent,
    IntentState,
    IntentStore,
)
from oracle.errors import SubjectsHeld
from oracle.store.engine import make_engine
from oracle.store.intents import DatabaseIntentStore
from oracle.store.migrate import upgrade
from oracle.store.repository import Store

from ..conftest import empty_postgres_database

SENDER = "0x00000000000000000000000000000000000000Aa"


@contextmanager
def _factory(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], IntentStore]]:
    if kind == "memory":
        yield InMemoryIntentStore
        return
    if kind == "file":
        yield lambda: FileIntentStore(tmp_path / "intents.json")
        return
    url = (
        f"sqlite:///{tmp_path / 'oracle.db'}"
        if kind == "sqlite"
        else empty_postgres_database(request)
    )
    engine = make_engine(url)
    upgrade(engine)
    yield lambda: DatabaseIntentStore(Store(engine))
    engine.dispose()


@pytest.fixture(params=["memory", "file", "sqlite", "postgresql"])
def make_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], IntentStore]]:
    with _factory(request.param, request, tmp_path) as factory:
        yield factory


@pytest.fixture(params=["file", "sqlite", "postgresql"])
def make_durable_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], IntentStore]]:
    with _factory(request.param, request, tmp_path) as factory:
        yield factory


def intent(
    key: str, nonce: int | None, state: IntentState = IntentState.SIGNED, chain_id: int = 1
) -> Intent:
    return Intent(
        key=key,
        chain_id=chain_id,
        sender=SENDER,
        to="0x0000000000000000000000000000000000000001",
        data="0xabcdef",
        nonce=nonce,
        state=state,
        attempts=(
            Attempt(
                tx_hash=f"0x{key}", raw_tx="0x02f8", max_fee_per_gas=2, max_priority_fee_per_gas=1
            ),
        ),
        created_at=1.0,
        updated_at=2.0,
    )


def test_put_then_get_is_equal_field_for_field(make_store: Callable[[], IntentStore]) -> None:
    store = make_store()
    original = intent("a", 3)
    asyncio.run(store.put(original))
    assert asyncio.run(store.get("a")) == original
    assert asyncio.run(store.get("missing")) is None


def test_put_replaces(make_store: Callable[[], IntentStore]) -> None:
    store = make_store()
    asyncio.run(store.put(intent("a", 3)))
    confirmed = intent("a", 3, IntentState.CONFIRMED)
    asyncio.run(store.put(confirmed))
    assert asyncio.run(store.get("a")) == confirmed


def test_unfinished_by_chain_and_sender_ordered_by_nonce(
    make_store: Callable[[], IntentStore],
) -> None:
    store = make_store()
    for item in (
        intent("late", 9),
        intent("no-nonce", None),
        intent("early", 2, IntentState.BROADCAST),
        intent("done", 1, IntentState.CONFIRMED),
        intent("other-chain", 0, chain_id=5),
    ):
        asyncio.run(store.put(item))
    keys = [i.key for i in asyncio.run(store.unfinished(1, SENDER.lower()))]
    assert keys == ["early", "late", "no-nonce"]


def test_durable_across_instances(make_durable_store: Callable[[], IntentStore]) -> None:
    asyncio.run(make_durable_store().put(intent("a", 1)))
    assert asyncio.run(make_durable_store().get("a")) == intent("a", 1)


def claiming(key: str, *subjects: str, state: IntentState = IntentState.SIGNED) -> Intent:
    return intent(key, None, state).model_copy(update={"subjects": subjects})


def test_a_live_intent_holds_its_subjects_against_every_other_key(
    make_store: Callable[[], IntentStore],
) -> None:
    store = make_store()
    asyncio.run(store.put(claiming("first", "q1", "q2")))
    with pytest.raises(SubjectsHeld) as raised:
        asyncio.run(store.put(claiming("second", "q2", "q3")))
    assert raised.value.holders == {"q2": "first"}
    assert asyncio.run(store.get("second")) is None, "nothing of a refused intent is stored"
    assert asyncio.run(store.holders(["q3"])) == {}
    holders = asyncio.run(store.holders(["q1", "q2", "q3"]))
    assert {s: i.key for s, i in holders.items()} == {"q1": "first", "q2": "first"}
    # Its own later states keep them, confirmed included.
    asyncio.run(store.put(claiming("first", "q1", "q2", state=IntentState.BROADCAST)))
    asyncio.run(store.put(claiming("first", "q1", "q2", state=IntentState.CONFIRMED)))
    with pytest.raises(SubjectsHeld):
        asyncio.run(store.put(claiming("second", "q2")))


@pytest.mark.parametrize("ending", [IntentState.REVERTED, IntentState.SKIPPED, IntentState.FAILED])
def test_an_intent_that_will_never_be_mined_lets_its_subjects_go(
    make_store: Callable[[], IntentStore], ending: IntentState
) -> None:
    store = make_store()
    asyncio.run(store.put(claiming("first", "q1")))
    asyncio.run(store.put(claiming("first", "q1", state=ending)))
    assert asyncio.run(store.holders(["q1"])) == {}
    asyncio.run(store.put(claiming("second", "q1")))
    assert asyncio.run(store.holders(["q1"]))["q1"].key == "second"


def test_subjects_are_held_across_instances(
    make_durable_store: Callable[[], IntentStore],
) -> None:
    asyncio.run(make_durable_store().put(claiming("first", "q1")))
    with pytest.raises(SubjectsHeld):
        asyncio.run(make_durable_store().put(claiming("second", "q1")))


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_stores_racing_for_a_subject_record_one_intent(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two replicas (two engines, so two connection pools) put intents on the same
    subjects at the same moment: for each subject exactly one is recorded."""
    url = (
        f"sqlite:///{tmp_path / 'race.db'}"
        if kind == "sqlite"
        else empty_postgres_database(request)
    )
    engines = [make_engine(url) for _ in range(2)]
    upgrade(engines[0])
    stores = [DatabaseIntentStore(Store(engine)) for engine in engines]
    start = threading.Barrier(2)
    won: list[list[str]] = [[], []]

    def replica(index: int) -> None:
        start.wait()
        for n in range(40):
            try:
                stores[index]._put(claiming(f"r{index}-{n}", f"q{n}"))
                won[index].append(f"q{n}")
            except SubjectsHeld:
                pass

    threads = [threading.Thread(target=replica, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for engine in engines:
        engine.dispose()
    assert sorted(won[0] + won[1], key=lambda s: int(s[1:])) == [f"q{n}" for n in range(40)]
