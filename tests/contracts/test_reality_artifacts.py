"""Reality.eth in oracle/chain/artifacts/reality/ is compiled from the pinned package.

`contracts/scripts/build-reality.js` writes the artifacts (RealityETH_v3_0,
RealityETH_ERC20_v3_0 and Realitio_v2_1 from `@reality.eth/contracts`'s flat sources, and
the tests' arbitrator); `--check` (run by
`contracts/scripts/check`) compiles again and compares byte for byte. Here, cheaply: the
pins, the compiler settings the issue names, the functions and events the bindings use,
and (when `npm ci` has run) that the sources are unchanged and that our compile is the
bytecode Reality.eth publishes, up to the metadata hash solc appends.
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

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ROOT / "contracts"
MODULES = CONTRACTS / "node_modules"
PACKAGE = MODULES / "@reality.eth" / "contracts"
ARTIFACTS = ROOT / "oracle" / "chain" / "artifacts" / "reality"
REBUILD = "run `cd contracts && node scripts/build-reality.js`"
NAMES = ("RealityETH_v3_0", "RealityArbitrator")
# name -> (flat source, published creation code, compiler, EVM) of the other contracts.
OTHERS = {
    "RealityETH_ERC20_v3_0": (
        "RealityETH_ERC20-3.0.sol",
        "RealityETH_ERC20-3.0.bin",
        "0.8.6",
        "berlin",
    ),
    "Realitio_v2_1": ("RealityETH-2.1.sol", "RealityETH-2.1.bin", "0.4.25", "byzantium"),
}


def document(name: str) -> dict[str, Any]:
    path = ARTIFACTS / f"{name}.json"
    assert path.is_file(), f"missing {path.relative_to(ROOT)}: {REBUILD}"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def without_metadata(code: str) -> str:
    """Bytecode without solc's CBOR metadata (its last two bytes give its length)."""
    code = code.removeprefix("0x")
    length = int(code[-4:], 16)
    return code[: -(length + 2) * 2]


def test_the_packages_are_pinned() -> None:
    package = json.loads((CONTRACTS / "package.json").read_text(encoding="utf-8"))
    pins = package["devDependencies"]
    assert pins["@reality.eth/contracts"] == "3.2.22"
    assert pins["solc-0.8.6"] == "npm:solc@0.8.6"
    assert pins["solc-0.4.25"] == "npm:solc@0.4.25"  # v2.1's compiler


@pytest.mark.parametrize("name", NAMES)
def test_compiled_as_the_issue_says(name: str) -> None:
    artifact = document(name)
    assert artifact["contractName"] == name
    assert artifact["compiler"].startswith("0.8.6+commit.")
    assert artifact["settings"] == {
        "optimizer": {"enabled": True, "runs": 200},
        "evmVersion": "berlin",
    }
    assert artifact["bytecode"].startswith("0x")
    assert len(artifact["bytecode"]) > 100
    assert load_artifact(f"reality/{name}").abi == artifact["abi"]


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_the_other_contracts_are_compiled_alone_from_the_package(name: str) -> None:
    source, _, compiler, evm = OTHERS[name]
    artifact = document(name)
    assert artifact["contractName"] == name
    assert artifact["source"] == f"@reality.eth/contracts@3.2.22:flat/{source}"
    assert artifact["compiler"].startswith(f"{compiler}+commit.")
    assert artifact["settings"] == {"optimizer": {"enabled": True, "runs": 200}, "evmVersion": evm}
    assert list(artifact["sources"]) == [f"@reality.eth/contracts/flat/{source}"]
    assert load_artifact(f"reality/{name}").abi == artifact["abi"]


