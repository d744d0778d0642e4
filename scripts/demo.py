"""The local demo of the oracle daemon (run by scripts/demo after setup).

A local anvil chain, the contracts deployed, sample questions asked on-chain, `replay`
agents answering from the bundled recordings, the daemon deciding, proposing, watching
the challenge windows pass, and sending the contested question to review. Everything
lives under data/demo/; the metrics endpoint and the review console (two demo accounts)
stay live until Ctrl-C (or, with --exit, the demo stops by itself once it has shown
everything).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from oracle.devchain import DEV_KEYS, Anvil, anvil_binary

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "oracle" / "examples"
LIVENESS = 30  # seconds of challenge window, so the demo shows finality quickly


def oracle(config: Path, *args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "oracle", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        sys.exit(f"demo: oracle {' '.join(args)} failed:\n{run.stderr}")
    return run.stdout


@dataclass
class Daemon:
    """The `oracle run` process the demo started, and its log."""

    process: subprocess.Popen[bytes]
    log: Path

    def require_running(self) -> None:
        """Exit with the daemon's last error if it has stopped: waiting on would be for
        nothing."""
        code = self.process.poll()
        if code is not None:
            sys.exit(
                f"demo: the daemon exited with code {code}: {last_error(self.log)} "
                f"(log: {self.log})"
            )


def last_error(log: Path) -> str:
    """The daemon's last error: its `error: ...` line (a refused setup), the last ERROR
    record of its JSON log, or else its last line (a traceback's exception)."""
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("error: "):
            return line
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("level") in ("error", "critical"):
                fields = {k: v for k, v in record.items() if k not in ("ts", "level", "logger")}
                return " ".join(f"{k}={v}" for k, v in fields.items())
    return lines[-1] if lines else "(nothing logged)"


def wait_for(what: str, check: Any, timeout: float, daemon: Daemon) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        daemon.require_running()
        result = check()
        if result:
            return result
        time.sleep(0.5)
    daemon.require_running()
    sys.exit(f"demo: timed out waiting for {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exit", action="store_true", help="stop once everything was shown")
    parser.add_argument("--metrics-port", type=int, default=9464)
    parser.add_argument("--console-port", type=int, default=8480)
    parser.add_argument("--home", type=Path, default=ROOT / "data" / "demo")
    args = parser.parse_args()
    home: Path = args.home
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    binary = anvil_binary()
    if binary is None:
        sys.exit("demo: anvil not found; ./scripts/demo installs it (or install Foundry)")
    chain = Anvil(binary, [], None)
    chain.start()
    daemon: Daemon | None = None
    console: subprocess.Popen[bytes] | None = None
    ending = ""
    try:
        config, asked = prepare(home, chain, args.metrics_port, stays=not args.exit)
        log = home / "daemon.log"
        process = subprocess.Popen(
            [sys.executable, "-m", "oracle", "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=log.open("wb"),
        )
        daemon = Daemon(process, log)
        print(f"4. daemon started with replay agents; log: {log}")
        states = show(home, chain, config, asked, args.metrics_port, daemon=daemon)
        console, token = start_console(home, config, args.console_port, stays=not args.exit)
        where_to_look(home, config, token, args.metrics_port, stays=not args.exit)
        if not args.exit:
            print("\nThe daemon, the console and the chain keep running; Ctrl-C stops them.")
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
        ending = closing(home, states, stayed=not args.exit)
    finally:
        if console is not None and console.poll() is None:
            console.send_signal(signal.SIGTERM)
            console.wait(timeout=60)
        if daemon is not None and daemon.process.poll() is None:
            daemon.process.send_signal(signal.SIGTERM)
            daemon.process.wait(timeout=60)
        chain.stop(signal.SIGKILL)
    print(ending)  # once everything has stopped, as it says


def start_console(
    home: Path, config: Path, port: int, *, stays: bool
) -> tuple[subprocess.Popen[bytes], Path]:
    """The review console over the demo's database, with two demo accounts (a reviewer
    and an approver, for the four-eyes rule) sharing a password written to a file, and
    an API token of the reviewer's for `oracle review decide` (written to a file too)."""
    password_file = home / "console-password"
    password_file.write_text(secrets.token_urlsafe(12) + "\n")
    password_file.chmod(0o600)
    for name, role in (("demo-reviewer", "reviewer"), ("demo-approver", "approver")):
        oracle(config, "console", "user", "add", name, "--role", role,
               "--password-file", str(password_file))  # fmt: skip
    token_file = home / "reviewer-token"
    token_file.touch(mode=0o600)
    token_file.write_text(oracle(config, "console", "token", "create", "demo-reviewer"))
    log = home / "console.log"
    environment = {
        **os.environ,
        "ORACLE__CONSOLE__PORT": str(port),
        "ORACLE__CONSOLE__SECURE_COOKIES": "false",  # plain http on 127.0.0.1 only
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "oracle", "console", "serve", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env=environment,
    )
    address = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{address}healthz", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"demo: the review console did not start: {last_error(log)} ({log})")
            time.sleep(0.2)
    accounts = f"demo-reviewer or demo-approver, password in {password_file}"
    if stays:
        print(f"7. review console: {address}  (sign in as {accounts}; docs/console.md)")
    else:  # it stops with the demo: no address that will not answer
        print(f"7. review console served (accounts {accounts}); it stops with the demo")
    return process, token_file


def prepare(
    home: Path, chain: Anvil, metrics_port: int, *, stays: bool
) -> tuple[Path, dict[str, str]]:
    """Config written, contracts deployed, the example questions asked."""
    config = home / "config.yaml"
    recordings = [json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.json"))]
    agents = sorted({r["agent_id"] for doc in recordings for r in doc["results"]})
    config.write_text(yaml.safe_dump(_config(home, chain.url, agents, metrics_port)))
    print(f"1. local chain: anvil at {chain.url}" if stays else "1. local chain: anvil started")
    deployment = json.loads(oracle(config, "chain", "deploy", "--min-liveness", str(LIVENESS)))
    print(f"2. contracts deployed: AgentOracle at {deployment['contracts']['AgentOracle']}")
    past = str(int(time.time()) - 60)
    asked = {}
    for document in recordings:
        outcomes = document["market"].get("outcomes", ["YES", "NO"])
        question = document["market"]["question"]
        if len(outcomes) > 2:  # a categorical question names its outcomes on its last line
            question += "\nOutcomes: " + " | ".join(outcomes)
        out = oracle(
            config,
            *("chain", "ask", "--question", question, "--resolve-after", past),
            *("--outcomes", str(len(outcomes)), "--liveness", str(LIVENESS)),
        )
        asked[json.loads(out)["question_id"]] = document["market"]["question"]
    print(f"3. {len(asked)} questions asked on-chain")
    return config, asked


def show(
    home: Path, chain: Anvil, config: Path, asked: dict[str, str], port: int, *, daemon: Daemon
) -> dict[str, str]:
    """Wait for the decisions, let the window pass, print what happened and where to look."""
    states = wait_for(
        "the daemon to decide every question", lambda: _decided(config, asked), 90, daemon
    )
    print("5. decisions:")
    for question_id, state in states.items():
        print(f"   {state:<13} {asked[question_id][:70]}")
    chain.rpc("evm_increaseTime", LIVENESS + 5)  # let the challenge window pass
    chain.mine()
    wait_for(
        "an answer to become final", lambda: "final" in _decided(config, asked).values(), 60, daemon
    )
    print(f"6. after the {LIVENESS} s challenge window: {_summary(_decided(config, asked))}")
    for question_id in asked:
        status = json.loads(oracle(config, "chain", "status", question_id))
        print(
            f"   on-chain {status['status']:<9} outcome={status['outcome_name']} "
            f"proof={status['proof_hash']}"
        )
    metrics_url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(metrics_url, timeout=5) as response:
        if b"oracle_markets" not in response.read():
            sys.exit("demo: the metrics endpoint does not serve the daemon's metrics")
    return _decided(config, asked)


def where_to_look(home: Path, config: Path, token: Path, port: int, *, stays: bool) -> None:
    """Where to look, and how to decide a review as the demo's reviewer: only addresses
    that still answer when this is read (none with --exit: everything stops)."""
    print("\nWhere to look:")
    if stays:
        print(
            f"   metrics:  http://127.0.0.1:{port}/metrics  (health: /healthz, readiness: /readyz)"
        )
    print(f"   proofs:   {home / 'proofs'}/<market>/<checksum>.json and .md")
    print(f"   reviews:  .venv/bin/oracle review list --config {config}")
    print(f"   one:      .venv/bin/oracle review show ID --config {config}")
    print(
        f"   decide:   .venv/bin/oracle review decide ID --outcome X --reason WHY "
        f"--token-file {token} --config {config}"
    )
    print("             (as demo-reviewer; an override waits for demo-approver, in the console)")
    print("   verify:   .venv/bin/oracle proof verify FILE")


def closing(home: Path, states: dict[str, str], *, stayed: bool) -> str:
    """The last line: what happened, and what to do next."""
    final = sum(1 for s in states.values() if s == "final")
    review = sum(1 for s in states.values() if s == "needs_review")
    happened = (
        f"{len(states)} questions asked; {final} answered on-chain and final, "
        f"{review} waiting for a person"
    )
    if stayed:
        return f"\nStopped. {happened}; the demo's data stays in {home}."
    return (
        f"\nDone: {happened}. The chain, the daemon and the console have stopped; the data "
        f"stays in {home}. Next: decide a review with the commands above, or run ./scripts/demo "
        "without --exit to keep everything running and use the review console."
    )


def _decided(config: Path, asked: dict[str, str]) -> dict[str, str]:
    """Question id -> market state, once every question left the research states."""
    out = subprocess.run(
        [sys.executable, "-c", _STATES, str(config)], capture_output=True, text=True, check=False
    )
    states: dict[str, str] = json.loads(out.stdout or "{}")
    settled = {"submitted", "final", "needs_review"}
    if set(states) == set(asked) and set(states.values()) <= settled:
        return states
    return {}


# The daemon makes the database; the demo only reads it (and finds nothing until then).
_STATES = """
import json, sys
from oracle.config import load_settings
from oracle.store.database import open_database
from oracle.store.repository import Store
store = Store(open_database(load_settings(sys.argv[1]).database.url, create=False))
print(json.dumps({m.external_id: m.state for m in store.markets()}))
"""


def _summary(states: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for state in states.values():
        counts[state] = counts.get(state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))


def _config(home: Path, chain_url: str, agents: list[str], metrics_port: int) -> dict[str, Any]:
    return {
        "database": {"url": f"sqlite:///{home / 'oracle.db'}"},
        "daemon": {
            "proofs_dir": str(home / "proofs"),
            "poll_interval": 1,
            "watch_interval": 1,
        },
        "metrics": {"port": metrics_port},
        "log": {"format": "json"},
        "agents": [{"name": a, "kind": "replay", "directory": str(EXAMPLES)} for a in agents],
        "market_sources": [{"kind": "chain", "name": "chain"}],
        "chains": [
            {
                "name": "default",
                "deployment_file": str(home / "deployment.json"),
                "rpc": {"urls": [chain_url]},
                "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[0]},
                "tx": {"confirmations": 1},
                "scanner": {"confirmations": 0, "poll_interval": 1},
                "submitter": {"batch_max_wait": 1},
            }
        ],
    }


if __name__ == "__main__":
    main()
