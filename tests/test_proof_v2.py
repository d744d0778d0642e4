"""Proof format version 2: the checksum is SHA-256 over RFC 8785 (JCS), so a verifier
outside Python reproduces it. Python (`oracle.core.proof`, the `rfc8785` package) and the
dependency-free Node verifier (`verifier/verify-proof.mjs`) must agree on every proof and
on every canonical form; version 1 proofs still verify in Python."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle.app import assemble
from oracle.chain.contracts import proof_hash
from oracle.core import (
    ConsensusParams,
    SourceThresholds,
    build_proof,
    evaluate,
    parse_consensus_input,
    verify_proof,
)
from oracle.core.proof import (
    MAX_SAFE_INTEGER,
    PROOF_VERSION,
    build_decision_proof,
    canonical_bytes,
    compute_checksum,
)
from oracle.errors import ProofError
from oracle.testing import consensus_document, result_dict
from tests.test_examples import make_examples  # scripts/make_examples.py, loaded once

from .commands import one_error_line, run_oracle
from .daemon.test_pipeline import (
    Venue,
    one_pass,
    recordings,
    serve,
    settings_for,
    venue_markets,
)

ROOT = Path(__file__).resolve().parent.parent
VERIFIER = ROOT / "verifier" / "verify-proof.mjs"
V1_FIXTURES = sorted((ROOT / "tests" / "fixtures" / "proofs").glob("*.v1.json"))
V2_EXAMPLES = sorted((ROOT / "oracle" / "examples" / "proofs").glob("*.json"))
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH: the Node verifier")


def node_verify(path: Path) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run(
        [NODE, str(VERIFIER), str(path)], capture_output=True, text=True, timeout=60, check=False
    )


def node_canonical(values: list[Any], tmp_path: Path) -> list[bytes]:
    """The Node script's RFC 8785 form of each value (one node process for the batch)."""
    assert NODE is not None
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps(values))
    run = subprocess.run(
        [NODE, str(VERIFIER), "--canonicalize", str(batch)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr.decode()
    lines = run.stdout.split(b"\n")
    assert lines[-1] == b""
    return lines[:-1]


def _proof(document: dict[str, Any], params: ConsensusParams | None = None) -> dict[str, Any]:
    params, thresholds = params or ConsensusParams(), SourceThresholds()
    consensus_input = parse_consensus_input(document)
    return build_proof(
        consensus_input, evaluate(consensus_input, params, thresholds), params, thresholds
    )


@pytest.fixture
def proof() -> dict[str, Any]:
    return _proof(
        consensus_document(
            [
                result_dict("alpha", "YES", 0.9),
                result_dict("beta", "YES", 0.8),
                result_dict("gamma", "NO", 0.75, reasoning="Ünïcode — 😀 and a\ttab"),
            ]
        )
    )


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False), "utf-8")
    return path


# -- the checksum rule -------------------------------------------------------------------


