"""A value market (a Reality.eth uint, say) in the review console: the values the agents
voted are shown as the answers they are, the form takes a typed value beside INVALID, and
a value not in its canonical spelling is refused naming it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.markets import VALUE_FORMAT, MarketSpec
from oracle.store.repository import Store
from oracle.testing import result

from .helpers import make_store, run, sign_in
from .scenario import research_again


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return make_store(tmp_path)


def test_a_contested_value_is_shown_and_decided_as_a_typed_value(store: Store) -> None:
    spec = MarketSpec(
        source="reality",
        external_id="0xq",
        question="How many ships docked, in thousands?",
        resolve_after=1.0,
        outcomes=(),
        details={VALUE_FORMAT: {"kind": "number", "decimals": 18}},
    )
    store.add_discovered([spec], actor="poller")
    store.apply_event(spec.market_id, MarketEvent.DUE, actor="poller")
    review_id = research_again(
        store,
        spec.market_id,
        [
            result("claude-researcher", "2.75", 0.8),
            result("gpt-researcher", "2.75", 0.75),
            result("llama-researcher", "3", 0.8),
            result("mistral-researcher", "3", 0.7),
        ],
    )

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert "<bdi>2.75</bdi> <span" in html
        assert "<bdi>3</bdi> <span" in html
        assert "Or a value: a non-negative number" in html
        assert 'name="value"' in html
        form = {
            "csrf_token": re.search(r'name="csrf_token" value="([^"]+)"', html)[1],  # type: ignore[index]
            "consensus_id": re.search(r'name="consensus_id" value="(\d+)"', html)[1],  # type: ignore[index]
            "checksum": re.search(r'name="checksum" value="([0-9a-f]{64})"', html)[1],  # type: ignore[index]
            "reason": "the port's figures",
            "confirm": "yes",
        }
        refused = await client.post(f"/reviews/{review_id}/decide", data={**form, "value": "2.750"})
        assert refused.status == 400
        assert "write it &#39;2.75&#39;, its canonical spelling" in await refused.text()
        await client.post(f"/reviews/{review_id}/decide", data={**form, "value": "2.75"})

    run(store, scenario)
    market = store.get_market(spec.market_id)
    assert market.state == MarketState.REVIEWED
    assert market.decided_outcome == "2.75"
