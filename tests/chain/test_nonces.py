from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.chain.nonces import NonceBook, plan_nonce


def test_first_plan_uses_the_chain() -> None:
    plan = plan_nonce(7, set(), None)
    assert (plan.next_nonce, plan.holes, plan.resynced) == (7, (), False)


def test_live_nonces_the_node_has_not_seen_are_skipped() -> None:
    assert plan_nonce(3, {3, 4}, 5).next_nonce == 5


def test_nonce_too_low_moves_the_counter_up() -> None:
    plan = plan_nonce(9, set(), 4)
    assert plan.next_nonce == 9
    assert plan.resynced


def test_counter_ahead_of_everything_is_resynced_down() -> None:
    plan = plan_nonce(4, set(), 6)
    assert plan.next_nonce == 4
    assert plan.resynced


def test_holes_below_a_live_nonce() -> None:
    assert plan_nonce(2, {5}, 6).holes == (2, 3, 4)
    assert plan_nonce(2, {2, 3}, 4).holes == ()


def test_negative_nonces_rejected() -> None:
    with pytest.raises(ValueError, match="negative"):
        plan_nonce(-1, set(), None)


def test_book_take_and_give_back() -> None:
    book = NonceBook()
    with pytest.raises(RuntimeError):
        book.take()
    book.plan(3, set())
    assert book.take() == 3
    assert book.take() == 4
    book.give_back(4)
    assert book.next_nonce == 4
    book.give_back(1)  # not the latest: ignored
    assert book.next_nonce == 4


@given(
    st.integers(0, 50),
    st.sets(st.integers(0, 60), max_size=10),
    st.one_of(st.none(), st.integers(0, 80)),
)
def test_planned_nonce_never_collides(chain: int, live: set[int], local: int | None) -> None:
    plan = plan_nonce(chain, live, local)
    assert plan.next_nonce not in live
    assert plan.next_nonce >= chain
    assert all(plan.next_nonce > n for n in live)
    assert not set(plan.holes) & live
    assert all(chain <= h < plan.next_nonce for h in plan.holes)
    # Every nonce between the node's pending nonce and ours is either live or a hole.
    assert set(range(chain, plan.next_nonce)) == live.intersection(
        range(chain, plan.next_nonce)
    ) | set(plan.holes)


@given(st.lists(st.tuples(st.integers(0, 30), st.booleans()), min_size=1, max_size=30))
def test_concurrent_style_sequences_hand_out_distinct_live_nonces(
    steps: list[tuple[int, bool]],
) -> None:
    # Each step: the node reports a pending nonce that counts every mined transaction but
    # maybe not all of our broadcast ones; we take a nonce and either keep it live or
    # finish the oldest (it was mined, so the node now counts it).
    book = NonceBook()
    live: set[int] = set()
    mined: set[int] = set()
    for reported, finish in steps:
        chain = len(mined) + min(reported, len(live))
        book.plan(chain, live)
        nonce = book.take()
        assert nonce not in live
        assert nonce not in mined
        live.add(nonce)
        if finish and min(live) == len(mined):
            done = min(live)
            live.discard(done)
            mined.add(done)