def test_new_proofs_are_version_2_with_the_rfc8785_checksum(proof: dict[str, Any]) -> None:
    assert proof["version"] == PROOF_VERSION == 2
    body = {k: v for k, v in proof.items() if k not in ("checksum", "proof_id")}
    assert proof["checksum"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest()
    assert proof["proof_id"] == f"proof-{proof['checksum'][:16]}"
    assert verify_proof(proof) == (True, proof["checksum"])
    # The proof as read back from any rendering (order, spacing, escapes) checks the same.
    reread = json.loads(json.dumps(dict(reversed(proof.items())), ensure_ascii=True, indent=3))
    assert verify_proof(reread) == (True, proof["checksum"])


def test_the_onchain_proof_hash_is_the_first_20_bytes_of_the_checksum(
    proof: dict[str, Any],
) -> None:
    assert proof_hash(proof["checksum"]) == bytes.fromhex(proof["checksum"])[:20]
    assert len(proof_hash(proof["checksum"])) == 20


def test_decision_proofs_are_version_2_and_may_embed_a_version_1_proof() -> None:
    v1 = json.loads((ROOT / "tests/fixtures/proofs/contested.v1.json").read_text())
    decision = build_decision_proof(
        v1, outcome="Alice", reason="count", decided_by="alice", decided_at=2.5
    )
    assert decision["version"] == 2
    assert decision["consensus"] == v1
    assert verify_proof(decision)[0]
    assert verify_proof(decision["consensus"])[0]


@pytest.mark.parametrize("path", V1_FIXTURES, ids=lambda p: p.name)
def test_version_1_proofs_still_verify(path: Path) -> None:
    document = json.loads(path.read_text())
    assert document["version"] == 1
    matches, recomputed = verify_proof(document)
    assert matches
    assert recomputed == document["checksum"]
    # Version 1 is not RFC 8785: the rule really is per version.
    body = {k: v for k, v in document.items() if k not in ("checksum", "proof_id")}
    assert hashlib.sha256(rfc8785.dumps(body)).hexdigest() != recomputed


def test_the_agreement_example_checksum_under_each_version() -> None:
    """The brief's numbers: the v1 checksum, and what RFC 8785 gives over the same body."""
    v1 = json.loads((ROOT / "tests/fixtures/proofs/agreement.v1.json").read_text())
    assert v1["checksum"].startswith("cac62669")
    body = {k: v for k, v in v1.items() if k not in ("checksum", "proof_id")}
    assert hashlib.sha256(rfc8785.dumps(body)).hexdigest().startswith("0bf5321c")
    v2 = json.loads((ROOT / "oracle/examples/proofs/agreement.json").read_text())
    # The same verdict; the settings recorded since version 1 gained the debate's.
    added = v2["config"]["consensus"]
    assert added.pop("conflict_resolution") == "escalate"
    assert added.pop("debate")["max_rounds"] == 3
    assert {k: v for k, v in v2.items() if k not in ("checksum", "proof_id", "version")} == {
        k: v for k, v in body.items() if k != "version"
    }


@pytest.mark.parametrize("version", [0, 3, 99, -1])
def test_unknown_versions_are_refused_naming_the_version(
    proof: dict[str, Any], version: int
) -> None:
    proof["version"] = version
    with pytest.raises(ProofError, match=rf"proof version {version} is not supported"):
        verify_proof(proof)


def test_a_boolean_version_is_refused(proof: dict[str, Any]) -> None:
    proof["version"] = True
    with pytest.raises(ProofError, match="`version` must be an integer"):
        verify_proof(proof)
    with pytest.raises(ProofError, match="proof version True is not supported"):
        compute_checksum(proof)


@pytest.mark.parametrize(
    ("mutate", "path", "what"),
    [
        (lambda p: p["verdict"].update(confidence=float("nan")), "$.verdict.confidence", "nan"),
        (lambda p: p["votes"][1].update(weight=float("-inf")), "$.votes[1].weight", "-inf"),
        (lambda p: p["market"].update(stake=2**53), "$.market.stake", "integer 9007199254740992"),
        (lambda p: p["market"].update({"odd key": -(2**70)}), '$.market["odd key"]', "integer"),
        (lambda p: p["votes"][0].update(reasoning="a\ud800b"), "$.votes[0].reasoning", "surrogate"),
        (lambda p: p["market"].update({"\udc00": 1}), '$.market["\\udc00"]', "surrogate"),
    ],
)
def test_values_rfc8785_cannot_hold_are_refused_naming_the_field(
    proof: dict[str, Any], mutate: Any, path: str, what: str
) -> None:
    mutate(proof)
    with pytest.raises(ProofError) as raised:
        verify_proof(proof)
    message = str(raised.value)
    assert message.startswith("not a proof: not representable in RFC 8785 JSON: ")
    assert f"{path}: " in message
    assert what in message


def test_the_largest_safe_integer_is_kept(proof: dict[str, Any]) -> None:
    assert canonical_bytes([MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER]) == (
        b"[9007199254740991,-9007199254740991]"
    )


def test_building_a_proof_with_an_unrepresentable_integer_names_its_field() -> None:
    params = ConsensusParams(min_agents=2**60)
    document = consensus_document([result_dict("a", "YES", 0.9), result_dict("b", "YES", 0.9)])
    with pytest.raises(ProofError, match=r"\$\.config\.consensus\.min_agents: integer"):
        _proof(document, params)


# -- bundled proofs ----------------------------------------------------------------------


def test_the_bundled_v2_example_proofs_are_current() -> None:
    built = make_examples.proofs()
    assert sorted(built) == [p.name for p in V2_EXAMPLES]
    for path in V2_EXAMPLES:
        assert path.read_text("utf-8") == make_examples.render_proof(built[path.name]), (
            "run: .venv/bin/python scripts/make_examples.py"
        )


@pytest.mark.parametrize("path", V2_EXAMPLES, ids=lambda p: p.name)
def test_bundled_v2_proofs_verify_in_python(path: Path) -> None:
    document = json.loads(path.read_text("utf-8"))
    assert document["version"] == 2
    assert verify_proof(document) == (True, document["checksum"])


def test_proof_verify_command_reads_both_versions(tmp_path: Path) -> None:
    for path in [*V1_FIXTURES, *V2_EXAMPLES]:
        run = run_oracle("proof", "verify", str(path))
        assert run.returncode == 0, run.stderr
        assert json.loads(path.read_text("utf-8"))["checksum"] in run.stdout
    document = json.loads(V2_EXAMPLES[0].read_text("utf-8"))
    document["version"] = 7
    path = write(tmp_path / "v7.json", document)
    assert one_error_line(run_oracle("proof", "verify", str(path))) == (
        f"{path}: proof version 7 is not supported (this oracle reads versions 1 and 2)"
    )


# -- the Node verifier -------------------------------------------------------------------


@needs_node
@pytest.mark.parametrize("path", V2_EXAMPLES, ids=lambda p: p.name)
def test_node_verifies_the_bundled_v2_proofs(path: Path, tmp_path: Path) -> None:
    document = json.loads(path.read_text("utf-8"))
    run = node_verify(path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("verified")
    assert document["checksum"] in run.stdout
    body = {k: v for k, v in document.items() if k not in ("checksum", "proof_id")}
    assert node_canonical([body], tmp_path) == [rfc8785.dumps(body)]


@needs_node
@pytest.mark.parametrize("path", V1_FIXTURES, ids=lambda p: p.name)
def test_node_sends_version_1_proofs_to_the_python_verifier(path: Path) -> None:
    run = node_verify(path)
    assert run.returncode == 2
    assert "version 1" in run.stderr
    assert "oracle proof verify" in run.stderr


@needs_node
def test_a_member_named_proto_is_covered_like_any_other(
    proof: dict[str, Any], tmp_path: Path
) -> None:
    """JavaScript objects treat `__proto__` specially; the verifier must not drop it."""
    proof["market"]["__proto__"] = {"x": 1}
    proof["__proto__"] = "top"
    sealed = build_decision_proof(proof, outcome="YES", reason="r", decided_by="a", decided_at=1.0)
    sealed["__proto__"] = ["also"]
    resealed = {k: v for k, v in sealed.items() if k not in ("checksum", "proof_id")}
    checksum = hashlib.sha256(canonical_bytes(resealed)).hexdigest()
    document = {**resealed, "checksum": checksum, "proof_id": f"proof-{checksum[:16]}"}
    assert verify_proof(document)[0]
    run = node_verify(write(tmp_path / "proto.json", document))
    assert run.returncode == 0, run.stderr
    document["__proto__"] = ["changed"]
    assert node_verify(write(tmp_path / "proto.json", document)).returncode == 1


@needs_node
def test_node_verifies_a_wrapped_consensus_output(proof: dict[str, Any], tmp_path: Path) -> None:
    run = node_verify(write(tmp_path / "out.json", {"outcome": "YES", "proof": proof}))
    assert run.returncode == 0, run.stderr


@needs_node
@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(
            lambda p: p["votes"][2].update(reasoning=p["votes"][2]["reasoning"][:-1] + "X"),
            id="one-reasoning-character",
        ),
        pytest.param(
            lambda p: p["votes"][0].update(confidence=p["votes"][0]["confidence"] + 1e-6),
            id="one-confidence-float",
        ),
        pytest.param(lambda p: p["verdict"].update(outcome="NO"), id="the-outcome"),
        pytest.param(lambda p: p.update(proof_id="proof-0000000000000000"), id="the-proof-id"),
        pytest.param(lambda p: p.update(extra=None), id="an-added-field"),
    ],
)
def test_python_and_node_both_reject_an_altered_proof(
    proof: dict[str, Any], tmp_path: Path, tamper: Any
) -> None:
    assert node_verify(write(tmp_path / "intact.json", proof)).returncode == 0
    altered = copy.deepcopy(proof)
    tamper(altered)
    path = write(tmp_path / "altered.json", altered)
    matches, recomputed = verify_proof(json.loads(path.read_text("utf-8")))
    assert not matches
    run = node_verify(path)
    assert run.returncode == 1, run.stderr
    assert f"expected (recorded): checksum {proof['checksum']}" in run.stderr
    assert f"found (recomputed):  checksum {recomputed}" in run.stderr


