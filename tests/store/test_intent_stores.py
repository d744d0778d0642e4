"""One contract suite for every `IntentStore`: in memory, file, and the daemon's database
on SQLite and PostgreSQL (the contract is in oracle/chain/intents.py)."""

from __future__ import annotations

import asyncio
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
