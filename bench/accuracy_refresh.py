"""What one refresh of the accuracy ledger's rolling figures costs (the `housekeep` job,
every metrics.accuracy_refresh_interval): `Store.scored_markets` over 30 days of final
outcomes, then `rolling_figures`.

Run: .venv/bin/python bench/accuracy_refresh.py [--markets N] [--agents A] [--url URL]

The database (a fresh SQLite file unless --url names another) is filled with N final
markets, each with a research run of A answers, its verdict and its final outcome,
written as the daemon's tables hold them (bulk inserts: the daemon's own write path is
measured by bench/pipeline.py).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sqlalchemy import Table, insert

from oracle.core.scoring import rolling_figures
from oracle.store.engine import make_engine
from oracle.store.migrate import upgrade
from oracle.store.repository import Store
from oracle.store.tables import (
    AgentResultRow,
    ConsensusRow,
    FinalOutcomeRow,
    MarketRow,
    ResearchRunRow,
)

DAY = 86_400.0


def table(model: type) -> Table:
    found: Table = model.__table__  # type: ignore[attr-defined]
    return found


def fill(store: Store, markets: int, agents: int, now: float) -> None:
    market_rows, runs, results, verdicts, finals = [], [], [], [], []
    for i in range(markets):
        market_id = f"bench:{i}"
        final_at = now - (i % 30) * DAY - 1
        truth = "YES" if i % 3 else "NO"
        market_rows.append(
            {
                "id": market_id,
                "source": "bench",
                "external_id": str(i),
                "question": f"Question {i}?",
                "criteria": "",
                "outcomes": ["YES", "NO"],
                "details": {},
                "resolve_after": 0.0,
                "state": "final",
                "state_changed_at": final_at,
                "created_at": 0.0,
                "decided_outcome": "YES",
                "submission": {},
            }
        )
        runs.append(
            {
                "id": i + 1,
                "market_id": market_id,
                "attempt": 1,
                "started_at": 0.0,
                "status": "done",
                "owner": "bench",
            }
        )
        for a in range(agents):
            results.append(
                {
                    "run_id": i + 1,
                    "agent_id": f"agent-{a}",
                    "outcome": "YES" if (i + a) % 4 else "NO",
                    "confidence": 0.6 + 0.1 * (a % 4),
                    "reasoning": "",
                    "model_family": f"family-{a % 3}",
                    "latency_seconds": 1.0,
                    "created_at": 0.0,
                }
            )
        verdicts.append(
            {
                "market_id": market_id,
                "run_id": i + 1,
                "outcome": "YES",
                "reached": True,
                "action": "submit",
                "review_reasons": [],
                "checksum": f"{i:064x}",
                "proof": {"checksum": f"{i:064x}"},
                "created_at": 0.0,
            }
        )
        finals.append(
            {
                "market_id": market_id,
                "venue": "bench",
                "outcome": truth,
                "finality": "time",
                "final_at": final_at,
                "delivered_outcome": "YES",
                "recorded_by": "bench",
                "reason": "",
            }
        )
    with store.engine.begin() as connection:
        for model, rows in (
            (MarketRow, market_rows),
            (ResearchRunRow, runs),
            (AgentResultRow, results),
            (ConsensusRow, verdicts),
            (FinalOutcomeRow, finals),
        ):
            connection.execute(insert(table(model)), rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markets", type=int, default=10_000)
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'bench.db'}"
        engine = make_engine(url)
        upgrade(engine)
        store = Store(engine)
        now = 100 * DAY
        fill(store, args.markets, args.agents, now)
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            markets = store.scored_markets(since=now - 30 * DAY)
            read = time.perf_counter()
            figures = rolling_figures(markets, now, min_answers=10)
            done = time.perf_counter()
            timings.append((read - started, done - read))
        engine.dispose()
    read, score = min(timings)
    print(
        f"{len(markets)} final markets x {args.agents} agents: read {read:.2f} s, "
        f"score {score:.2f} s (best of 3); 7d auto-submitted accuracy "
        f"{figures[0].auto_accuracy:.3f}"
    )


if __name__ == "__main__":
    main()
