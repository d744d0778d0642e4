"""Pure helpers: revert decoding, URL redaction, signature checks, batching, intents."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from eth_abi.abi import encode
from eth_utils.abi import function_signature_to_4byte_selector
from hypothesis import given
from hypothesis import strategies as st

from oracle.chain.batching import Batcher
from oracle.chain.eip712 import SECP256K1_HALF_ORDER, check_signature
from oracle.chain.intents import (
    Attempt,
    FileIntentStore,
    Inclusion,
    InMemoryIntentStore,
    Intent,
    IntentState,
    IntentStore,
)
from oracle.chain.revert import ErrorDecoder
from oracle.core.urls import redact_url
from oracle.errors import ChainError

ABI: list[dict[str, Any]] = [
    {
        "type": "error",
        "name": "Bad",
        "inputs": [{"name": "who", "type": "address"}, {"name": "n", "type": "uint256"}],
    },
    {
        "type": "error",
        "name": "Nested",
        "inputs": [
            {
                "name": "p",
                "type": "tuple[]",
                "components": [
                    {"name": "id", "type": "bytes32"},
                    {"name": "o", "type": "uint16"},
                ],
            }
        ],
    },
    {"type": "error", "name": "Bare", "inputs": []},
    {"type": "function", "name": "ignored", "inputs": []},
]


def _data(signature: str, types: list[str], values: list[Any]) -> bytes:
    return function_signature_to_4byte_selector(signature) + encode(types, values)


@given(st.integers(0, 2**256 - 1), st.binary(min_size=20, max_size=20))
def test_custom_errors_round_trip(n: int, who: bytes) -> None:
    decoder = ErrorDecoder(ABI)
    address = "0x" + who.hex()
    decoded = decoder.decode(_data("Bad(address,uint256)", ["address", "uint256"], [address, n]))
    assert decoded.name == "Bad"
    assert decoded.args == (("who", address), ("n", n))
    assert str(decoded) == f"Bad(who={address}, n={n})"


@given(st.lists(st.tuples(st.binary(min_size=32, max_size=32), st.integers(0, 65535)), max_size=4))
def test_tuple_array_errors(items: list[tuple[bytes, int]]) -> None:
    decoded = ErrorDecoder(ABI).decode(
        _data("Nested((bytes32,uint16)[])", ["(bytes32,uint16)[]"], [items])
    )
    assert decoded.name == "Nested"
    assert decoded.args == (("p", tuple(items)),)


def test_builtin_and_unknown_errors() -> None:
    decoder = ErrorDecoder(ABI)
    assert decoder.names == ["Bad", "Bare", "Nested"]
    assert str(decoder.decode(_data("Error(string)", ["string"], ["nope"]))) == "Error('nope')"
    panic = decoder.decode(_data("Panic(uint256)", ["uint256"], [0x11]))
    assert panic.name == "Panic"
    assert "overflow" in str(panic)
    assert decoder.decode(_data("Bare()", [], [])).name == "Bare"
    assert decoder.decode(b"").name == "Empty"
    assert decoder.decode("0xdeadbeef").name == "Unknown"
    assert decoder.decode(_data("Bad(address,uint256)", [], [])).name == "Unknown"  # truncated


def test_well_known_refusals_are_named_without_the_venues_abi() -> None:
    decoder = ErrorDecoder(ABI)
    assert decoder.decode(_data("ProposerNotWhitelisted()", [], [])).name == (
        "ProposerNotWhitelisted"
    )
    who = "0x" + "ab" * 20
    denied = decoder.decode(
        _data(
            "AccessControlUnauthorizedAccount(address,bytes32)",
            ["address", "bytes32"],
            [who, b"\x01" * 32],
        )
    )
    assert denied.name == "AccessControlUnauthorizedAccount"
    assert denied.args[0] == ("account", who)
    # `names` lists the ABIs' own errors only.
    assert decoder.names == ["Bad", "Bare", "Nested"]
    assert ErrorDecoder().names == []


secrets_text = st.from_regex(r"[A-Za-z0-9_-]{16,40}", fullmatch=True)


@given(st.from_regex(r"[a-z]{3,10}", fullmatch=True), secrets_text, secrets_text)
def test_redacted_urls_keep_no_credentials(user: str, password: str, key: str) -> None:
    url = f"https://{user}:{password}@rpc.example.org:8545/v3/{key}?apikey={key}"
    shown = redact_url(url)
    assert shown.startswith("https://***@rpc.example.org:8545/")
    assert password not in shown
    assert key not in shown
    assert user not in shown.split("@")[0]


def test_redact_keeps_plain_urls() -> None:
    assert redact_url("http://127.0.0.1:8545") == "http://127.0.0.1:8545"
    assert redact_url("https://node.example/rpc") == "https://node.example/rpc"
    assert redact_url("not a url") == "***"


def test_signature_checks() -> None:
    good = b"\x01" * 32 + (5).to_bytes(32, "big") + bytes([27])
    check_signature(good)
    with pytest.raises(ValueError, match="65 bytes"):
        check_signature(good[:64])
    with pytest.raises(ValueError, match="v must be"):
        check_signature(good[:64] + bytes([1]))
    high = b"\x01" * 32 + (SECP256K1_HALF_ORDER + 1).to_bytes(32, "big") + bytes([28])
    with pytest.raises(ValueError, match="lower half"):
        check_signature(high)


def test_batcher_flushes_by_size_and_by_time() -> None:
    flushed: list[list[int]] = []

    async def flush(items: list[int]) -> int:
        flushed.append(items)
        return len(flushed)

    async def run() -> None:
        batcher: Batcher[int, int] = Batcher(flush, max_size=3, max_wait=0.2)
        loop = asyncio.get_running_loop()
        start = loop.time()
        assert await asyncio.gather(*(batcher.add(i) for i in range(3))) == [1, 1, 1]
        assert loop.time() - start < 0.2
        start = loop.time()
        assert await asyncio.gather(batcher.add(7), batcher.add(8)) == [2, 2]
        assert loop.time() - start >= 0.2
        task = asyncio.create_task(batcher.add(9))
        await asyncio.sleep(0)
        await batcher.drain()
        assert await task == 3

    asyncio.run(run())
    assert flushed == [[0, 1, 2], [7, 8], [9]]


def test_a_bounded_drain_cancels_a_flush_that_does_not_end() -> None:
    # A flush waiting on nodes that are all down must not hold the daemon's stop.
    async def flush(items: list[int]) -> int:
        await asyncio.sleep(30)
        return 0

    async def run() -> None:
        batcher: Batcher[int, int] = Batcher(flush, max_size=10, max_wait=5)
        waiter = asyncio.create_task(batcher.add(1))
        await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        start = loop.time()
        assert await batcher.drain(timeout=0.2) is False
        assert loop.time() - start < 2
        with pytest.raises(asyncio.CancelledError):
            await waiter
        quick: Batcher[int, int] = Batcher(
            lambda items: asyncio.sleep(0, 1), max_size=10, max_wait=5
        )
        done = asyncio.create_task(quick.add(1))
        await asyncio.sleep(0)
        assert await quick.drain(timeout=5) is True
        assert await done == 1

    asyncio.run(run())


def test_batcher_passes_errors_to_every_waiter() -> None:
    async def flush(items: list[int]) -> int:
        raise RuntimeError("node said no")

    async def run() -> None:
        batcher: Batcher[int, int] = Batcher(flush, max_size=2, max_wait=5)
        results = await asyncio.gather(batcher.add(1), batcher.add(2), return_exceptions=True)
        assert all(isinstance(r, RuntimeError) for r in results)

    asyncio.run(run())


# --- the IntentStore contract, checked on every implementation ------------------------------


def _intent(key: str, nonce: int | None, state: IntentState, sender: str = "0xA") -> Intent:
    return Intent(
        key=key,
        chain_id=1,
        sender=sender,
        to="0xB",
        data="0x1234",
        value=5,
        gas_limit=21000,
        nonce=nonce,
        state=state,
        attempts=(
            Attempt(tx_hash="0x01", raw_tx="0x02", max_fee_per_gas=3, max_priority_fee_per_gas=1),
        ),
        inclusion=Inclusion(
            tx_hash="0x01",
            block_number=9,
            block_hash="0x03",
            status=1,
            gas_used=21000,
            effective_gas_price=2,
        ),
        created_at=1.5,
        updated_at=2.5,
    )


async def check_intent_store_contract(store: IntentStore, reopen: Any = None) -> None:
    """What any IntentStore (including the daemon's database one) must do."""
    assert await store.get("missing") is None
    first = _intent("a", 2, IntentState.BROADCAST)
    await store.put(first)
    await store.put(_intent("b", 1, IntentState.SIGNED))
    await store.put(_intent("c", None, IntentState.SKIPPED))
    await store.put(_intent("d", 0, IntentState.CONFIRMED))
    await store.put(_intent("e", 3, IntentState.MINED, sender="0xOther"))
    replaced = first.model_copy(update={"state": IntentState.MINED, "updated_at": 3.0})
    await store.put(replaced)
    for current in (store, reopen() if reopen else store):
        assert await current.get("a") == replaced
        unfinished = await current.unfinished(1, "0xa")
        assert [i.key for i in unfinished] == ["b", "a"]
        assert await current.unfinished(2, "0xA") == []


def test_in_memory_intent_store_contract() -> None:
    asyncio.run(check_intent_store_contract(InMemoryIntentStore()))


def test_file_intent_store_contract_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "intents.json"
    reopen = lambda: FileIntentStore(path)  # noqa: E731
    asyncio.run(check_intent_store_contract(FileIntentStore(path), reopen))


def test_file_intent_store_rejects_garbage(tmp_path: Path) -> None:

    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ChainError, match="cannot be read"):
        FileIntentStore(tmp_path / "bad.json")
