"""Pure fee and gas arithmetic for EIP-1559 transactions; no I/O.

* `choose_fees`: from `eth_feeHistory` (base fees, including the next block's, and one
  reward percentile per block) to a tip and a fee cap, or a refusal when even the next
  block's base fee plus the minimum tip exceeds the configured maximum fee.
* `bump_fees`: fees for a replacement: at least `bump_percent` above the previous
  attempt on *both* fields (nodes refuse replacements below +10%), at least what the
  market asks now, and never above the maximum fee.
* `gas_limit`: estimate x multiplier, rounded up, never above a ceiling.

All amounts are integers in wei; ratios are `Fraction`s so nothing is lost to rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from oracle.chain.settings import TxSettings, decimal_fraction

GWEI = 10**9
MIN_REPLACEMENT_BUMP = Fraction(10, 100)  # what geth, Erigon, Nethermind and Besu require


def gwei_to_wei(gwei: Decimal | float | int | str) -> int:
    """`1.5` gwei -> 1_500_000_000 wei (rounded down to a whole wei)."""
    return int(Decimal(str(gwei)) * GWEI)


def ceil_mul(value: int, factor: Fraction) -> int:
    """`ceil(value * factor)` in exact integer arithmetic."""
    return -((-value * factor.numerator) // factor.denominator)


@dataclass(frozen=True)
class Fees:
    """The two EIP-1559 fee fields of one transaction, in wei."""

    max_fee_per_gas: int
    max_priority_fee_per_gas: int

    def __post_init__(self) -> None:
        if self.max_priority_fee_per_gas < 0 or self.max_fee_per_gas < 0:
            raise ValueError("fees must not be negative")
        if self.max_priority_fee_per_gas > self.max_fee_per_gas:
            raise ValueError("the priority fee must not exceed the maximum fee")


@dataclass(frozen=True)
class FeePolicy:
    """How fees are chosen. `max_fee_per_gas` is the cap nothing may exceed."""

    max_fee_per_gas: int
    min_priority_fee: int = 0
    max_priority_fee: int = 5 * GWEI
    base_fee_multiplier: Fraction = Fraction(2)
    bump: Fraction = Fraction(125, 1000)

    def __post_init__(self) -> None:
        if self.max_fee_per_gas <= 0:
            raise ValueError("max_fee_per_gas must be positive")
        if not 0 <= self.min_priority_fee <= self.max_priority_fee:
            raise ValueError("need 0 <= min_priority_fee <= max_priority_fee")
        if self.base_fee_multiplier < 1:
            raise ValueError("base_fee_multiplier must be at least 1")
        if self.bump < MIN_REPLACEMENT_BUMP:
            raise ValueError("bump must be at least 10% (nodes reject smaller replacements)")


@dataclass(frozen=True)
class FeeChoice:
    """`fees` to use now, or None when `required` (next base fee + tip) is above the cap."""

    fees: Fees | None
    required: int
    base_fee: int
    priority_fee: int

    @property
    def above_cap(self) -> bool:
        return self.fees is None


def median(values: Sequence[int]) -> int:
    """The lower median of `values` (0 when empty); integers stay integers."""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def choose_fees(base_fees: Sequence[int], rewards: Sequence[int], policy: FeePolicy) -> FeeChoice:
    """Fees for a new transaction.

    `base_fees` is `eth_feeHistory`'s `baseFeePerGas`, whose last entry is the next
    block's base fee; `rewards` holds one priority-fee percentile per recent block. The
    tip is the median reward clamped to the policy's bounds; the fee cap leaves room for
    the base fee to grow by `base_fee_multiplier`, but never exceeds the policy's cap.
    """
    if not base_fees:
        raise ValueError("fee history has no base fees")
    base_fee = base_fees[-1]
    if base_fee < 0 or any(r < 0 for r in rewards):
        raise ValueError("fee history has negative values")
    tip = min(max(median(rewards), policy.min_priority_fee), policy.max_priority_fee)
    required = base_fee + tip
    if required > policy.max_fee_per_gas:
        return FeeChoice(None, required, base_fee, tip)
    max_fee = min(policy.max_fee_per_gas, ceil_mul(base_fee, policy.base_fee_multiplier) + tip)
    return FeeChoice(Fees(max_fee, tip), required, base_fee, tip)


def bump_fees(previous: Fees, market: FeeChoice, policy: FeePolicy) -> Fees | None:
    """Fees for replacing `previous`, or None when no valid replacement fits under the cap.

    Both fields rise by at least `policy.bump` (and at least 1 wei) over `previous`, and
    are at least what `market` suggests now.
    """
    factor = 1 + policy.bump
    tip = max(
        ceil_mul(previous.max_priority_fee_per_gas, factor),
        previous.max_priority_fee_per_gas + 1,
        market.priority_fee,
    )
    wanted = market.fees.max_fee_per_gas if market.fees is not None else market.required
    max_fee = max(
        ceil_mul(previous.max_fee_per_gas, factor),
        previous.max_fee_per_gas + 1,
        wanted,
        tip,
    )
    if max_fee > policy.max_fee_per_gas or market.required > policy.max_fee_per_gas:
        return None
    return Fees(max_fee, tip)


def gas_limit(estimate: int, multiplier: Fraction, ceiling: int) -> int:
    """`ceil(estimate * multiplier)`, at most `ceiling`; ValueError if the estimate is above it."""
    if estimate <= 0:
        raise ValueError("gas estimate must be positive")
    if multiplier < 1:
        raise ValueError("gas multiplier must be at least 1")
    if estimate > ceiling:
        raise ValueError(f"gas estimate {estimate} exceeds the gas limit ceiling {ceiling}")
    return min(ceil_mul(estimate, multiplier), ceiling)


def fee_policy(settings: TxSettings) -> FeePolicy:
    """The fee policy the `chain.tx` settings describe (gwei to wei, exact fractions)."""
    return FeePolicy(
        max_fee_per_gas=gwei_to_wei(settings.max_fee_per_gas_gwei),
        min_priority_fee=gwei_to_wei(settings.min_priority_fee_gwei),
        max_priority_fee=gwei_to_wei(settings.max_priority_fee_gwei),
        base_fee_multiplier=decimal_fraction(settings.base_fee_multiplier),
        bump=decimal_fraction(settings.fee_bump_percent) / 100,
    )