@needs_node
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a proof: expected a JSON object"),
        ('{"version": 2, "proof_id": "p", "market": {}}', "not a proof: no `checksum` field"),
        (
            '{"version": "2", "checksum": "c", "proof_id": "p", "market": {}}',
            "`version` must be an integer",
        ),
        (
            '{"version": 3, "checksum": "c", "proof_id": "p", "market": {}}',
            "proof version 3 is not supported",
        ),
        (
            '{"version": 2, "checksum": "c", "proof_id": "p", "market": {"x": 1e400}}',
            "$.market.x: Infinity is not a JSON number",
        ),
        (
            '{"version": 2, "checksum": "c", "proof_id": "p", "market": {"x": [9007199254740993]}}',
            "integer 9007199254740993 is beyond",
        ),
        (
            '{"version": 2, "checksum": "c", "proof_id": "p", "market": {"x": -9007199254740992}}',
            "integer -9007199254740992 is beyond",
        ),
        (
            '{"version": 2, "checksum": "c", "proof_id": "p", "market": {"x": "\\ud800"}}',
            "$.market.x: the string holds a lone surrogate",
        ),
    ],
)
def test_node_exits_2_on_what_it_cannot_check(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    run = node_verify(path)
    assert run.returncode == 2
    assert message in run.stderr
    with pytest.raises((ProofError, ValueError)):
        verify_proof(json.loads(text))


@needs_node
def test_node_exits_2_on_an_unreadable_file(tmp_path: Path) -> None:
    run = node_verify(tmp_path / "missing.json")
    assert run.returncode == 2
    assert "cannot be read" in run.stderr


# -- RFC 8785 edge cases: Python's rfc8785 and the Node script agree ----------------------

EDGE_CASES: list[tuple[Any, bytes]] = [
    (1e21, b"1e+21"),
    (1e20, b"100000000000000000000"),
    (1e-7, b"1e-7"),
    (1e-6, b"0.000001"),
    (0.1 + 0.2, b"0.30000000000000004"),
    (-0.0, b"0"),
    (1.0, b"1"),
    (-1.5e-300, b"-1.5e-300"),
    (5e-324, b"5e-324"),
    (1.7976931348623157e308, b"1.7976931348623157e+308"),
    (123456789012345680000.0, b"123456789012345680000"),
    (MAX_SAFE_INTEGER, b"9007199254740991"),
    (
        # U+1F600 is a surrogate pair (D83D DE00) in UTF-16, so it sorts before U+FFFF,
        # though its code point is larger; U+00E9 sorts before both.
        {"\uffff": 1, "\U0001f600": 2, "\u00e9": 3, "a": 4, "": 5, "B": 6},
        '{"":5,"B":6,"a":4,"é":3,"😀":2,"\uffff":1}'.encode(),
    ),
    (
        '\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f"\\/\u2028\u2029é😀',
        b'"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f\x7f\\"\\\\/'
        + "\u2028\u2029é😀".encode()
        + b'"',
    ),
    (
        {"b": [True, False, None, {}, []], "a": {"z": 0, "y": -1}},
        b'{"a":{"y":-1,"z":0},"b":[true,false,null,{},[]]}',
    ),
]


@needs_node
def test_rfc8785_edge_cases_agree(tmp_path: Path) -> None:
    values = [value for value, _ in EDGE_CASES]
    expected = [form for _, form in EDGE_CASES]
    assert [rfc8785.dumps(v) for v in values] == expected
    assert node_canonical(values, tmp_path) == expected


_keys = st.text(
    st.characters(blacklist_categories=("Cs",)) | st.sampled_from("\U0001f600\uffff\x00é"),
    max_size=6,
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e21, 1e-7, -0.0, 0.1 + 0.2, 5e-324, 1e16, 123e-20])
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
)
_json_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=20,
)


