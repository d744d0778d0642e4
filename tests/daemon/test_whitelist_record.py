"""`oracle accuracy` reports each venue's signer's record as UMA's proposer-whitelist
guideline counts it (at least 5 proposals on OOv2 in six months, more than 95 %
accurate), with the second opinions that would have been proposals, from a database
seeded as the daemon leaves it: markets answered (`proposal_confirmed` in the audit
trail, the receipt in `submission`) and their final outcomes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml
from sqlmodel import Session

from oracle.store.engine import make_engine
from oracle.store.migrate import upgrade
from oracle.store.tables import AuditRow, FinalOutcomeRow, MarketRow
from tests.commands import run_oracle

OURS = "0x" + "ab" * 20
OTHER = "0x" + "cd" * 20
DAY = 86_400.0


def seed(url: str, now: float) -> None:
    engine = make_engine(url, set_wal=False)
    upgrade(engine)
    rows: list[Any] = []

    def market(
        market_id: str,
        *,
        venue: str = "polymarket",
        at: float,
        ours: str = "YES",
        final: str | None = "YES",
        receipt: dict[str, Any] | None = None,
        state: str | None = None,
    ) -> None:
        rows.append(
            MarketRow(
                id=market_id,
                source=venue,
                external_id=market_id,
                question="Did it happen?",
                outcomes=["NO", "YES"],
                resolve_after=at - DAY,
                state=state or ("final" if final is not None else "submitted"),
                state_changed_at=at,
                created_at=at - DAY,
                decided_outcome=ours,
                submission=receipt or {"proposer": OURS, "signer": OURS},
            )
        )
        rows.append(
            AuditRow(
                market_id=market_id,
                at=at,
                from_state="submitting",
                event="proposal_confirmed",
                to_state="submitted",
                actor="daemon",
            )
        )
        if final is not None:
            rows.append(
                FinalOutcomeRow(
                    market_id=market_id,
                    venue=venue,
                    outcome=final,
                    finality="uma-settlement",
                    final_at=at + DAY,
                    delivered_outcome=ours,
                    recorded_by="daemon",
                )
            )

    for n in range(6):  # six proposals, settled as proposed
        market(f"uma:{n}", at=now - (10 + n) * DAY)
    market("uma:pending", at=now - DAY, final=None)  # liveness running: not judged yet
    market("uma:old", at=now - 200 * DAY, final="NO")  # wrong, but outside six months
    market("uma:still-here", at=now - 170 * DAY, ours="NO", final="NO")
    # Another proposed first; our verdict was kept beside theirs: second opinions.
    kept = {"proposer": OTHER, "signer": OURS, "proposed_by_other": True, "agrees": False}
    market("uma:kept-right", at=now - 5 * DAY, final="NO", receipt={**kept, "our_outcome": "NO"})
    market("uma:kept-wrong", at=now - 4 * DAY, final="YES", receipt={**kept, "our_outcome": "NO"})
    # Kept by a venue that could not propose at all (a managed oracle's whitelist).
    market(
        "uma:off-list",
        at=now - 3 * DAY,
        final=None,
        receipt={"second_opinion": True, "signer": OURS, "our_outcome": "YES"},
    )
    # Reality.eth: the guideline does not count it; one answer of two wrong.
    answered = {"answerer": OURS, "signer": OURS}
    market("reality:1", venue="reality", at=now - 2 * DAY, receipt=answered)
    market("reality:2", venue="reality", at=now - 2 * DAY, final="NO", receipt=answered)
    # Researched, never answered: no proposal.
    rows.append(
        MarketRow(
            id="uma:review",
            source="polymarket",
            external_id="uma:review",
            question="Q?",
            outcomes=["NO", "YES"],
            resolve_after=now,
            state="needs_review",
            state_changed_at=now,
            created_at=now,
        )
    )
    with Session(engine) as session:  # markets first: the ledger's rows refer to them
        session.add_all([r for r in rows if isinstance(r, MarketRow)])
        session.commit()
        session.add_all([r for r in rows if not isinstance(r, MarketRow)])
        session.commit()
    engine.dispose()


def test_oracle_accuracy_reports_the_whitelist_record_per_venue_and_signer(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'oracle.db'}"
    seed(url, time.time())
    config = tmp_path / "oracle.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "database": {"url": url},
                "market_sources": [
                    {"kind": "uma", "name": "polymarket", "oracle_address": "0x" + "11" * 20}
                ],
            }
        )
    )
    text = run_oracle("accuracy", "--config", str(config))
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert "proposer whitelist record:" in out
    assert f"polymarket {OURS}: guideline met" in out
    # Six settled and one older inside the window, one pending; uma:old is outside.
    assert "  proposals: 8  judged 7, accurate 7, pending 1, accuracy 100.0%" in out
    assert (
        "  second opinions (would have been proposals): 3  judged 2, accurate 1, "
        "pending 1, accuracy 50.0%" in out
    )
    assert "  both together: 11  judged 9, accurate 8, pending 2, accuracy 88.9%" in out
    assert "(would not meet it)" in out
    assert f"reality {OURS}: guideline n/a" in out
    assert "inaccurate proposals: reality:2" in out
    assert "uma:old" not in out

    as_json = run_oracle("accuracy", "--config", str(config), "--json")
    assert as_json.returncode == 0, as_json.stderr
    whitelist = json.loads(as_json.stdout)["whitelist"]
    assert (whitelist["min_proposals"], whitelist["min_accuracy"]) == (5, 0.95)
    assert whitelist["to"] - whitelist["from"] > 180 * DAY
    by = {(s["venue"], s["signer"]): s for s in whitelist["signers"]}
    assert set(by) == {("polymarket", OURS), ("reality", OURS)}
    uma = by["polymarket", OURS]
    assert uma["guideline"] is True
    assert (uma["proposals"]["judged"], uma["proposals"]["meets"]) == (7, True)
    assert uma["second_opinions"]["answers"] == 3
    assert uma["with_second_opinions"]["meets"] is False
    reality = by["reality", OURS]
    assert reality["guideline"] is None
    assert (reality["proposals"]["accurate"], reality["inaccurate"]) == (1, ["reality:2"])

    only = json.loads(
        run_oracle("accuracy", "--config", str(config), "--json", "--venue", "reality").stdout
    )
    assert [s["venue"] for s in only["whitelist"]["signers"]] == ["reality"]
