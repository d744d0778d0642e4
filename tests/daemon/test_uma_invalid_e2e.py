"""A canceled game on UMA's real Optimistic Oracle V2 (compiled from @uma/core) on anvil,
asked as Polymarket asks: the agents (replay) agree, with their sources, that the game was
canceled; with the source's `invalid: propose` (the default) the daemon proposes the
50-50 price, exactly 0.5e18, as Polymarket's proposers do, and UMA settles it there; with
`invalid: review` nothing is proposed and a person gets a review item."""

from __future__ import annotations

from oracle.app import open_store
from oracle.core.lifecycle import MarketState
from oracle.venues.uma.binding import PROPOSE_PREFIX, RequestState

from ..anvil import Anvil
from .test_uma_e2e import OURS, UmaWorld, assert_settled_as, world
from .venue_world import chain_time, et_deadline, intent_keys, one_pass

__all__ = ["world"]  # the fixture, shared with test_uma_e2e

HALF = 5 * 10**17  # UMA's 50-50 price for YES_OR_NO_QUERY: 0.5e18
CANCELED = [("alpha", "INVALID", 0.9), ("beta", "INVALID", 0.85), ("gamma", "INVALID", 0.8)]


def canceled_game(anvil: Anvil) -> str:
    """A game question as Polymarket asks one, its day two days past."""
    day, _ = et_deadline(chain_time(anvil) - 2 * 86400)
    return (
        "q: title: Lakers vs. Celtics, description: In the upcoming NBA game, scheduled for "
        f'{day}: if the Lakers win, the market resolves to "Lakers"; if the Celtics win, to '
        '"Celtics". If the game is postponed after that day or canceled entirely, with no '
        "make-up game, the market resolves 50-50. res_data: p1: 0, p2: 1, p3: 0.5. Where p1 "
        "corresponds to Celtics, p2 to Lakers, p3 to unknown/50-50."
    )


def test_an_agreed_invalid_on_a_canceled_game_is_proposed_at_exactly_half(
    world: UmaWorld, database_url: str
) -> None:
    market_id = world.ask("Lakers vs. Celtics", CANCELED, question=canceled_game(world.anvil))
    settings = world.config(database_url)

    one_pass(settings)

    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.outcomes == ["Celtics", "Lakers"]  # INVALID is reserved, never a label
    assert market.state == MarketState.SUBMITTED, store.audit(market_id)[-1].reason
    assert market.decided_outcome == "INVALID"
    view = world.view(market_id)
    assert view.state == RequestState.PROPOSED
    assert (view.proposer, view.proposed_price) == (OURS, HALF)
    consensus = store.latest_consensus(market_id)
    assert consensus is not None
    assert (consensus.outcome, consensus.action) == ("INVALID", "submit")
    assert consensus.proof["market"]["invalid"] == "propose"

    world.pass_time()
    one_pass(settings)

    assert store.get_market(market_id).state == MarketState.FINAL
    assert world.view(market_id).resolved_price == HALF
    assert_settled_as(store, market_id, "INVALID")


def test_with_invalid_review_the_agreed_invalid_goes_to_a_person_and_no_bond_is_posted(
    world: UmaWorld, database_url: str
) -> None:
    market_id = world.ask("Lakers vs. Celtics", CANCELED, question=canceled_game(world.anvil))
    settings = world.config(database_url, source={"invalid": "review"})
    before = world.balance(OURS)

    one_pass(settings)

    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.NEEDS_REVIEW
    assert world.view(market_id).state == RequestState.REQUESTED
    [item] = store.reviews()
    assert item.market_id == market_id
    assert any("invalid: review" in reason for reason in item.reasons), item.reasons
    consensus = store.latest_consensus(market_id)
    assert consensus is not None
    assert (consensus.outcome, consensus.action) == ("INVALID", "review")
    assert consensus.proof["verdict"]["review_codes"] == ["invalid_answer"]
    assert [k for k in intent_keys(store) if k.startswith(PROPOSE_PREFIX)] == []
    assert world.balance(OURS) == before
    assert world.our_transactions() == []