def test_the_other_bindings_find_what_they_use() -> None:
    erc20 = {e["name"] for e in load_artifact("reality/RealityETH_ERC20_v3_0").abi if "name" in e}
    assert {
        "askQuestionWithMinBondERC20",
        "submitAnswerERC20",
        "submitAnswerCommitmentERC20",
        "claimMultipleAndWithdrawBalance",
        "token",
        "setToken",
        "getMinBond",
    } <= erc20
    v21 = {e["name"] for e in load_artifact("reality/Realitio_v2_1").abi if "name" in e}
    assert {"askQuestion", "submitAnswer", "claimMultipleAndWithdrawBalance", "LogNewAnswer"} <= v21
    assert not {"getMinBond", "askQuestionWithMinBond", "reopenQuestion"} & v21


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_the_other_compiles_are_the_published_bytecode(name: str) -> None:
    source, published, _, _ = OTHERS[name]
    path = PACKAGE / "bytecode" / published
    if not path.is_file():
        pytest.skip(
            "contracts/node_modules has no @reality.eth/contracts: run `cd contracts && npm ci`"
        )
    ours = document(name)["bytecode"].removeprefix("0x")
    theirs = path.read_text(encoding="ascii").strip().removeprefix("0x")
    # solc 0.4 appends 43 bytes of metadata without a length; 0.8 says its length.
    cut = 86 if name == "Realitio_v2_1" else None
    if cut is None:
        assert without_metadata(ours) == without_metadata(theirs)
    else:
        assert ours[-4:] == theirs[-4:] == "0029"
        assert ours[:-cut] == theirs[:-cut]
    flat = PACKAGE / "flat" / source
    digest = hashlib.sha256(flat.read_bytes()).hexdigest()
    assert document(name)["sources"] == {f"@reality.eth/contracts/flat/{source}": digest}


def test_the_sources_are_named() -> None:
    assert document("RealityETH_v3_0")["source"] == (
        "@reality.eth/contracts@3.2.22:flat/RealityETH-3.0.sol"
    )
    assert document("RealityArbitrator")["source"] == "contracts/test/mocks/RealityArbitrator.sol"


def test_the_bindings_find_what_they_use() -> None:
    abi = load_artifact("reality/RealityETH_v3_0").abi
    functions = {e["name"] for e in abi if e["type"] == "function"}
    assert {
        "askQuestion",
        "askQuestionWithMinBond",
        "submitAnswer",
        "claimWinnings",
        "withdraw",
        "questions",
        "getBond",
        "getMinBond",
        "getBestAnswer",
        "isFinalized",
        "getFinalAnswer",
        "getHistoryHash",
        "balanceOf",
        "notifyOfArbitrationRequest",
        "assignWinnerAndSubmitAnswerByArbitrator",
    } <= functions
    events = {e["name"] for e in abi if e["type"] == "event"}
    assert {
        "LogNewQuestion",
        "LogNewAnswer",
        "LogNotifyOfArbitrationRequest",
        "LogFinalize",
    } <= events
    (new_question,) = [e for e in abi if e.get("name") == "LogNewQuestion"]
    assert [i["name"] for i in new_question["inputs"] if i["indexed"]] == [
        "question_id",
        "user",
        "content_hash",
    ]
    arbitrator = {e.get("name") for e in load_artifact("reality/RealityArbitrator").abi}
    assert {"requestArbitration", "rule", "requesters", "fee"} <= arbitrator


def test_sources_unchanged() -> None:
    if not (PACKAGE / "package.json").is_file():
        pytest.skip(
            "contracts/node_modules has no @reality.eth/contracts: run `cd contracts && npm ci`"
        )
    sources: dict[str, str] = document("RealityETH_v3_0")["sources"]
    assert set(sources) == {
        "@reality.eth/contracts/flat/RealityETH-3.0.sol",
        "test/mocks/RealityArbitrator.sol",
    }
    for unit, digest in sources.items():
        path = MODULES / unit if unit.startswith("@") else CONTRACTS / unit
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, (
            f"{unit} changed since the Reality.eth artifacts were compiled: {REBUILD}"
        )


def test_our_compile_is_the_published_bytecode() -> None:
    """Reality.eth ships the creation code it deployed (bytecode/RealityETH-3.0.bin): ours,
    from the flat source with the issue's settings, is the same code; only the metadata
    hash (which covers the source file's name) differs."""
    published = PACKAGE / "bytecode" / "RealityETH-3.0.bin"
    if not published.is_file():
        pytest.skip(
            "contracts/node_modules has no @reality.eth/contracts: run `cd contracts && npm ci`"
        )
    ours = document("RealityETH_v3_0")["bytecode"]
    theirs = published.read_text(encoding="ascii").strip()
    assert without_metadata(ours) == without_metadata(theirs)


def test_a_fresh_compile_gives_the_same_artifacts() -> None:
    """solc-js compiles them again in seconds: `build-reality.js --check` compares every file."""
    node = shutil.which("node")
    compilers = [MODULES / name / "package.json" for name in ("solc-0.8.6", "solc-0.4.25")]
    if node is None or not all(path.is_file() for path in compilers):
        pytest.skip(
            "needs node and `cd contracts && npm ci` (solc-0.8.6, solc-0.4.25, "
            "@reality.eth/contracts)"
        )
    done = subprocess.run(
        [node, "scripts/build-reality.js", "--check"],
        cwd=CONTRACTS,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
