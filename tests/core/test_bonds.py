from __future__ import annotations

from decimal import Decimal

import pytest

from oracle.core.bonds import (
    OUR_PROPOSAL_DISPUTED,
    BondCaps,
    ManagedTerms,
    Refusal,
    allowance_to_approve,
    check_bond,
    gas_cost_in_currency,
    reask_review_reasons,
    to_units,
)

E6 = 10**6  # a six-decimal currency (USDC)


def test_within_every_cap_the_bond_may_be_posted() -> None:
    caps = BondCaps(max_per_request=1000 * E6, max_outstanding=2000 * E6, min_reward=2 * E6)
    assert (
        check_bond(
            bond=500 * E6,
            final_fee=500 * E6,
            reward=5 * E6,
            outstanding=1000 * E6,
            caps=caps,
            gas_cost=E6,
        )
        is None
    )
    assert check_bond(bond=0, final_fee=0, reward=0, outstanding=0, caps=BondCaps()) is None


@pytest.mark.parametrize(
    ("kwargs", "reason", "detail"),
    [
        (
            {"bond": 900 * E6, "final_fee": 101 * E6},
            "per_request_cap",
            "bond + final fee 1001000000 is above the per-request cap 1000000000",
        ),
        (
            {"outstanding": 1500 * E6 + 1},
            "outstanding_cap",
            "1500000001 already posted + 500000000 would be above the cap 2000000000",
        ),
        ({"reward": 2 * E6 - 1}, "reward_below_minimum", "reward 1999999 is below the minimum"),
        ({"gas_cost": 6 * E6}, "reward_below_gas", "reward 5000000 does not cover"),
    ],
)
def test_each_cap_refuses_with_its_reason(kwargs: dict[str, int], reason: str, detail: str) -> None:
    caps = BondCaps(max_per_request=1000 * E6, max_outstanding=2000 * E6, min_reward=2 * E6)
    proposal = {"bond": 400 * E6, "final_fee": 100 * E6, "reward": 5 * E6, "outstanding": 0}
    refusal = check_bond(**{**proposal, **kwargs}, caps=caps)  # type: ignore[arg-type]
    assert isinstance(refusal, Refusal)
    assert refusal.reason == reason
    assert detail in refusal.detail


def test_amounts_convert_to_the_smallest_unit_rounding_up() -> None:
    assert to_units(Decimal("100.5"), 6) == 100_500_000
    assert to_units(Decimal("0.0000001"), 6) == 1
    assert to_units(Decimal(1), 18) == 10**18
    # 150k gas at 30 gwei = 0.0045 of the native token, at 0.2 currency units each: 0.0009.
    assert gas_cost_in_currency(150_000, 30 * 10**9, Decimal("0.2"), 6) == 900
    with pytest.raises(ValueError, match="decimals"):
        to_units(Decimal(1), -1)
    with pytest.raises(ValueError, match="reward: expected a non-negative amount"):
        check_bond(bond=1, final_fee=1, reward=-1, outstanding=0, caps=BondCaps())


def test_caps_set_in_whole_tokens_are_kept_in_the_smallest_unit_rounding_up() -> None:
    caps = BondCaps.in_units(
        6,
        max_per_request=Decimal("100.5"),
        max_outstanding=Decimal("0.0000001"),
        min_reward=Decimal(2),
    )
    assert caps == BondCaps(max_per_request=100_500_000, max_outstanding=1, min_reward=2 * E6)
    # A cap not set is no cap; no reward asked is none.
    assert BondCaps.in_units(18, max_per_request=None, max_outstanding=None) == BondCaps()


def test_a_reask_of_our_disputed_proposal_goes_to_a_person() -> None:
    ours = {"proposer": "0xUs", "disputer": "0xThem", "ours": True}
    [reason] = reask_review_reasons(ours)
    assert reason.code == OUR_PROPOSAL_DISPUTED
    assert "disputed by 0xThem" in reason.message
    # Another's disputed proposal, or not a re-ask at all: nothing for a person.
    assert reask_review_reasons({**ours, "ours": False}) == []
    assert reask_review_reasons(None) == []


# --- UMA's managed OOv2 and the bond currency's allowance ----------------------------------

US, THEM = "0x" + "aB" * 20, "0x" + "cd" * 20


def test_the_managed_whitelist_lets_through_only_whom_it_lists_unless_disabled() -> None:
    assert ManagedTerms((US.lower(),), enabled=True).may_propose(US)  # case does not matter
    assert not ManagedTerms((THEM,), enabled=True).may_propose(US)
    assert not ManagedTerms((), enabled=True).may_propose(US)
    assert ManagedTerms((), enabled=False).may_propose(US)  # disabled: anyone


def test_the_request_managers_bond_and_liveness_win_when_set() -> None:
    plain = ManagedTerms((), enabled=False)
    assert plain.charged_bond(100) == 100
    assert plain.liveness(0, 7200) == 7200
    assert plain.liveness(3600, 7200) == 3600
    custom = ManagedTerms((), enabled=False, custom_bond=5000, custom_liveness=900)
    assert custom.charged_bond(100) == 5000
    assert custom.liveness(3600, 7200) == 900


@pytest.mark.parametrize(
    ("current", "needed", "configured", "approved"),
    [
        (0, 105, None, 105),  # exactly what the bond needs
        (104, 105, None, 105),  # topped up to exactly the need
        (105, 105, None, None),  # covered: nothing sent
        (10**30, 105, None, None),
        (0, 105, 1000, 1000),  # a larger standing allowance, when configured
        (0, 105, 50, 105),  # a configured one below the need: the need
        (600, 105, 1000, None),
    ],
)
def test_the_allowance_approved_is_what_the_bond_needs_unless_configured_larger(
    current: int, needed: int, configured: int | None, approved: int | None
) -> None:
    assert allowance_to_approve(current, needed, configured) == approved


def test_a_bad_allowance_figure_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match="never negative"):
        allowance_to_approve(-1, 5, None)
    with pytest.raises(ValueError, match="configured allowance is positive"):
        allowance_to_approve(0, 5, 0)
