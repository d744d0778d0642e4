"""Transactions across restarts and replicas: a proposal that was sent (or only signed)
when its process died goes into no second transaction, and every market records the
transaction that actually carried its proposal."""

from __future__ import annotations

import json
import signal
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from oracle.app import open_store
from oracle.config import load_settings
from oracle.store.tables import TxIntentRow

from ..anvil import DEV_ADDRESSES, Anvil
from ..conftest import empty_postgres_database
from .chain_world import (
    REPORTER_SLOTS,
    World,
    ask_questions,
    build_world,
    daemon_config,
    start_daemon,
)
from .test_crash import assert_exactly_once, wait_until_all_answered


def pending_hashes(anvil: Anvil, sender: str) -> list[str]:
    """The transactions of `sender` waiting in anvil's pool."""
    content = anvil.rpc("txpool_content")
    by_sender: dict[str, Any] = {}
    for section in ("pending", "queued"):
        for address, txs in content.get(section, {}).items():
            if address.lower() == sender.lower():
                by_sender.update(txs)
    return [tx["hash"] for tx in by_sender.values()]


def wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def unfinished_intents(config: Path) -> list[str]:
    store = open_store(load_settings(config))
    try:
        with store.reading() as session:
            rows = session.exec(select(TxIntentRow).where(col(TxIntentRow.final).is_(False)))
            return [row.key for row in rows]
    finally:
        store.engine.dispose()


def assert_references_are_the_carriers(world: World, config: Path) -> None:
    """Each market's recorded reference is the transaction that carried its proposal."""
    carriers = world.proposal_transactions()
    store = open_store(load_settings(config))
    try:
        references = {m.external_id: m.submission.get("reference") for m in store.markets()}
    finally:
        store.engine.dispose()
    assert references == carriers


def test_restart_after_a_dropped_batch_proposes_each_question_once(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = build_world(anvil, tmp_path, questions=7)
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    reporter = DEV_ADDRESSES[REPORTER_SLOTS[0]]
    log = tmp_path / "daemon.log"
    anvil.rpc("evm_setAutomine", False)
    first = start_daemon(config, log)
    try:
        # Two batches (5 + 2 questions) broadcast, neither mined: kill the daemon.
        wait_for(lambda: len(pending_hashes(anvil, reporter)) == 2, 60, "two batches sent")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    for tx_hash in pending_hashes(anvil, reporter):
        anvil.rpc("anvil_dropTransaction", tx_hash)  # gone from the mempool
    assert pending_hashes(anvil, reporter) == []
    anvil.rpc("evm_setAutomine", True)
    ask_questions(world, 3)
    anvil.rpc("evm_setAutomine", False)
    second = start_daemon(config, log)
    try:
        # The restarted daemon sends what it means to send; nothing is mined meanwhile,
        # so a second proposal of a question would revert once mined.
        time.sleep(4)
        anvil.rpc("evm_setIntervalMining", 1)
        states = wait_until_all_answered(world, config, timeout=90)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    assert second.returncode == 0, log.read_text()[-3000:]
    assert_exactly_once(world, config, states)
    assert_references_are_the_carriers(world, config)


class HoldingProxy(ThreadingHTTPServer):
    """A JSON-RPC proxy in front of anvil that never passes `eth_sendRawTransaction` on:
    a replica behind it signs and records its transactions but cannot send them."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.held: list[str] = []
        self.release = threading.Event()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HoldingProxy

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        document = json.loads(body)
        calls = document if isinstance(document, list) else [document]
        if any(c.get("method") == "eth_sendRawTransaction" for c in calls):
            self.server.held.extend(str(c["params"][0]) for c in calls)
            self.server.release.wait(60)  # longer than the client waits
            self.close_connection = True
            return
        request = urllib.request.Request(
            self.server.upstream, body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = response.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def holding_proxy(upstream: str) -> Iterator[HoldingProxy]:
    proxy = HoldingProxy(upstream)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.release.set()
        proxy.shutdown()
        proxy.server_close()


def test_a_replica_killed_holding_a_signed_batch_never_duplicates_the_other(
    anvil: Anvil, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    world = build_world(anvil, tmp_path, questions=4, reporters=2)
    database_url = empty_postgres_database(request)
    log = tmp_path / "daemons.log"
    direct = [
        daemon_config(world, tmp_path, database_url, reporter=i, replica_id=f"replica-{i}")
        for i in range(2)
    ]
    with holding_proxy(anvil.url) as proxy:
        held_config = daemon_config(
            world,
            tmp_path,
            database_url,
            reporter=0,
            rpc={"urls": [proxy.url], "request_timeout": 2, "call_deadline": 5},
            replica_id="replica-0",
        )
        first = start_daemon(held_config, log)
        try:
            wait_for(lambda: proxy.held, 60, "replica-0 to sign and try to send its batch")
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
    # More questions, so replica-1's batches differ from replica-0's recorded one. It takes
    # over the markets once replica-0's leases expire; replica-0 comes back later, its
    # signed batch still recorded.
    ask_questions(world, 2)
    second = start_daemon(direct[1], log)
    try:
        time.sleep(8)
        revived = start_daemon(direct[0], log)
        try:
            states = wait_until_all_answered(world, direct[0], timeout=90)
            wait_for(lambda: unfinished_intents(direct[0]) == [], 60, "every intent to end")
        finally:
            revived.send_signal(signal.SIGTERM)
            revived.wait(timeout=30)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    assert [revived.returncode, second.returncode] == [0, 0], log.read_text()[-3000:]
    assert_exactly_once(world, direct[0], states)
    assert_references_are_the_carriers(world, direct[0])


def test_a_replacement_polls_at_once_after_a_graceful_stop(anvil: Anvil, tmp_path: Path) -> None:
    """SIGTERM frees the stopping replica's singleton jobs: its replacement does not wait
    for their leases (3 x the watch interval: 45 s here) to expire before it polls."""
    world = build_world(anvil, tmp_path, questions=1, reporters=2)
    database = f"sqlite:///{tmp_path / 'oracle.db'}"
    slow_watch = {"watch_interval": 15}
    configs = [
        daemon_config(world, tmp_path, database, reporter=i, replica_id=f"r{i}", **slow_watch)
        for i in range(2)
    ]
    log = tmp_path / "daemon.log"
    first = start_daemon(configs[0], log)
    try:
        wait_until_all_answered(world, configs[0], timeout=60)
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)
    assert first.returncode == 0, log.read_text()[-3000:]
    [later] = ask_questions(world, 1)
    stopped_at = time.monotonic()
    second = start_daemon(configs[1], log)
    try:
        states = wait_until_all_answered(world, configs[1], timeout=15)
        assert states.get(later) is not None, "the replacement polled within 15 s"
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    assert time.monotonic() - stopped_at < 20
