"""`oracle run` checks its whole setup before it schedules anything.

A bad setup is refused at start (`run` and `run --once` alike): exit 2 and one line that
names the configuration key, and the `ORACLE__...` variable when the value came from the
environment, never a secret. A fault that appears later is retried with back-off and
shows in `/readyz` and the metrics, without busy loops or tracebacks on SIGTERM.
"""

from __future__ import annotations

import asyncio
import gc
import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from eth_account import Account
from pydantic import SecretStr

from oracle.app import open_store
from oracle.chain.contracts import ORACLE, Deployment
from oracle.chain.keys import create_keystore
from oracle.chain.settings import ChainSettings, NamedChain, RpcSettings, SignerSettings
from oracle.config import Settings
from oracle.daemon.chain_context import ChainContext
from oracle.devchain import DEV_ADDRESSES, DEV_KEYS, free_port
from oracle.errors import SourceError
from oracle.testing import consensus_document, result_dict
from oracle.venues.own.settings import ChainSourceConfig
from oracle.venues.own.venue import ChainVenue
from oracle.venues.own.wiring import ChainWiring

from ..anvil import Anvil, AnvilFactory
from ..commands import one_error_line, quiet_venue, run_oracle
from ..conftest import empty_postgres_database
from ..proxy import TcpProxy
from .chain_world import build_world, daemon_config

PASSWORD = "correct horse battery staple"
WRONG_PASSWORD = "not-the-password-7d1f"


