"""RpcPool against real anvil nodes: chain id check, failover, lag, redaction."""

from __future__ import annotations

import asyncio
import logging

import pytest

from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings
from oracle.core.urls import redact_url
from oracle.errors import ChainIdMismatch, RpcUnavailable
from tests.anvil import Anvil, AnvilFactory, dead_url

FAST = RpcSettings(
    request_timeout=2,
    retry_backoff=0.2,
    retry_backoff_max=1,
    call_deadline=3,
    health_check_interval=0.1,
)


def test_start_checks_chain_id_and_serves_calls(anvil: Anvil) -> None:
    async def run() -> int:
        async with RpcPool([anvil.url], FAST) as pool:
            assert pool.chain_id == 31337
            await pool.request("anvil_mine", [hex(3)])
            return await pool.call("block", lambda w3: w3.eth.block_number)

    assert asyncio.run(run()) == 3
    assert anvil.block_number() == 3


def test_wrong_chain_id_is_an_error_naming_the_node(anvil: Anvil) -> None:
    async def run() -> None:
        pool = RpcPool([anvil.url], FAST, chain_id=1)
        try:
            await pool.start()
        finally:
            await pool.close()

    with pytest.raises(ChainIdMismatch, match=rf"127\.0\.0\.1:{anvil.port}: serves chain id 31337"):
        asyncio.run(run())
    assert anvil.block_number() == 0


def test_one_dead_node_is_skipped(anvil: Anvil, caplog: pytest.LogCaptureFixture) -> None:
    dead = dead_url()

    async def run() -> None:
        async with RpcPool([dead, anvil.url], FAST) as pool:
            for _ in range(3):
                await pool.request("evm_mine")
            first, second = pool.status()
            assert not first.up
            assert "connection failed" in first.last_error
            assert second.up

    with caplog.at_level(logging.INFO, logger="oracle.chain"):
        asyncio.run(run())
    down = [r for r in caplog.records if getattr(r, "event", None) == "rpc.node_down"]
    assert down
    assert all(r.__dict__["fields"]["node"] == dead for r in down)
    assert anvil.block_number() == 3


def test_all_nodes_dead_fails_after_the_deadline() -> None:
    async def run() -> None:
        pool = RpcPool([dead_url(), dead_url()], FAST)
        try:
            await pool.start()
        finally:
            await pool.close()

    with pytest.raises(RpcUnavailable, match="no RPC node answered"):
        asyncio.run(run())


def test_node_dying_later_fails_over_and_recovers(anvil_factory: AnvilFactory) -> None:
    first, second = anvil_factory(), anvil_factory()

    async def run() -> list[int]:
        async with RpcPool([first.url, second.url], FAST) as pool:
            await pool.request("anvil_mine", [hex(2)])  # goes to the first node
            first.stop()
            await pool.request("anvil_mine", [hex(5)])  # fails over to the second
            return [s.failures for s in pool.status()]

    failures = asyncio.run(run())
    assert failures[0] >= 1
    assert second.block_number() == 5


def test_lagging_node_leaves_rotation(anvil_factory: AnvilFactory) -> None:
    behind, ahead = anvil_factory(), anvil_factory()
    ahead.mine(20)

    async def run() -> int:
        settings = FAST.model_copy(update={"max_block_lag": 5})
        async with RpcPool([behind.url, ahead.url], settings) as pool:
            await asyncio.sleep(0.15)
            height = await pool.call("block", lambda w3: w3.eth.block_number)
            status = pool.status()
            assert status[0].lagging
            assert not status[1].lagging
            await pool.request("evm_mine")
            return height

    assert asyncio.run(run()) == 20
    assert ahead.block_number() == 21
    assert behind.block_number() == 0


def test_credentials_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    port = dead_url().rsplit(":", 1)[1]
    key = "0123456789abcdef0123456789abcdef"
    url = f"http://alice:hunter2@127.0.0.1:{port}/v3/{key}?token=zz9"

    async def run() -> None:
        pool = RpcPool([url], FAST)
        try:
            assert "hunter2" not in repr(pool)
            await pool.start()
        finally:
            await pool.close()

    with caplog.at_level(logging.DEBUG), pytest.raises(RpcUnavailable) as caught:
        asyncio.run(run())
    shown = str(caught.value) + repr(caught.value) + caplog.text
    for secret in ("hunter2", "alice", key, "zz9"):
        assert secret not in shown
    assert redact_url(url) == f"http://***@127.0.0.1:{port}/v3/***?***"
    assert redact_url(url) in str(caught.value)
