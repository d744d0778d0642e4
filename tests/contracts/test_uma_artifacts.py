"""UMA's contracts in oracle/chain/artifacts/uma/ are compiled from the pinned @uma/core.

`contracts/scripts/build-uma.js` writes them; `--check` (run by `contracts/scripts/check`)
compiles again and compares byte for byte. Here, cheaply: the pins, the compiler settings
the issue names, the functions and events the bindings use, and (when `npm ci` has run)
that every source file they were compiled from is unchanged in node_modules.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from oracle.chain.contracts import load_artifact
from oracle.venues.uma.binding import UMA_CONTRACTS

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ROOT / "contracts"
MODULES = CONTRACTS / "node_modules"
ARTIFACTS = ROOT / "oracle" / "chain" / "artifacts" / "uma"
REBUILD = "run `cd contracts && node scripts/build-uma.js`"


def document(name: str) -> dict[str, Any]:
    path = ARTIFACTS / f"{name.removeprefix('uma/')}.json"
    assert path.is_file(), f"missing {path.relative_to(ROOT)}: {REBUILD}"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def test_the_packages_are_pinned() -> None:
    package = json.loads((CONTRACTS / "package.json").read_text(encoding="utf-8"))
    pins = package["devDependencies"]
    assert pins["@uma/core"] == "2.62.2"
    assert pins["solc-0.8.16"] == "npm:solc@0.8.16"


@pytest.mark.parametrize("name", UMA_CONTRACTS)
def test_compiled_as_the_issue_says(name: str) -> None:
    artifact = document(name)
    assert artifact["contractName"] == name.removeprefix("uma/")
    assert artifact["source"].startswith("@uma/core@2.62.2:contracts/")
    assert artifact["compiler"].startswith("0.8.16+commit.")
    assert artifact["settings"] == {
        "optimizer": {"enabled": True, "runs": 1_000_000},
        "evmVersion": "london",
    }
    assert artifact["bytecode"].startswith("0x")
    assert len(artifact["bytecode"]) > 100
    assert load_artifact(name).abi == artifact["abi"]


def test_the_bindings_find_what_they_use() -> None:
    abi = load_artifact("uma/OptimisticOracleV2").abi
    functions = {e["name"] for e in abi if e["type"] == "function"}
    assert {
        "requestPrice",
        "proposePrice",
        "proposePriceFor",
        "disputePrice",
        "settle",
        "getRequest",
        "getState",
        "hasPrice",
        "setBond",
        "setEventBased",
        "setCallbacks",
        "setCustomLiveness",
        "defaultLiveness",
    } <= functions
    events = {e["name"] for e in abi if e["type"] == "event"}
    assert {"RequestPrice", "ProposePrice", "DisputePrice", "Settle"} <= events
    v3 = load_artifact("uma/OptimisticOracleV3").abi
    assert {
        "assertTruth",
        "assertTruthWithDefaults",
        "disputeAssertion",
        "settleAssertion",
        "getAssertion",
        "getMinimumBond",
        "multicall",
    } <= {e["name"] for e in v3 if e["type"] == "function"}
    assert {"AssertionMade", "AssertionDisputed", "AssertionSettled"} <= {
        e["name"] for e in v3 if e["type"] == "event"
    }
    (request,) = [e for e in abi if e.get("name") == "RequestPrice"]
    assert [(i["name"], i["indexed"]) for i in request["inputs"]][:2] == [
        ("requester", True),
        ("identifier", False),
    ]


def test_sources_unchanged_in_node_modules() -> None:
    if not (MODULES / "@uma" / "core" / "package.json").is_file():
        pytest.skip("contracts/node_modules has no @uma/core: run `cd contracts && npm ci`")
    sources: dict[str, str] = document("OptimisticOracleV2")["sources"]
    assert any(unit.startswith("@openzeppelin/contracts/") for unit in sources)
    for unit, digest in sources.items():
        candidates = [MODULES / unit, MODULES / "@uma" / "core" / "node_modules" / unit]
        path = next((c for c in candidates if c.is_file()), None)
        assert path is not None, f"{unit} is not in node_modules: {REBUILD}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, (
            f"{unit} changed since the UMA artifacts were compiled: {REBUILD}"
        )


def test_a_fresh_compile_gives_the_same_artifacts() -> None:
    """solc-js compiles them again in seconds: `build-uma.js --check` compares every file."""
    node = shutil.which("node")
    if node is None or not (MODULES / "solc-0.8.16" / "package.json").is_file():
        pytest.skip("needs node and `cd contracts && npm ci` (solc-0.8.16, @uma/core)")
    done = subprocess.run(
        [node, "scripts/build-uma.js", "--check"],
        cwd=CONTRACTS,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
