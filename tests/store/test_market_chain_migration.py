"""Migration c5d81f3a7e29: every market names its chain, markets recorded before by the
configuration the migration runs with (each chain source's chain)."""

from __future__ import annotations

from sqlalchemy import text

from oracle.core.markets import MarketSpec
from oracle.store.engine import make_engine
from oracle.store.migrate import upgrade
from oracle.store.repository import Store

BEFORE = "9a4e2c7b1d05"  # the head before markets had a chain


def _market(connection: object, market_id: str, source: str) -> None:
    connection.execute(  # type: ignore[attr-defined]
        text(
            "INSERT INTO market (id, source, external_id, question, criteria, outcomes, "
            "details, resolve_after, state, state_changed_at, attempts, failures, deferrals, "
            "next_attempt_at, lease_expires_at, submission, awaits_settlement, version, "
            "created_at, early_checks, late_deferrals) VALUES (:id, :source, :id, 'q?', '', "
            "'[\"YES\", \"NO\"]', '{}', 0, 'discovered', 1, 0, 0, 0, 0, 0, '{}', false, 0, "
            "0, 0, 0)"
        ),
        {"id": market_id, "source": source},
    )


def test_markets_written_by_the_previous_schema_get_their_sources_chain(
    database_url: str,
) -> None:
    engine = make_engine(database_url)
    try:
        upgrade(engine, BEFORE)
        with engine.begin() as connection:
            _market(connection, "uma:1", "uma")
            _market(connection, "reality:1", "reality")
            _market(connection, "http:1", "http")  # on no chain
            _market(connection, "gone:1", "gone")  # a source no longer configured
        upgrade(engine, source_chains={"uma": "polygon", "reality": "gnosis"})
        store = Store(engine)
        chains = {m: store.get_market(m).chain for m in ("uma:1", "reality:1", "http:1", "gone:1")}
        assert chains == {
            "uma:1": "polygon",
            "reality:1": "gnosis",
            "http:1": None,
            "gone:1": None,
        }
        # The daemon records each source's chain with the markets it finds from now on,
        # and names those still without one (a source configured again).
        assert store.name_chains({"uma": "polygon", "reality": "gnosis", "gone": "base"}) == 1
        assert store.get_market("gone:1").chain == "base"
        spec = MarketSpec(
            source="uma", external_id="2", question="q?", outcomes=("YES", "NO"), resolve_after=0
        )
        assert store.add_discovered([spec], "test") == ["uma:2"]
        assert store.get_market("uma:2").chain == "polygon"
        # The review queue filters by chain and venue.
        assert store.review_queue(None, chain="polygon") == []
    finally:
        engine.dispose()


def test_without_the_configuration_markets_keep_no_chain_until_the_daemon_names_it(
    database_url: str,
) -> None:
    engine = make_engine(database_url)
    try:
        upgrade(engine, BEFORE)
        with engine.begin() as connection:
            _market(connection, "uma:1", "uma")
        upgrade(engine)
        store = Store(engine)
        assert store.get_market("uma:1").chain is None
        assert store.name_chains({"uma": "default"}) == 1
        assert store.get_market("uma:1").chain == "default"
        assert store.name_chains({"uma": "other"}) == 0  # a named market keeps its chain
        assert store.get_market("uma:1").chain == "default"
    finally:
        engine.dispose()


def test_the_accuracy_ledger_filters_by_chain(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        upgrade(engine)
        store = Store(engine)
        store.name_chains({"uma": "polygon", "reality": "gnosis"})
        specs = [
            MarketSpec(source=source, external_id="1", question="q?", resolve_after=0)
            for source in ("uma", "reality")
        ]
        store.add_discovered(specs, "test")
        for market_id in ("uma:1", "reality:1"):
            store.record_final_outcome(market_id, "YES", recorded_by="t", reason="settled")
        by_chain = {
            chain: [m.market_id for m in store.scored_markets(chain=chain)]
            for chain in ("polygon", "gnosis", "base")
        }
        assert by_chain == {"polygon": ["uma:1"], "gnosis": ["reality:1"], "base": []}
        assert len(store.scored_markets()) == 2
        assert store.disagreements(chain="polygon") == []
    finally:
        engine.dispose()
