"""`oracle chain deploy|ask|status` through the real entry point, against anvil."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from oracle.chain.contracts import ADAPTER, CONDITIONAL_TOKENS, ORACLE, AgentOracle, Status
from oracle.chain.rpc import RpcPool
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from tests.chain.helpers import FAST_RPC
from tests.commands import one_error_line


def _oracle(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oracle", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("ORACLE")},
        check=False,
    )


def test_deploy_ask_status(anvil_factory: AnvilFactory, tmp_path: Path) -> None:
    anvil = anvil_factory()
    deployment_file = tmp_path / "deployment.json"
    config = tmp_path / "config.yaml"
    config.write_text(
        "chain:\n"
        f"  deployment_file: {deployment_file}\n"
        "  rpc:\n"
        f"    urls: ['{anvil.url}']\n"
        "    chain_id: 31337\n"
        "  signer:\n"
        "    type: dev_private_key\n"
        f"    dev_private_key: '{DEV_KEYS[0]}'\n"
        "  tx:\n"
        "    confirmations: 1\n"
        "    poll_interval: 0.05\n"
    )
    deployed = _oracle(
        "chain", "deploy", "--config", str(config), "--deploy-conditional-tokens",
        "--min-liveness", "60",
    )  # fmt: skip
    assert deployed.returncode == 0, deployed.stderr
    assert "signer.dev_private_key" in deployed.stderr  # the development key warns
    assert DEV_KEYS[0][2:] not in deployed.stderr + deployed.stdout
    document = json.loads(deployment_file.read_text())
    assert document["chain_id"] == 31337
    assert document["deployer"] == DEV_ADDRESSES[0]
    assert set(document["contracts"]) == {ORACLE, CONDITIONAL_TOKENS, ADAPTER}
    assert json.loads(deployed.stdout)["contracts"] == document["contracts"]

    asked = _oracle(
        "chain", "ask", "--config", str(config), "--question", "Will the test pass?",
        "--resolve-after", "2020-01-01T00:00:00Z", "--outcomes", "3", "--liveness", "120",
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    qid = json.loads(asked.stdout)["question_id"]

    status = _oracle("chain", "status", "--config", str(config), qid)
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["status"] == "REQUESTED"
    assert shown["outcome_count"] == 3
    assert shown["earliest_time"] == 1577836800
    assert shown["liveness"] == 120

    missing = _oracle("chain", "status", "--config", str(config), "0x" + "00" * 32)
    assert missing.returncode == 1
    assert "no such question" in missing.stderr
    bad = _oracle("chain", "status", "--config", str(config), "0x1234")
    assert bad.returncode == 2
    assert "QUESTION_ID" in bad.stderr
    bad_time = _oracle(
        "chain", "ask", "--config", str(config), "--question", "q", "--resolve-after", "soon"
    )
    assert bad_time.returncode == 2
    assert "--resolve-after" in bad_time.stderr

    async def on_chain() -> Status:
        async with RpcPool([anvil.url], FAST_RPC) as pool:
            oracle = AgentOracle(pool, document["contracts"][ORACLE])
            return (await oracle.get_question(qid)).status

    assert asyncio.run(on_chain()) == Status.REQUESTED
    for address in document["contracts"].values():
        assert anvil.rpc("eth_getCode", address, "latest") != "0x"


def _config(tmp_path: Path, url: str, deployment_file: Path, **rpc: object) -> Path:
    config = tmp_path / f"config-{len(list(tmp_path.glob('config-*.yaml')))}.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "chain": {
                    "deployment_file": str(deployment_file),
                    "rpc": {"urls": [url], **rpc},
                    "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[0]},
                    "tx": {"confirmations": 1, "poll_interval": 0.05},
                }
            }
        )
    )
    return config


def test_status_and_ask_check_the_chain_and_the_code(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    anvil, fresh = anvil_factory(), anvil_factory()
    deployment_file = tmp_path / "deployment.json"
    config = _config(tmp_path, anvil.url, deployment_file)
    assert _oracle("chain", "deploy", "--config", str(config)).returncode == 0
    qid = "0x" + "11" * 32
    oracle_address = json.loads(deployment_file.read_text())["contracts"][ORACLE]

    on_fresh = _config(tmp_path, fresh.url, deployment_file)
    for args in (("status", qid), ("ask", "--question", "q?", "--resolve-after", "0")):
        line = one_error_line(_oracle("chain", *args, "--config", str(on_fresh)))
        assert line == (
            f"chain.deployment_file: {deployment_file}: no contract at the AgentOracle address "
            f"{oracle_address} on chain 31337 (deployed on another node, or the chain was reset)"
        )
    assert fresh.nonce(DEV_ADDRESSES[0]) == 0  # nothing was sent

    elsewhere = tmp_path / "elsewhere.json"
    document = json.loads(deployment_file.read_text())
    elsewhere.write_text(json.dumps({**document, "chain_id": 5}))
    line = one_error_line(
        _oracle("chain", "status", qid, "--config", str(config), "--deployment", str(elsewhere))
    )
    assert line == (
        f"--deployment: {elsewhere} is a deployment on chain 5, but the RPC node "
        f"{anvil.url} serves chain id 31337"
    )

    wrong_id = _config(tmp_path, anvil.url, deployment_file, chain_id=5)
    line = one_error_line(_oracle("chain", "status", qid, "--config", str(wrong_id)))
    assert line == f"chain.rpc.chain_id: is 5, but the RPC node {anvil.url} serves chain id 31337"


def test_deploy_refuses_an_output_it_cannot_write_before_sending_anything(
    anvil: Anvil, tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("not a directory")
    target = tmp_path / "file" / "deployment.json"
    config = _config(tmp_path, anvil.url, target)
    line = one_error_line(_oracle("chain", "deploy", "--config", str(config)))
    assert line == f"chain.deployment_file: {target}: cannot be written (Not a directory)"
    line = one_error_line(_oracle("chain", "deploy", "--config", str(config), "--out", str(target)))
    assert line == f"--out: {target}: cannot be written (Not a directory)"
    assert anvil.nonce(DEV_ADDRESSES[0]) == 0
