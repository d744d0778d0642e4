"""The daemon end to end on a local chain: throughput, latency, overhead, memory.

Run: .venv/bin/python bench/pipeline.py [--markets 1000] [--rate 1000] [--latency 30]
                                        [--database URL] [--replicas 1]

Runs the real `oracle run` process against a local anvil with 5 `replay` agents that each
take `--latency` seconds per market (30 s: a quick LLM research run), while a requester
(another key) asks `--markets` binary questions on-chain at `--rate` per minute, each due
the moment it is asked. The run ends when every question carries the daemon's proposal.
Reported:

- confirmed per minute: the rate of the daemon's confirmed proposals, from the first to
  the last (with a steady `--rate`, it shows whether the daemon keeps up); and markets per
  minute from the first discovery to the last confirmation (agents' latency included: in
  a burst, the rate at which the daemon drains a backlog);
- due -> on-chain, p50 and p95: from the moment the question is due and on-chain (its
  resolution time, or its block's time if later) to the daemon's proposal confirmed, so
  discovery is included;
- the daemon's own overhead: due -> on-chain minus the slowest agent's research time for
  that market, p50 and p95, and at p95 as a share of the agents' latency;
- the same per stage of the lifecycle (audit log), and the daemon process's peak RSS and
  CPU time (in all, and per market: what bounds throughput on a small machine).

`--replicas 2` (or 3) runs that many `oracle run` processes on one database (PostgreSQL
with `--database`), each signing with its own reporter key, and reports how the
confirmed proposals split between them (the replica that polls finds the markets; each
replica claims its share) besides their combined throughput, CPU and peak RSS.

With a steady `--rate`, one warm-up question is asked first and the stream starts once the
daemon has discovered it (not measured): the daemon's start-up is not overhead. `--rate 0`
asks every question before the daemon starts: a burst, in which the last market
necessarily waits for all the others.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import yaml
from sqlmodel import col, select

from oracle.app import open_store
from oracle.chain.contracts import ORACLE
from oracle.chain.deploy import ask, deploy_contracts
from oracle.chain.intents import InMemoryIntentStore
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager
from oracle.config import load_settings
from oracle.devchain import DEV_ADDRESSES, DEV_KEYS, Anvil, anvil_binary
from oracle.store.repository import Store
from oracle.store.tables import AgentResultRow, AuditRow, MarketRow, ResearchRunRow
from oracle.testing import consensus_document, result_dict

AGENTS = ("alpha", "beta", "gamma", "delta", "epsilon")
STAGES = (
    "discovered",
    "due",
    "research_started",
    "research_finished",
    "consensus_submit",
    "proposal_confirmed",
)
SOURCES_PER_AGENT = 12
REQUESTER = 1  # the dev key that asks; the others are replicas' reporter keys
REPORTERS = (0, 2, 3)


async def _manager(url: str, key: str) -> TxManager:
    pool = RpcPool([url], RpcSettings())
    await pool.start()
    return TxManager(
        pool,
        LocalSigner(key),
        InMemoryIntentStore(),
        TxSettings(confirmations=1, poll_interval=0.05),
    )


async def deploy(anvil: Anvil) -> Any:
    deployer = await _manager(anvil.url, DEV_KEYS[0])
    deployment = await deploy_contracts(
        deployer,
        min_liveness=3600,
        reporters=[DEV_ADDRESSES[slot] for slot in REPORTERS],
        adapter=False,
    )
    await deployer.close()
    await deployer.pool.close()
    return deployment


async def ask_all(anvil: Anvil, oracle: str, texts: list[str], rate: float) -> None:
    """Ask every question, `rate` per minute (0: all at once), each due when asked."""
    requester = await _manager(anvil.url, DEV_KEYS[REQUESTER])
    pending: set[asyncio.Task[Any]] = set()
    started = time.monotonic()
    for index, text in enumerate(texts):
        if rate:
            await asyncio.sleep(max(0.0, started + index * 60 / rate - time.monotonic()))
        while len(pending) >= 100:  # bounded concurrency for the node
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        task = ask(requester, oracle, text=text, earliest_time=int(time.time()), liveness=3600)
        pending.add(asyncio.create_task(task))
    await asyncio.gather(*pending)
    await requester.close()
    await requester.pool.close()


def write_recordings(directory: Path, texts: list[str]) -> None:
    directory.mkdir()
    for index, text in enumerate(texts):
        votes = [
            result_dict(a, "NO" if a == "epsilon" else "YES", 0.8, SOURCES_PER_AGENT)
            for a in AGENTS
        ]
        document = consensus_document(votes, market_id=f"recording-{index}", question=text)
        (directory / f"{index}.json").write_text(json.dumps(document))


def daemon_config(
    work: Path, anvil: Anvil, database_url: str, latency: float, markets: int, *, replica: int
) -> Path:
    config = {
        "database": {"url": database_url},
        "consensus": {"agent_timeout": latency * 3 + 30},
        "sources": {"min_total": 10, "min_categories": 3, "min_official": 1, "min_news": 3},
        "daemon": {
            "proofs_dir": str(work / "proofs"),
            "poll_interval": 0.5,
            "dispatch_interval": 0.2,
            "watch_interval": 30,
            "max_concurrent_markets": markets,
            "replica_id": f"bench-{replica}",
        },
        "metrics": {"enabled": False},
        "log": {"level": "WARNING"},
        "agents": [
            {
                "name": a,
                "kind": "replay",
                "directory": str(work / "replays"),
                "latency_seconds": latency,
            }
            for a in AGENTS
        ],
        "market_sources": [{"kind": "chain", "name": "chain"}],
        "chains": [
            {
                "name": "default",
                "deployment_file": str(work / "deployment.json"),
                "rpc": {"urls": [anvil.url]},
                "signer": {
                    "type": "dev_private_key",
                    "dev_private_key": DEV_KEYS[REPORTERS[replica]],
                },
                "tx": {"confirmations": 1, "poll_interval": 0.1},
                "scanner": {"confirmations": 0, "poll_interval": 0.5, "max_block_range": 5000},
                "submitter": {"batch_max_size": 20, "batch_max_wait": 0.5},
            }
        ],
    }
    path = work / f"config-{replica}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(config: Path, markets: int, anvil: Anvil) -> dict[str, Any]:
    store = open_store(load_settings(config))
    with store.session() as session:
        audit = session.exec(select(AuditRow).where(col(AuditRow.event).in_(STAGES))).all()
        latencies = session.exec(
            select(ResearchRunRow.market_id, AgentResultRow.latency_seconds).join(
                AgentResultRow, col(AgentResultRow.run_id) == col(ResearchRunRow.id)
            )
        ).all()
        submitted = session.exec(
            select(MarketRow)
            .where(col(MarketRow.state) == "submitted")
            .where(col(MarketRow.question).startswith("Bench question"))
        ).all()
    store.engine.dispose()
    at: dict[str, dict[str, float]] = {stage: {} for stage in STAGES}
    confirmed_by: dict[str, str] = {}
    for entry in audit:
        at[entry.event][entry.market_id] = entry.at
        if entry.event == "proposal_confirmed":
            confirmed_by[entry.market_id] = entry.actor
    done = {m.id: at["proposal_confirmed"][m.id] for m in submitted}
    # Due: the question's resolution time has passed and the question is on-chain.
    mined_at = {
        number: int(anvil.block(number)["timestamp"], 16)
        for number in {m.details["block_number"] for m in submitted}
    }
    due = {m.id: max(m.resolve_after, mined_at[m.details["block_number"]]) for m in submitted}
    slowest: dict[str, float] = {}
    for market_id, latency in latencies:
        slowest[market_id] = max(slowest.get(market_id, 0.0), latency)
    pipeline = [done[m] - due[m] for m in done]
    overhead = [done[m] - due[m] - slowest[m] for m in done]
    confirmed = sorted(done.values())
    stages = {
        "on-chain and due -> discovered": {
            "p50_s": round(percentile([at["discovered"][m] - due[m] for m in done], 0.5), 2),
            "p95_s": round(percentile([at["discovered"][m] - due[m] for m in done], 0.95), 2),
        }
    }
    for earlier, later in itertools.pairwise(STAGES):
        gaps = [at[later][m] - at[earlier][m] for m in done]
        name = f"{earlier} -> {later}"
        if earlier == "research_started":
            gaps = [g - slowest[m] for g, m in zip(gaps, done, strict=True)]
            name += " (minus agents)"
        stages[name] = {
            "p50_s": round(percentile(gaps, 0.5), 2),
            "p95_s": round(percentile(gaps, 0.95), 2),
        }
    split: dict[str, int] = {}
    for market_id in done:
        split[confirmed_by[market_id]] = split.get(confirmed_by[market_id], 0) + 1
    return {
        "markets": markets,
        "submitted": len(submitted),
        "confirmed_by_replica": dict(sorted(split.items())),
        "confirmed_per_minute": round(
            (len(confirmed) - 1) / (confirmed[-1] - confirmed[0]) * 60, 1
        ),
        "first_discovered_to_last_confirmed_per_minute": round(
            len(confirmed) / (confirmed[-1] - min(at["discovered"][m] for m in done)) * 60, 1
        ),
        "due_to_onchain_p50_s": round(percentile(pipeline, 0.5), 2),
        "due_to_onchain_p95_s": round(percentile(pipeline, 0.95), 2),
        "agent_latency_p95_s": round(percentile(list(slowest.values()), 0.95), 2),
        "overhead_p50_s": round(percentile(overhead, 0.5), 2),
        "overhead_p95_s": round(percentile(overhead, 0.95), 2),
        "overhead_p95_share_of_agent_latency": round(
            percentile(overhead, 0.95) / statistics.mean(slowest.values()), 3
        ),
        "stages": stages,
    }


def wait_for_submissions(store: Store, count: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if store.count_by_state().get("submitted", 0) >= count:
            return
        time.sleep(1)


def start_daemons(work: Path, configs: list[Path]) -> list[subprocess.Popen[bytes]]:
    """One `oracle run` per replica config, each logging to its own file."""
    profile = os.environ.get("ORACLE_BENCH_PROFILE")  # a file: profile the daemon into it
    python = [sys.executable, "-m", "cProfile", "-o", profile] if profile else [sys.executable]
    return [
        subprocess.Popen(
            [*python, "-m", "oracle", "run", "--config", str(config)],
            stderr=(work / f"daemon-{index}.log").open("wb"),
        )
        for index, config in enumerate(configs)
    ]


@contextmanager
def fresh_database(url: str | None, work: Path) -> Iterator[str]:
    """SQLite in `work` by default; on a PostgreSQL server (the URL names any database
    there), a new empty database for this run, dropped afterwards."""
    if url is None:
        yield f"sqlite:///{work / 'oracle.db'}"
        return
    if not url.startswith("postgresql"):
        yield url
        return
    admin = url.replace("+psycopg", "")
    name = f"oracle_bench_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{url.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markets", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=1000.0, help="questions asked per minute")
    parser.add_argument("--latency", type=float, default=30.0, help="seconds per agent per market")
    parser.add_argument(
        "--database",
        default=None,
        help="SQLAlchemy URL (default: SQLite); on PostgreSQL a fresh database is made",
    )
    parser.add_argument(
        "--replicas", type=int, default=1, choices=range(1, len(REPORTERS) + 1), metavar="N"
    )
    args = parser.parse_args()
    binary = anvil_binary()
    if binary is None:
        sys.exit("anvil not found: run ./scripts/test once (it installs it)")
    work = Path(tempfile.mkdtemp(prefix="oracle-bench-"))
    anvil = Anvil(binary, ["--gas-limit", "100000000"], None)
    anvil.start()
    with ExitStack() as stack:
        stack.callback(anvil.stop, signal.SIGKILL)
        texts = [
            f"Bench question {i}: did the event happen as its rules describe?"
            for i in range(args.markets)
        ]
        warm_up = "Bench warm-up: is the daemon polling yet?"
        deployment = asyncio.run(deploy(anvil))
        deployment.save(work / "deployment.json")
        write_recordings(work / "replays", [warm_up, *texts])
        if args.rate == 0:
            asyncio.run(ask_all(anvil, deployment.address(ORACLE), texts, 0))
        database = stack.enter_context(fresh_database(args.database, work))
        configs = [
            daemon_config(work, anvil, database, args.latency, args.markets, replica=replica)
            for replica in range(args.replicas)
        ]
        config = configs[0]
        daemons = start_daemons(work, configs)
        store = open_store(load_settings(config))
        if args.rate:
            # The steady stream starts once the daemon polls: its start-up is not overhead.
            asyncio.run(ask_all(anvil, deployment.address(ORACLE), [warm_up], 0))
            while not store.count_by_state():
                time.sleep(0.1)
            asyncio.run(ask_all(anvil, deployment.address(ORACLE), texts, args.rate))
        wait_for_submissions(store, args.markets + (1 if args.rate else 0))
        store.engine.dispose()
        for daemon in daemons:
            daemon.send_signal(signal.SIGTERM)
        ended = [os.wait4(daemon.pid, 0) for daemon in daemons]
        figures = measure(config, args.markets, anvil)
        figures["agents"] = len(AGENTS)
        figures["agent_latency_s"] = args.latency
        figures["asked_per_minute"] = args.rate or "all at once"
        figures["database"] = database.split(":", 1)[0]
        figures["replicas"] = args.replicas
        figures["daemon_peak_rss_mb"] = [round(u.ru_maxrss / 1024, 1) for _, _, u in ended]
        cpu_seconds = sum(u.ru_utime + u.ru_stime for _, _, u in ended)
        figures["daemon_cpu_s"] = round(cpu_seconds, 1)
        figures["daemon_cpu_ms_per_market"] = round(cpu_seconds * 1000 / args.markets, 1)
        figures["daemon_exit_status"] = [os.waitstatus_to_exitcode(s) for _, s, _ in ended]
        print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