@needs_node
@settings(max_examples=8, deadline=None)
@given(st.lists(_json_values, min_size=60, max_size=60))
def test_python_and_node_produce_the_same_canonical_bytes(values: list[Any]) -> None:
    # A directory of its own per example: Hypothesis does not reuse function fixtures.
    with tempfile.TemporaryDirectory() as tmp:
        assert node_canonical(values, Path(tmp)) == [rfc8785.dumps(v) for v in values]


# -- the daemon's end-to-end path --------------------------------------------------------


@needs_node
def test_node_verifies_the_proofs_the_daemon_writes(tmp_path: Path) -> None:
    """The pipeline's real path (HTTP venue, replay agents, SQLite store) writes a consensus
    proof and, after a person decides a contested market, a decision proof: Python and
    Node check every file it wrote and agree."""
    replays = recordings(tmp_path / "replays")

    async def scenario() -> Venue:
        async with serve(Venue(venue_markets()[:2])) as venue:
            settings = settings_for(f"sqlite:///{tmp_path / 'oracle.db'}", tmp_path, venue, replays)
            await one_pass(settings)
            assembly = assemble(settings)
            [item] = assembly.daemon.store.reviews()
            assembly.daemon.store.decide_review(item.id, "NO", "official record", "alice")
            await assembly.close()
            await one_pass(settings)
            return venue

    venue = asyncio.run(scenario())
    assert sorted(a["outcome"] for a in venue.answers) == ["NO", "YES"]
    written = sorted((tmp_path / "proofs").rglob("*.json"))
    checksums = {path.stem for path in written}
    assert {a["proof_checksum"] for a in venue.answers} <= checksums
    kinds = set()
    for path in written:
        document = json.loads(path.read_text("utf-8"))
        kinds.add(document.get("kind", "consensus"))
        assert document["version"] == 2
        assert verify_proof(document) == (True, path.stem)
        run = node_verify(path)
        assert run.returncode == 0, run.stderr
        assert path.stem in run.stdout
    assert kinds == {"consensus", "human_decision"}
