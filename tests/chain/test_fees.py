from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.chain.fees import (
    GWEI,
    FeePolicy,
    Fees,
    bump_fees,
    ceil_mul,
    choose_fees,
    gas_limit,
    gwei_to_wei,
    median,
)

wei = st.integers(min_value=0, max_value=10**6 * GWEI)
positive_wei = st.integers(min_value=1, max_value=10**6 * GWEI)
bumps = st.fractions(min_value=Fraction(1, 10), max_value=Fraction(2))


@st.composite
def policies(draw: st.DrawFn) -> FeePolicy:
    min_tip = draw(st.integers(0, 10 * GWEI))
    max_tip = draw(st.integers(min_tip, 20 * GWEI))
    return FeePolicy(
        max_fee_per_gas=draw(positive_wei),
        min_priority_fee=min_tip,
        max_priority_fee=max_tip,
        base_fee_multiplier=draw(st.fractions(min_value=1, max_value=4)),
        bump=draw(bumps),
    )


@st.composite
def fees(draw: st.DrawFn) -> Fees:
    max_fee = draw(wei)
    return Fees(max_fee, draw(st.integers(0, max_fee)))


def test_choose_fees_uses_next_base_fee_and_median_tip() -> None:
    policy = FeePolicy(max_fee_per_gas=100 * GWEI, min_priority_fee=GWEI // 10)
    choice = choose_fees([5 * GWEI, 6 * GWEI, 7 * GWEI], [2 * GWEI, 1 * GWEI, 3 * GWEI], policy)
    assert choice.fees == Fees(2 * 7 * GWEI + 2 * GWEI, 2 * GWEI)
    assert choice.required == 9 * GWEI
    assert not choice.above_cap


def test_choose_fees_clamps_fee_cap_to_policy_maximum() -> None:
    policy = FeePolicy(max_fee_per_gas=10 * GWEI, min_priority_fee=GWEI)
    choice = choose_fees([8 * GWEI], [0], policy)
    assert choice.fees == Fees(10 * GWEI, GWEI)


def test_choose_fees_refuses_above_cap() -> None:
    policy = FeePolicy(max_fee_per_gas=10 * GWEI, min_priority_fee=GWEI)
    choice = choose_fees([10 * GWEI], [0], policy)
    assert choice.above_cap
    assert choice.required == 11 * GWEI


def test_bump_is_at_least_the_percentage_on_both_fields() -> None:
    policy = FeePolicy(max_fee_per_gas=100 * GWEI)
    previous = Fees(10 * GWEI, GWEI)
    market = choose_fees([GWEI], [0], policy)
    assert bump_fees(previous, market, policy) == Fees(11_250_000_000, 1_125_000_000)


def test_bump_refused_above_cap() -> None:
    policy = FeePolicy(max_fee_per_gas=11 * GWEI)
    market = choose_fees([GWEI], [0], policy)
    assert bump_fees(Fees(10 * GWEI, GWEI), market, policy) is None


def test_policy_rejects_small_bump() -> None:
    with pytest.raises(ValueError, match="10%"):
        FeePolicy(max_fee_per_gas=GWEI, bump=Fraction(5, 100))


def test_gas_limit_multiplies_and_caps() -> None:
    assert gas_limit(21_000, Fraction(12, 10), 30_000_000) == 25_200
    assert gas_limit(100_001, Fraction(3, 2), 150_000) == 150_000
    with pytest.raises(ValueError, match="exceeds"):
        gas_limit(200_000, Fraction(1), 150_000)


def test_gwei_to_wei() -> None:
    assert gwei_to_wei("1.5") == 1_500_000_000
    assert gwei_to_wei(0.1) == 100_000_000


@given(st.lists(wei, min_size=1, max_size=8), st.lists(wei, max_size=8), policies())
def test_chosen_fees_never_exceed_cap_and_cover_next_base_fee(
    base_fees: list[int], rewards: list[int], policy: FeePolicy
) -> None:
    choice = choose_fees(base_fees, rewards, policy)
    assert policy.min_priority_fee <= choice.priority_fee <= policy.max_priority_fee
    if choice.fees is None:
        assert base_fees[-1] + choice.priority_fee > policy.max_fee_per_gas
    else:
        assert choice.fees.max_fee_per_gas <= policy.max_fee_per_gas
        assert choice.fees.max_fee_per_gas >= base_fees[-1] + choice.fees.max_priority_fee_per_gas
        assert choice.fees.max_priority_fee_per_gas <= choice.fees.max_fee_per_gas


@given(fees(), st.lists(wei, min_size=1, max_size=4), st.lists(wei, max_size=4), policies())
def test_bumped_fees_rise_enough_and_respect_cap(
    previous: Fees, base_fees: list[int], rewards: list[int], policy: FeePolicy
) -> None:
    market = choose_fees(base_fees, rewards, policy)
    bumped = bump_fees(previous, market, policy)
    if bumped is None:
        return
    # Nodes require +10% on both fields; the policy's bump is at least that.
    assert bumped.max_fee_per_gas * 10 >= previous.max_fee_per_gas * 11
    assert bumped.max_priority_fee_per_gas * 10 >= previous.max_priority_fee_per_gas * 11
    assert bumped.max_fee_per_gas > previous.max_fee_per_gas
    assert bumped.max_priority_fee_per_gas > previous.max_priority_fee_per_gas
    assert bumped.max_fee_per_gas <= policy.max_fee_per_gas
    assert market.fees is not None
    assert bumped.max_fee_per_gas >= market.fees.max_fee_per_gas


@given(fees(), policies())
def test_bump_refusal_means_no_valid_replacement_fits(previous: Fees, policy: FeePolicy) -> None:
    market = choose_fees([0], [0], policy)
    if bump_fees(previous, market, policy) is None:
        needed = max(
            ceil_mul(previous.max_fee_per_gas, 1 + policy.bump), previous.max_fee_per_gas + 1
        )
        assert needed > policy.max_fee_per_gas or market.required > policy.max_fee_per_gas


@given(st.integers(1, 10**8), st.fractions(min_value=1, max_value=3), st.integers(1, 10**9))
def test_gas_limit_properties(estimate: int, multiplier: Fraction, ceiling: int) -> None:
    if estimate > ceiling:
        with pytest.raises(ValueError, match="exceeds"):
            gas_limit(estimate, multiplier, ceiling)
        return
    limit = gas_limit(estimate, multiplier, ceiling)
    assert estimate <= limit <= ceiling
    assert limit == min(ceiling, -(-estimate * multiplier.numerator // multiplier.denominator))


@given(st.lists(st.integers(0, 100), min_size=1))
def test_median_is_an_element_with_half_at_or_below(values: list[int]) -> None:
    m = median(values)
    assert m in values
    assert 2 * sum(v <= m for v in values) >= len(values)
