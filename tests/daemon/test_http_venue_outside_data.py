"""An HTTP venue's market list is outside data: an item the daemon cannot use is skipped
and named, never an exception out of the poll."""

from __future__ import annotations

from oracle import safe_json
from oracle.venues.http.settings import HttpSourceConfig
from oracle.venues.http.venue import parse_market_list

CONFIG = HttpSourceConfig.model_validate(
    {
        "name": "venue",
        "kind": "http",
        "url": "http://venue.example/markets",
        "result_url": "http://venue.example/results",
    }
)


def test_times_the_daemon_cannot_use_skip_their_item() -> None:
    body = (
        '[{"id": "ok", "question": "Q?", "resolve_after": 1700000000},'
        ' {"id": "huge", "question": "Q?", "resolve_after": 1' + "0" * 400 + "},"
        ' {"id": "nan", "question": "Q?", "resolve_after": NaN},'
        ' {"id": "inf", "question": "Q?", "resolve_after": -Infinity},'
        ' {"id": "1e400", "question": "Q?", "resolve_after": 1e400},'
        ' {"id": "ancient", "question": "Q?", "resolve_after": "0001-01-01T00:00:00+14:00"}]'
    )
    result = parse_market_list(CONFIG, safe_json.loads(body))
    assert [m.external_id for m in result.markets] == ["ok", "ancient"]
    assert len(result.skipped) == 4
    assert result.skipped[0].startswith("source venue: item 1: ")
    assert all("not a time" in problem for problem in result.skipped[1:])
