"""`oracle console ...` and `oracle review ...` as an operator runs them: accounts,
tokens, the audit log, the queue and evidence as JSON, and decisions that carry a real
identity."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text, update

from oracle.store.database import open_database
from oracle.store.repository import Store
from oracle.store.tables import MarketRow
from tests.commands import one_error_line, run_oracle

from .helpers import PASSWORD, cut_audit_tail, rewrite_audit
from .scenario import agreeing, beside_another_answer, escalate, superseded_for_review


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str], Store]:
    url = f"sqlite:///{tmp_path / 'oracle.db'}"
    store = Store(open_database(url, create=True))
    return tmp_path, {"ORACLE__DATABASE__URL": url}, store


def test_accounts_tokens_and_a_decision_that_carries_an_identity(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    review_id = escalate(store, "q1")
    (cwd / "password").write_text(PASSWORD + "\n")
    for name, role in (("rita", "reviewer"), ("val", "viewer"), ("adam", "admin")):
        run = run_oracle(
            "console",
            "user",
            "add",
            name,
            "--role",
            role,
            "--password-file",
            str(cwd / "password"),
            cwd=cwd,
            env=env,
        )
        assert run.stdout == f"added {name} ({role})\n", run.stderr
    run = run_oracle("console", "token", "create", "val", cwd=cwd, env=env)
    viewer_token = run.stdout.strip()
    assert viewer_token.startswith("oct_")
    decide = ("review", "decide", str(review_id), "--outcome", "YES", "--reason", "record")
    assert one_error_line(run_oracle(*decide, cwd=cwd, env=env)).startswith("who decides?")
    line = one_error_line(
        run_oracle(*decide, cwd=cwd, env={**env, "ORACLE_CONSOLE_TOKEN": viewer_token})
    )
    assert line == "val (viewer) may not decide"
    line = one_error_line(
        run_oracle(
            *decide, "--as", "rita", "--password-file", str(cwd / "password"), cwd=cwd, env=env
        )
    )
    assert "only an admin account decides without a token" in line
    line = one_error_line(
        run_oracle(
            *decide,
            "--checksum",
            "0" * 64,
            "--as",
            "adam",
            "--password-file",
            str(cwd / "password"),
            cwd=cwd,
            env=env,
        )
    )
    assert "no longer the latest" in line
    rita_token = run_oracle("console", "token", "create", "rita", cwd=cwd, env=env).stdout.strip()
    (cwd / "token").write_text(rita_token)
    run = run_oracle(*decide, "--token-file", str(cwd / "token"), cwd=cwd, env=env)
    assert run.returncode == 0, run.stderr
    assert "decided YES by rita; the daemon will submit it" in run.stdout
    assert rita_token not in run.stdout + run.stderr
    item = store.review(review_id)
    assert (item.status, item.decided_by) == ("decided", "rita")
    consensus = store.latest_consensus("chain:q1")
    assert consensus is not None
    assert item.seen_checksum == consensus.checksum


def test_adding_an_account_without_a_terminal_names_password_file(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    run = run_oracle(
        "console", "user", "add", "rita", "--role", "reviewer",
        cwd=cwd, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert one_error_line(run) == (
        "oracle console user add: no terminal to ask rita's password on: "
        "give it with --password-file FILE"
    )
    assert store._active_user("rita") is None  # nothing was added
    # Deciding as an account, likewise.
    review_id = escalate(store, "q1")
    run = run_oracle(
        "review", "decide", str(review_id), "--outcome", "YES", "--reason", "record",
        "--as", "adam", cwd=cwd, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert one_error_line(run) == (
        "oracle review decide: no terminal to ask adam's password on: "
        "give it with --password-file FILE (or use --token-file)"
    )
    assert store.review(review_id).status == "open"


def test_review_list_and_show_as_json(setup: tuple[Path, dict[str, str], Store]) -> None:
    cwd, env, store = setup
    first = escalate(store, "q1")
    escalate(store, "q2", agreeing(), force_review=True)
    run = run_oracle("review", "list", "--json", cwd=cwd, env=env)
    reviews = json.loads(run.stdout)["reviews"]
    assert [(r["id"], r["market_id"], r["venue"]) for r in reviews] == [
        (first, "chain:q1", "chain"),
        (first + 1, "chain:q2", "chain"),
    ]
    assert all(r["age_seconds"] >= 0 and r["reasons"] for r in reviews)
    text_run = run_oracle("review", "list", cwd=cwd, env=env)
    # Resolve-after 500 s after the epoch: long overdue, and said so.
    assert "venue chain, late by " in text_run.stdout
    assert "(resolve-after time), waiting " in text_run.stdout
    assert [r["deadline_at"] for r in reviews] == [500.0, 500.0]
    assert all(r["time_left_seconds"] < 0 for r in reviews)
    evidence = json.loads(
        run_oracle("review", "show", str(first), "--json", cwd=cwd, env=env).stdout
    )
    groups = {g["outcome"]: g for g in evidence["outcomes"]}
    assert [a["agent_id"] for a in groups["YES"]["agents"]] == [
        "claude-researcher",
        "gpt-researcher",
    ]
    assert (
        groups["YES"]["agents"][0]["reasoning"]
        == "claude-researcher concluded YES from its sources"
    )
    assert groups["NO"]["sources"][0]["only_this_side"] is True
    assert evidence["consensus"]["proof_verifies"] is True
    assert [h["to"] for h in evidence["history"]][-1] == "needs_review"
    full = run_oracle("review", "show", str(first), "--full", cwd=cwd, env=env).stdout
    assert "mistral-researcher concluded NO from its sources" in full
    assert "[only this side]" in full
    assert f"proof checksum: {evidence['consensus']['checksum']} (verifies)" in full
    # By default: what a person needs to choose, each agent in one line, sources counted.
    shown = run_oracle("review", "show", str(first), cwd=cwd, env=env).stdout
    assert f"proof checksum: {evidence['consensus']['checksum']} (verifies)" in shown
    no = groups["NO"]
    mistral = next(a for a in no["agents"] if a["agent_id"] == "mistral-researcher")
    assert (
        f"    mistral-researcher {mistral['confidence']:.0%}: "
        "mistral-researcher concluded NO from its sources"
    ) in shown.splitlines(), shown
    alone = sum(1 for s in no["sources"] if s["only_this_side"])
    assert alone > 0
    assert (
        f"  NO: {len(no['agents'])} agent(s), {len(no['sources'])} source(s), "
        f"{alone} only this side"
    ) in shown.splitlines()
    assert "[only this side]" not in shown
    assert not any(line.startswith("   * ") for line in shown.splitlines())
    assert shown.splitlines()[-1] == (
        f"every agent's reasoning, the sources and their quotes: oracle review show {first} --full"
    )
    assert len(shown.splitlines()) < len(full.splitlines())


def test_audit_export_and_verify(setup: tuple[Path, dict[str, str], Store]) -> None:
    cwd, env, store = setup
    store.add_user("rita", "reviewer", PASSWORD)
    store.record("rita", "review.viewed", "market:chain:q1", {"review": 1})
    run = run_oracle("console", "audit", "verify", cwd=cwd, env=env)
    assert run.stdout == (
        "audit chain verifies: 2 entries (no anchor: a cut tail or a rehashed rewrite "
        "would not show)\n"
    ), run.stderr
    run_oracle("console", "audit", "export", "-o", str(cwd / "audit.jsonl"), cwd=cwd, env=env)
    assert (
        run_oracle("console", "audit", "verify", str(cwd / "audit.jsonl"), cwd=cwd).returncode == 0
    )
    lines = (cwd / "audit.jsonl").read_text().splitlines()
    altered = json.loads(lines[1])
    altered["actor"] = "mallory"
    (cwd / "altered.jsonl").write_text(lines[0] + "\n" + json.dumps(altered) + "\n")
    run = run_oracle("console", "audit", "verify", str(cwd / "altered.jsonl"), cwd=cwd)
    assert (run.returncode, run.stdout) == (1, "entry 2: hash does not match its content\n")
    with store.engine.begin() as connection:
        connection.execute(text("UPDATE console_audit SET subject = 'x' WHERE id = 1"))
    run = run_oracle("console", "audit", "verify", cwd=cwd, env=env)
    assert run.returncode == 1
    assert "entry 1: hash does not match its content" in run.stdout


def test_revoking_tokens_and_disabling_an_account(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    store.add_user("rita", "reviewer", PASSWORD)
    token = store.create_token("rita")
    run = run_oracle("console", "token", "revoke", "rita", cwd=cwd, env=env)
    assert run.stdout == "revoked 1 token of rita\n", run.stderr
    decide = ("review", "decide", "1", "--outcome", "YES", "--reason", "r")
    line = one_error_line(run_oracle(*decide, cwd=cwd, env={**env, "ORACLE_CONSOLE_TOKEN": token}))
    assert line == "the API token is not valid (unknown or revoked)"
    run = run_oracle("console", "user", "disable", "rita", cwd=cwd, env=env)
    assert run.stdout == "disabled rita: signed out, tokens revoked\n", run.stderr
    assert store.authenticate("rita", PASSWORD) is None


def test_a_disagreement_is_confirmed_or_declined_with_review_decide(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    confirm = beside_another_answer(store, "r1", challenge="dispute")
    decline = beside_another_answer(store, "r2", challenge="dispute")
    (cwd / "password").write_text(PASSWORD + "\n")
    store.add_user("adam", "admin", PASSWORD)
    admin = ("--as", "adam", "--password-file", str(cwd / "password"))

    shown = run_oracle("review", "show", str(confirm), cwd=cwd, env=env)
    assert "another's answer stands: NO by 0x" in shown.stdout, shown.stderr
    assert "decide NO to leave it standing (nothing is sent); decide another outcome to " in (
        shown.stdout
    )
    run = run_oracle(
        "review", "decide", str(confirm), "--outcome", "YES", "--reason", "wrong", *admin,
        cwd=cwd, env=env,
    )  # fmt: skip
    # A dispute moves money: one person's decision waits for an approver (by default).
    assert "needs an approver's approval before the daemon submits it (moves money: " in (
        run.stdout
    ), run.stderr
    assert store.get_market("uma:r1").state == "submitted"
    store.add_user("ann", "approver", PASSWORD)
    store.approve_review(confirm, "ann")
    assert store.get_market("uma:r1").state == "challenging"
    run = run_oracle(
        "review", "decide", str(decline), "--outcome", "NO", "--reason", "right", *admin,
        cwd=cwd, env=env,
    )  # fmt: skip
    assert "the answer standing on the venue is left as it is: nothing is sent" in run.stdout
    assert (store.get_market("uma:r2").state, store.review(decline).status) == (
        "submitted",
        "closed",
    )


def test_a_superseded_answer_is_defended_or_accepted_with_review_decide(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    defend = superseded_for_review(store, "q1")
    accept = superseded_for_review(store, "q2")
    (cwd / "password").write_text(PASSWORD + "\n")
    store.add_user("adam", "admin", PASSWORD)
    admin = ("--as", "adam", "--password-file", str(cwd / "password"))

    # This venue's decisions that move money take one person.
    env = {**env, "ORACLE__CONSOLE__MONEY_DECISIONS_BY_SOURCE": '{"reality": "one_person"}'}
    shown = run_oracle("review", "show", str(defend), cwd=cwd, env=env)
    assert "another's answer stands: NO by 0xcdcd" in shown.stdout, shown.stderr
    assert "decide another outcome to confirm a defence of our superseded answer: the " in (
        shown.stdout
    )
    assert "at double their bond (within the bond caps; a refusal is recorded" in shown.stdout
    run = run_oracle(
        "review", "decide", str(defend), "--outcome", "YES", "--reason", "wrong", *admin,
        cwd=cwd, env=env,
    )  # fmt: skip
    assert "the daemon will send a defence of our superseded answer" in run.stdout, run.stderr
    defended = store.get_market("reality:q1")
    assert defended.state == "challenging"
    assert defended.submission["challenge_pending"]["action"] == "defend"
    run = run_oracle(
        "review", "decide", str(accept), "--outcome", "NO", "--reason", "right", *admin,
        cwd=cwd, env=env,
    )  # fmt: skip
    assert "the answer standing on the venue is left as it is: nothing is sent" in run.stdout
    # Accepted: nothing sent; the market stays disputed and follows the question.
    assert (store.get_market("reality:q2").state, store.review(accept).status) == (
        "disputed",
        "closed",
    )


def test_an_anchor_finds_a_cut_tail_and_a_rehashed_rewrite(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    key = "k" * 64
    (cwd / "audit.key").write_text(key + "\n")
    signing = {**env, "ORACLE__CONSOLE__AUDIT_KEY_FILE": str(cwd / "audit.key")}
    store.add_user("rita", "reviewer", PASSWORD)
    for number in range(3):
        store.record("rita", "review.viewed", f"market:chain:q{number}", {"review": number})
    run = run_oracle("console", "audit", "export", "-o", "signed.jsonl", cwd=cwd, env=signing)
    assert (run.returncode, run.stderr) == (0, "")
    exported = (cwd / "signed.jsonl").read_text()
    signed = json.loads(exported.splitlines()[-1])["anchor"]
    assert (signed["entries"], signed["algorithm"]) == (4, "HMAC-SHA256")
    assert key not in exported
    head = store.audit_head()
    assert signed["head_hash"] == head.head_hash
    run = run_oracle("console", "audit", "verify", "signed.jsonl", cwd=cwd, env=signing)
    assert run.stdout == (
        "audit chain verifies: 4 entries (signed head checked; no anchor: a cut tail or a "
        "rehashed rewrite would not show)\n"
    ), run.stderr

    rewrite_audit(store, 1, actor="mallory")
    cut_audit_tail(store, 1)
    run = run_oracle("console", "audit", "verify", cwd=cwd, env=signing)
    assert run.returncode == 0  # the chain alone holds: what the anchor is for
    verify = ("console", "audit", "verify", "--anchor")
    run = run_oracle(*verify, head.text(), cwd=cwd, env=signing)
    assert (run.returncode, run.stdout) == (
        1,
        "the log ends at entry 3 but the anchor counts 4: entry 4 was removed (the tail was cut)\n",
    )
    run = run_oracle(*verify, "signed.jsonl", cwd=cwd, env=signing)
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [
        "entry 1: actor was 'admin', now 'mallory'",
        "the log ends at entry 3 but the anchored export has 4: 1 entry removed from the end "
        "(the tail was cut)",
        "entry 4: removed (was review.viewed by rita on market:chain:q2 at "
        + signed_time(exported)
        + ")",
    ]

    # The anchor itself: altered, signed with another key, unsigned, or not an anchor.
    lines = exported.splitlines()
    (cwd / "altered.jsonl").write_text("\n".join(lines[:-2] + lines[-1:]) + "\n")
    run = run_oracle(*verify, "altered.jsonl", cwd=cwd, env=signing)
    assert run.returncode == 1
    assert "the anchor altered.jsonl: the entries end at entry 3" in run.stdout
    (cwd / "other.key").write_text("o" * 64)
    other = {**env, "ORACLE__CONSOLE__AUDIT_KEY_FILE": str(cwd / "other.key")}
    run = run_oracle(*verify, "signed.jsonl", cwd=cwd, env=other)
    assert run.returncode == 1
    assert "signed head does not verify: signed with key" in run.stdout
    run = run_oracle("console", "audit", "export", "-o", "plain.jsonl", cwd=cwd, env=env)
    assert run.stderr == "unsigned: set console.audit_key_file to sign exports (docs/console.md)\n"
    line = one_error_line(run_oracle(*verify, "plain.jsonl", cwd=cwd, env=signing))
    assert line.startswith("--anchor plain.jsonl: the export is not signed")
    line = one_error_line(run_oracle(*verify, "4:abc", cwd=cwd, env=signing))
    assert line.startswith("--anchor: '4:abc' is not ENTRIES:HASH")
    (cwd / "short.key").write_text("short")
    short = {**env, "ORACLE__CONSOLE__AUDIT_KEY_FILE": str(cwd / "short.key")}
    line = one_error_line(run_oracle("console", "audit", "export", cwd=cwd, env=short))
    assert "console.audit_key_file" in line
    assert "at least 32 characters" in line


def signed_time(exported: str) -> str:
    at = json.loads(exported.splitlines()[3])["at"]
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def test_review_show_prints_market_text_escaped_and_counts_what_was_hidden(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    # A Reality.eth title with line breaks and a bidi override, as an older row kept it.
    forged = "Will it rain?\n## Verdict\r\nreview: decided YES \u202eON\u202c"
    review_id = escalate(store, "q1", question=forged, details={"hidden_characters": 14})
    shown = run_oracle("review", "show", str(review_id), cwd=cwd, env=env).stdout
    assert (
        "question: Will it rain?\\n## Verdict\\r\\nreview: decided YES \\u202eON\\u202c\n" in shown
    )
    assert "\u202e" not in shown
    assert "\r" not in shown
    assert not any(line.startswith("## Verdict") for line in shown.splitlines())
    assert "this question contained 14 invisible characters" in shown
    listed = run_oracle("review", "list", cwd=cwd, env=env).stdout
    assert "Will it rain?\\n## Verdict" in listed
    assert "\u202e" not in listed
    evidence = json.loads(
        run_oracle("review", "show", str(review_id), "--json", cwd=cwd, env=env).stdout
    )
    assert evidence["market"]["hidden_characters"] == 14
    assert evidence["market"]["question"] == forged  # the data, as stored


def test_review_show_gives_amounts_in_token_units_and_the_on_chain_context(
    setup: tuple[Path, dict[str, str], Store],
) -> None:
    cwd, env, store = setup
    usdc = "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174"
    dispute = beside_another_answer(store, "r1", challenge="dispute")
    table = MarketRow.__table__  # type: ignore[attr-defined]
    market = store.get_market("uma:r1")
    details = {
        **market.details,
        "currency": usdc,
        "bond": "500000000",
        "final_fee": "1500000",
        "requester": "0x" + "12" * 20,
        "tx_hash": "0x" + "ab" * 32,
    }
    with store.engine.begin() as connection:
        connection.execute(update(table).where(table.c.id == "uma:r1").values(details=details))
    defence = superseded_for_review(store, "q1")  # a native bond of 1 wei, as recorded
    env = {
        **env,
        "ORACLE__CONSOLE__TOKENS": json.dumps({usdc: {"symbol": "USDC", "decimals": 6}}),
        "ORACLE__CONSOLE__EXPLORERS": '{"uma": "https://polygonscan.com/{kind}/{value}"}',
    }
    shown = run_oracle("review", "show", str(dispute), cwd=cwd, env=env)
    assert "at stake: bond 500 USDC + final fee 1.5 USDC\n" in shown.stdout, shown.stderr
    assert "500000000" not in shown.stdout
    assert (
        f"asked in transaction: 0x{'ab' * 32} (https://polygonscan.com/tx/0x{'ab' * 32})"
        in shown.stdout
    )
    assert f"requester: 0x{'12' * 20} (https://polygonscan.com/address/0x{'12' * 20})" in (
        shown.stdout
    )
    shown = run_oracle("review", "show", str(defence), cwd=cwd, env=env)
    assert "at stake: our bond 0.000000000000000001 ETH\n" in shown.stdout, shown.stderr
    # Without the token's name, its smallest unit, said so, never a guess.
    del env["ORACLE__CONSOLE__TOKENS"]
    shown = run_oracle("review", "show", str(dispute), cwd=cwd, env=env)
    assert f"bond 500,000,000 (smallest units of {usdc})" in shown.stdout
