"""Migration afcbc68fbdd3: markets already final get their final outcome from what the
daemon recorded when they became final."""

from __future__ import annotations

from sqlalchemy import text

from oracle.store.engine import make_engine
from oracle.store.migrate import upgrade
from oracle.store.repository import Store


def test_markets_already_final_are_carried_into_the_ledger(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        upgrade(engine, "64613d093a55")
        markets = [
            # id, decided outcome, last audit event into `final`, its reason
            ("v:undisputed", "YES", "window_passed", "challenge window passed undisputed"),
            ("v:overturned", "YES", "dispute_upheld", "arbiter settled on NO"),
            ("v:stood", "NO", "dispute_rejected", "arbiter settled on NO"),
            ("v:nothing", None, None, None),
        ]
        with engine.begin() as connection:
            for market_id, decided, event, reason in markets:
                connection.execute(
                    text(
                        "INSERT INTO market (id, source, external_id, question, criteria, "
                        "outcomes, details, resolve_after, state, state_changed_at, attempts, "
                        "failures, deferrals, next_attempt_at, lease_expires_at, "
                        "decided_outcome, submission, awaits_settlement, version, created_at) "
                        "VALUES (:id, 'v', :id, 'q?', '', '[\"YES\", \"NO\"]', '{}', 0, "
                        "'final', 777, 1, 0, 0, 0, 0, :decided, '{}', false, 0, 0)"
                    ),
                    {"id": market_id, "decided": decided},
                )
                if event is not None:
                    connection.execute(
                        text(
                            "INSERT INTO audit_log (market_id, at, from_state, event, to_state, "
                            "reason, actor) VALUES (:id, 777, 'disputed', :event, 'final', "
                            ":reason, 'r')"
                        ),
                        {"id": market_id, "event": event, "reason": reason},
                    )
        upgrade(engine)
        store = Store(engine)
        found = {
            market_id: (row.outcome, row.finality, row.delivered_outcome, row.final_at)
            for market_id in ("v:undisputed", "v:overturned", "v:stood")
            if (row := store.final_outcome(market_id)) is not None
        }
        assert found == {
            "v:undisputed": ("YES", "time", "YES", 777.0),
            "v:overturned": ("NO", "arbiter", "YES", 777.0),
            "v:stood": ("NO", "arbiter", "NO", 777.0),
        }
        assert store.final_outcome("v:nothing") is None
    finally:
        engine.dispose()
