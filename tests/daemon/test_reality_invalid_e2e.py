"""A question with no answer by its terms on the real RealityETH_v3_0 on anvil: the
agents (replay) agree it is INVALID; with the source's `invalid: propose` (the default)
the daemon answers `0xff…ff` with its bond, as Reality.eth's answerers do, and the
timeout finalizes it there; with `invalid: review` nothing is posted and a person gets a
review item."""

from __future__ import annotations

from oracle.app import open_store
from oracle.core.lifecycle import MarketState
from oracle.venues.reality.rules import INVALID_ANSWER

from .test_reality_e2e import INITIAL, OURS, TIMEOUT, RealityWorld, world
from .venue_world import one_pass

__all__ = ["world"]  # the fixture, shared with test_reality_e2e

VOID = [("alpha", "INVALID", 0.9), ("beta", "INVALID", 0.85), ("gamma", "INVALID", 0.8)]


def test_an_agreed_invalid_is_answered_with_a_bond_and_finalizes_invalid(
    world: RealityWorld, database_url: str
) -> None:
    market_id = world.ask("Did the match that was called off end in a home win?", VOID)
    settings = world.config(database_url)

    one_pass(settings)

    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.SUBMITTED, store.audit(market_id)[-1].reason
    assert market.decided_outcome == "INVALID"
    assert world.history(market_id) == [(OURS, INITIAL, INVALID_ANSWER)]
    assert market.submission["signer"].lower() == OURS.lower()

    world.elapse(TIMEOUT + 1)
    one_pass(settings)

    assert store.get_market(market_id).state == MarketState.FINAL
    final = store.final_outcome(market_id)
    assert final is not None
    assert (final.outcome, final.delivered_outcome) == ("INVALID", "INVALID")


def test_with_invalid_review_an_agreed_invalid_goes_to_a_person_with_no_bond(
    world: RealityWorld, database_url: str
) -> None:
    market_id = world.ask("Did the match that was called off end in a home win?", VOID)
    settings = world.config(database_url, source={"invalid": "review"})

    one_pass(settings)

    store = open_store(settings)
    assert store.get_market(market_id).state == MarketState.NEEDS_REVIEW
    assert world.history(market_id) == []
    [item] = store.reviews()
    assert any("invalid: review" in reason for reason in item.reasons), item.reasons
    assert world.our_transactions() == []