def replay_config(tmp_path: Path, **sections: Any) -> Path:
    """A daemon with one replay agent on SQLite in `tmp_path`; `sections` replace sections."""
    replays = tmp_path / "replays"
    replays.mkdir(exist_ok=True)
    document = consensus_document([result_dict("a", "YES", 0.9)], market_id="m")
    (replays / "m.json").write_text(json.dumps(document))
    config: dict[str, Any] = {
        "database": {"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        "daemon": {"proofs_dir": str(tmp_path / "proofs"), "drain_timeout": 5},
        "metrics": {"port": free_port()},
        "agents": [{"name": "a", "kind": "replay", "directory": str(replays)}],
        "market_sources": [quiet_venue()],
        "log": {"format": "json"},
        **sections,
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def edit(config: Path, change: Any) -> Path:
    data = yaml.safe_load(config.read_text())
    change(data)
    config.write_text(yaml.safe_dump(data))
    return config


def run(config: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`oracle run` with `args`: it must refuse to start; the error line."""
    return one_error_line(run_oracle("run", "--config", str(config), *args, env=env, timeout=90))


def fake_deployment(tmp_path: Path, chain_id: int = 31337) -> Path:
    path = tmp_path / "deployment.json"
    Deployment(
        chain_id=chain_id,
        block_number=0,
        deployer=DEV_ADDRESSES[0],
        contracts={ORACLE: "0x5FbDB2315678afecb367f032d93F642f64180aa3"},
    ).save(path)
    return path


# -- chain sources ----------------------------------------------------------------------------


def test_a_node_on_another_chain_is_refused(anvil: Anvil, tmp_path: Path) -> None:
    world = build_world(anvil, tmp_path, 1)
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    expected = f"the RPC node {anvil.url} serves chain id 31337"

    edit(config, lambda c: c["chain"]["rpc"].update(chain_id=5))
    assert run(config) == f"chain.rpc.chain_id: is 5, but {expected}"
    assert run(config, "--once") == f"chain.rpc.chain_id: is 5, but {expected}"

    edit(config, lambda c: c["chain"]["rpc"].pop("chain_id"))
    line = run(config, "--once", env={"ORACLE__CHAIN__RPC__CHAIN_ID": "5"})
    assert line == f"chain.rpc.chain_id (ORACLE__CHAIN__RPC__CHAIN_ID): is 5, but {expected}"

    other_chain = fake_deployment(tmp_path / "elsewhere", chain_id=5)
    edit(config, lambda c: c["chain"].update(deployment_file=str(other_chain)))
    assert run(config, "--once") == (
        f"chain.deployment_file: {other_chain} is a deployment on chain 5, but the RPC nodes "
        "serve chain id 31337"
    )


def test_a_deployment_without_code_on_the_node_is_refused(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    world = build_world(anvil_factory(), tmp_path, 1)
    fresh = anvil_factory()  # the same chain id, but nothing deployed
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    edit(config, lambda c: c["chain"]["rpc"].update(urls=[fresh.url]))
    assert run(config, "--once") == (
        f"chain.deployment_file: {world.deployment_file}: no contract at the AgentOracle "
        f"address {world.oracle} on chain 31337 (deployed on another node, or the chain was reset)"
    )


def test_a_wrong_keystore_password_is_refused_and_never_shown(anvil: Anvil, tmp_path: Path) -> None:
    world = build_world(anvil, tmp_path, 1)
    keystore = tmp_path / "keystore.json"
    create_keystore(keystore, SecretStr(PASSWORD), iterations=2)
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    signer = {"type": "keystore", "keystore": str(keystore), "password_env": "TEST_KEY_PASSWORD"}
    edit(config, lambda c: c["chain"].update(signer=signer))
    expected = (
        f"chain.signer.password_env: $TEST_KEY_PASSWORD does not unlock the keystore "
        f"{keystore} (wrong password, or a damaged keystore)"
    )
    for args in ((), ("--once",)):
        started = time.monotonic()
        refused = run_oracle(
            "run", "--config", str(config), *args, env={"TEST_KEY_PASSWORD": WRONG_PASSWORD}
        )
        assert one_error_line(refused) == expected
        assert time.monotonic() - started < 30  # no retry loop
        assert WRONG_PASSWORD not in refused.stderr + refused.stdout
        assert PASSWORD not in refused.stderr + refused.stdout

    password_file = tmp_path / "password"
    password_file.write_text(WRONG_PASSWORD + "\n")
    signer = {"type": "keystore", "keystore": str(keystore), "password_file": str(password_file)}
    edit(config, lambda c: c["chain"].update(signer=signer))
    assert run(config, "--once").startswith(
        f"chain.signer.password_file: {password_file} does not unlock the keystore {keystore}"
    )


def test_an_unreachable_rpc_node_is_named_without_its_credentials(tmp_path: Path) -> None:
    key = "0123456789abcdef0123456789abcdef"
    port = free_port()
    config = replay_config(
        tmp_path,
        market_sources=[{"kind": "chain", "name": "chain"}],
        chain={
            "deployment_file": str(fake_deployment(tmp_path)),
            "rpc": {"urls": [f"http://alice:hunter2@127.0.0.1:{port}/v3/{key}?token=zz9"]},
            "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[0]},
        },
    )
    refused = run_oracle("run", "--config", str(config), "--once")
    line = one_error_line(refused)
    assert line.startswith(
        f"chain.rpc.urls: no RPC node answered: http://***@127.0.0.1:{port}/v3/***?*** "
        "(connection failed"
    ), line
    for secret in ("hunter2", "alice", key, "zz9", DEV_KEYS[0][2:]):
        assert secret not in refused.stderr


# -- database -------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["under-proc", "under-a-file", "a-directory", "read-only"])
def test_an_unusable_sqlite_database_is_refused(tmp_path: Path, where: str) -> None:
    (tmp_path / "file").write_text("not a directory")
    existing = tmp_path / "existing.db"
    if where == "read-only":  # a daemon's database, opened read-only
        env = {"ORACLE__DATABASE__URL": f"sqlite:///{existing}"}
        assert run_oracle("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    path, problem = {
        "under-proc": (
            "/proc/oracle-test/oracle.db",
            "cannot create the directory /proc/oracle-test",
        ),
        "under-a-file": (
            f"{tmp_path}/file/oracle.db",
            f"cannot create the directory {tmp_path}/file",
        ),
        "a-directory": (str(tmp_path), "cannot open"),
        "read-only": (f"file:{existing}?mode=ro&uri=true", "is not writable"),
    }[where]
    config = replay_config(tmp_path, database={"url": f"sqlite:///{path}"})
    line = run(config)
    assert line.startswith(f"database.url: sqlite:///{path.split('?')[0]}"), line
    assert problem in line


def test_an_unreachable_postgresql_names_the_variable_not_the_password(tmp_path: Path) -> None:
    port = free_port()
    url = f"postgresql+psycopg://oracle:hunter2@127.0.0.1:{port}/oracle"
    refused = run_oracle(
        "run", "--config", str(replay_config(tmp_path)), env={"ORACLE__DATABASE__URL": url}
    )
    line = one_error_line(refused)
    assert line.startswith(
        f"database.url (ORACLE__DATABASE__URL): postgresql+psycopg://***@127.0.0.1:{port}/oracle: "
        "cannot connect ("
    ), line
    assert "refused" in line.lower()
    assert "hunter2" not in refused.stderr


def test_a_database_from_a_newer_oracle_is_refused(tmp_path: Path) -> None:
    config = replay_config(tmp_path)
    assert run_oracle("db", "upgrade", "--config", str(config)).returncode == 0
    with sqlite3.connect(tmp_path / "oracle.db") as connection:
        connection.execute("UPDATE alembic_version SET version_num = 'ffffffffffff'")
    assert run(config, "--once") == (
        f"database.url: sqlite:///{tmp_path / 'oracle.db'}: the schema is at revision "
        "ffffffffffff, which this version of oracle does not know (a newer one migrated it)"
    )


# -- agents, proofs, metrics -----------------------------------------------------------------


def test_an_agent_that_cannot_be_built_is_refused_before_the_database_is_made(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-recordings"
    config = replay_config(
        tmp_path, agents=[{"name": "a", "kind": "replay", "directory": str(missing)}]
    )
    assert run(config) == f"agents[0]: replay agent a: {missing} is not a directory"
    assert not (tmp_path / "oracle.db").exists()

    llm = {
        "name": "l",
        "kind": "llm",
        "model": "gpt-4o",
        "api_key_env": "TEST_UNSET_KEY",
        "search": [{"kind": "gdelt"}],
    }
    edit(config, lambda c: c.update(agents=[llm]))
    assert run(config, "--once") == (
        "agents[l].api_key_env: environment variable TEST_UNSET_KEY is not set"
    )
    assert not (tmp_path / "oracle.db").exists()


def test_a_proofs_directory_that_cannot_be_made_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    config = replay_config(tmp_path, daemon={"proofs_dir": str(tmp_path / "file" / "proofs")})
    assert run(config, "--once").startswith(
        f"daemon.proofs_dir: cannot create the directory {tmp_path / 'file' / 'proofs'}"
    )


def test_a_busy_metrics_port_is_refused(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        config = replay_config(tmp_path, metrics={"port": port})
        assert run(config) == f"metrics.port: 127.0.0.1:{port} is already in use"
        # --once serves no metrics, so it does not need the port.
        once = run_oracle("run", "--config", str(config), "--once")
        assert once.returncode == 0, once.stderr


# -- faults after the start ------------------------------------------------------------------


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def wait_until(what: str, check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = check()
        except (urllib.error.URLError, ConnectionError):
            result = None
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "oracle", "run", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )


def stop(process: subprocess.Popen[bytes], log: Path) -> str:
    """SIGTERM; it must exit 0 without a traceback or an unclosed connection. The log."""
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0, log.read_text()[-3000:]
    text = log.read_text()
    for bad in ("Traceback", "CancelledError", "Unclosed", "Task was destroyed"):
        assert bad not in text, text[-3000:]
    return text


def test_an_rpc_outage_after_the_start_shows_and_does_not_spin(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = build_world(anvil, tmp_path, 1)
    port = free_port()
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    edit(config, lambda c: c.update(metrics={"port": port}))
    log = tmp_path / "daemon.log"
    process = start(config, log)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until("readiness", lambda: get(f"{base}/readyz")[0] == 200)
        assert 'oracle_source_up{source="chain"} 1.0' in get(f"{base}/metrics")[1]
        wait_until("the answer", world.proposals)
        anvil.stop(signal.SIGKILL)
        _, body = wait_until(
            "the outage in /readyz", lambda: (r := get(f"{base}/readyz"))[0] == 503 and r
        )
        problems = json.loads(body)["problems"]
        assert any(p.startswith("source chain: no RPC node answers") for p in problems), body
        assert 'oracle_source_up{source="chain"} 0.0' in get(f"{base}/metrics")[1]
        used = cpu_seconds(process.pid)
        time.sleep(5)
        assert cpu_seconds(process.pid) - used < 1.5  # waiting, not spinning
        stop(process, log)  # a poll waiting for a node is interrupted quietly
    finally:
        if process.poll() is None:
            process.kill()
    downs = [e for e in events(log) if e.get("event") == "rpc.node_down"]
    assert len(downs) < 15, len(downs)  # backing off from 0.2 s, doubling


def test_a_database_outage_after_the_start_backs_off_and_recovers(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = empty_postgres_database(request)
    database = url.rsplit("/", 1)[1]
    with TcpProxy("127.0.0.1", 5432) as proxy:
        port = free_port()
        config = replay_config(
            tmp_path,
            database={"url": f"postgresql+psycopg://postgres@127.0.0.1:{proxy.port}/{database}"},
            daemon={"proofs_dir": str(tmp_path / "proofs"), "dispatch_interval": 0.2},
            metrics={"port": port},
        )
        log = tmp_path / "daemon.log"
        process = start(config, log)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until("readiness", lambda: get(f"{base}/readyz")[0] == 200)
            proxy.stop()
            _status, body = wait_until(
                "the outage in /readyz", lambda: (r := get(f"{base}/readyz"))[0] == 503 and r
            )
            assert any(p.startswith("database:") for p in json.loads(body)["problems"]), body
            wait_until(
                "the failing job in the metrics",
                lambda: 'oracle_job_failing{name="dispatch"} 1.0' in get(f"{base}/metrics")[1],
            )
            time.sleep(6)
            failed = [
                e for e in events(log) if e.get("event") == "job.failed" and e["job"] == "dispatch"
            ]
            assert 2 <= len(failed) <= 8, len(failed)  # 0.2 s apart would be 30
            proxy.start()
            wait_until("readiness again", lambda: get(f"{base}/readyz")[0] == 200)
            wait_until(
                "the job's recovery",
                lambda: 'oracle_job_failing{name="dispatch"} 0.0' in get(f"{base}/metrics")[1],
            )
            assert any(e.get("event") == "job.recovered" for e in events(log))
            stop(process, log)
        finally:
            if process.poll() is None:
                process.kill()


# -- a venue started lazily (in-process use, without the start-up checks) ------------------


def _venue(tmp_path: Path, chain: ChainSettings) -> ChainVenue:
    settings = Settings(database={"url": f"sqlite:///{tmp_path / 'oracle.db'}"})
    config = ChainSourceConfig(kind="chain")
    context = ChainContext(NamedChain(**dict(chain)), open_store(settings))
    return ChainVenue(config, ChainWiring(config, context))


async def _poll_three_times(venue: ChainVenue, error: str) -> list[str]:
    """Poll thrice (each fails with `error`), close; what the loop saw left unclosed."""
    problems: list[str] = []
    asyncio.get_running_loop().set_exception_handler(
        lambda _, context: problems.append(context["message"])
    )

    async def deliver(_: object) -> None:
        raise AssertionError("nothing to deliver")

    for _ in range(3):
        with pytest.raises(SourceError, match=error):
            await venue.poll(deliver)
    await venue.aclose()
    gc.collect()
    await asyncio.sleep(0)
    return problems


def test_a_lazily_started_venue_unlocks_the_keystore_once(
    anvil: Anvil, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = build_world(anvil, tmp_path, 1)
    keystore = tmp_path / "keystore.json"
    create_keystore(keystore, SecretStr(PASSWORD), iterations=2)
    monkeypatch.setenv("TEST_KEY_PASSWORD", WRONG_PASSWORD)
    decrypts = []
    decrypt = Account.decrypt
    monkeypatch.setattr(Account, "decrypt", lambda *a: decrypts.append(1) or decrypt(*a))
    chain = ChainSettings(
        deployment_file=str(world.deployment_file),
        rpc=RpcSettings(urls=(SecretStr(anvil.url),)),
        signer=SignerSettings(
            type="keystore", keystore=str(keystore), password_env="TEST_KEY_PASSWORD"
        ),
    )
    venue = _venue(tmp_path, chain)
    assert asyncio.run(_poll_three_times(venue, "does not unlock the keystore")) == []
    assert len(decrypts) == 1  # a wrong password stays wrong: no scrypt per poll


def test_a_lazily_started_venue_on_the_wrong_chain_leaves_no_connection_open(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = build_world(anvil, tmp_path, 1)
    chain = ChainSettings(
        deployment_file=str(world.deployment_file),
        rpc=RpcSettings(urls=(SecretStr(anvil.url),), chain_id=5),
        signer=SignerSettings(type="dev_private_key", dev_private_key=SecretStr(DEV_KEYS[0])),
    )
    venue = _venue(tmp_path, chain)
    assert asyncio.run(_poll_three_times(venue, "serves chain id 31337")) == []
