"""The contract artifacts exported into oracle/chain/artifacts/ match the Solidity sources.

`contracts/scripts/export-artifacts` stamps each artifact with `sourceHash`: sha256 over every
`contracts/src/**/*.sol` file (sorted by path) followed by `foundry.toml` and `package.json` (the
compiler pins), each entry as `<path relative to contracts/>\\0<content>\\0`. Editing any source or
compiler setting without re-exporting makes these tests fail. When a `forge build` output exists in
contracts/out/, the exported ABI and bytecode must also equal it byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ROOT / "contracts"
ARTIFACTS = ROOT / "oracle" / "chain" / "artifacts"
COMPILED = ("AgentOracle", "ConditionalTokensAdapter", "UmaStyleRequester")
REEXPORT = "run `cd contracts && forge build && scripts/export-artifacts`"


def source_hash(contracts: Path = CONTRACTS) -> str:
    files = sorted(p.relative_to(contracts).as_posix() for p in (contracts / "src").rglob("*.sol"))
    files += ["foundry.toml", "package.json"]
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0")
        digest.update((contracts / name).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def load(name: str) -> dict[str, Any]:
    path = ARTIFACTS / f"{name}.json"
    assert path.is_file(), f"missing {path.relative_to(ROOT)}: {REEXPORT}"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def abi_names(abi: list[dict[str, Any]], kind: str) -> set[str]:
    return {entry["name"] for entry in abi if entry.get("type") == kind}


@pytest.mark.parametrize("name", COMPILED)
def test_artifact_matches_sources(name: str) -> None:
    assert load(name)["sourceHash"] == source_hash(), (
        f"oracle/chain/artifacts/{name}.json is stale against contracts/src: {REEXPORT}"
    )


@pytest.mark.parametrize("name", COMPILED)
def test_artifact_matches_forge_build(name: str) -> None:
    built = CONTRACTS / "out" / f"{name}.sol" / f"{name}.json"
    if not built.is_file():
        pytest.skip("no forge build output in contracts/out (contracts/scripts/check builds it)")
    forge = json.loads(built.read_text(encoding="utf-8"))
    exported = load(name)
    assert exported["abi"] == forge["abi"], f"{name} ABI differs from contracts/out: {REEXPORT}"
    assert exported["bytecode"] == forge["bytecode"]["object"], (
        f"{name} bytecode differs from contracts/out: {REEXPORT}"
    )
    assert exported["deployedBytecode"] == forge["deployedBytecode"]["object"]


def test_source_hash_changes_with_any_source(tmp_path: Path) -> None:
    copy = tmp_path / "contracts"
    for rel in ["foundry.toml", "package.json"] + [
        p.relative_to(CONTRACTS).as_posix() for p in (CONTRACTS / "src").rglob("*.sol")
    ]:
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes((CONTRACTS / rel).read_bytes())
    before = source_hash(copy)
    assert before == source_hash()
    target = copy / "src" / "libraries" / "QuestionLib.sol"
    target.write_text(target.read_text(encoding="utf-8") + "\n// edit\n", encoding="utf-8")
    assert source_hash(copy) != before


def test_oracle_abi_has_the_interface_the_daemon_uses() -> None:
    abi = load("AgentOracle")["abi"]
    functions = abi_names(abi, "function")
    assert {
        "request",
        "propose",
        "proposeBatch",
        "proposeSigned",
        "proposeBatchSigned",
        "dispute",
        "confirm",
        "overturn",
        "reopen",
        "settle",
        "withdraw",
        "getQuestion",
        "finalResult",
        "status",
        "proposalDigest",
        "batchDigest",
        "questionIdOf",
    } <= functions
    assert {
        "QuestionRequested",
        "AnswerProposed",
        "AnswerDisputed",
        "DisputeResolved",
        "Settled",
    } <= abi_names(abi, "event")
    assert "InvalidStatus" in abi_names(abi, "error")


def test_bytecode_present() -> None:
    for name in (*COMPILED, "ConditionalTokens"):
        bytecode = load(name)["bytecode"]
        assert bytecode.startswith("0x")
        assert len(bytecode) > 1000, name
