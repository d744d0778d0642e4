"""What both UMA venues (`UmaVenue` on OOv2, `UmaV3Venue` on OOv3) do with the bonds they
post on their oracle: each in an ERC-20 currency (`TokenBonds`: its name, decimals and
gauges), ours scanned into the signer's bond budget, and each new one weighed against
the venue's caps before its intent is recorded."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from oracle.chain.contracts import _Contract
from oracle.chain.intents import BondBook, BondHold
from oracle.core.bonds import BondCaps, Refusal, check_bond
from oracle.daemon.chain_parts import Connected, ConnectedVenue, TokenBonds
from oracle.errors import BondRefused, ResolverError


class OracleParts(Connected, Protocol):
    """A UMA venue's parts: the pool, the signer's manager and the oracle."""

    @property
    def oracle(self) -> _Contract: ...


Parts = TypeVar("Parts", bound=OracleParts)


class UmaBondVenue(ConnectedVenue[Parts]):
    """The bond side of a UMA venue; the venue names its logger, makes `_tokens` and
    `_currencies` (the currencies it has bonded in) and says where its scan of our bonds
    is (`_bonds_at_risk`)."""

    _logger: logging.Logger
    _tokens: TokenBonds
    _currencies: set[str]

    def _bonds_at_risk(self) -> Callable[[], Awaitable[Mapping[str, int]]]:
        """The scan of our bonds on the oracle not settled yet, by currency."""
        raise NotImplementedError

    async def _report_bonds(self, parts: Parts) -> BondBook:
        """Scan our bonds on this oracle into the signer's bond budget; the gauges show
        them with the bonds reserved here and not on chain yet."""
        book = await parts.manager.scan_bonds(parts.oracle.address.lower(), self._bonds_at_risk())
        await self._tokens.report(parts, parts.oracle.address, self._currencies, book.mine)
        return book

    def _refused(self, refused: BondRefused, **context: Any) -> ResolverError:
        """The bond budget refused the bond when its intent was recorded."""
        refusal = Refusal(refused.reason, refused.detail)
        return self._bond_refused(self._logger, "uma.bond_refused", refusal, **context)

    async def _hold(
        self,
        parts: Parts,
        currency: str,
        caps: BondCaps,
        *,
        bond: int,
        final_fee: int = 0,
        reward: int = 0,
        gas_cost: int | None = None,
        **context: Any,
    ) -> BondHold:
        """Refuse (ResolverError, retried later) a `bond` (with its `final_fee`, for a
        `reward`) in `currency` that `caps` do not allow beside what the signer has at
        stake in it over every venue; else the bond to reserve when its intent is
        recorded (where the budget weighs it again, atomically). `context`: what the
        refusal's log line names."""
        self._currencies.add(currency)
        on_chain, reserved = (await self._report_bonds(parts)).at_stake(currency)
        refusal = check_bond(
            bond=bond,
            final_fee=final_fee,
            reward=reward,
            outstanding=on_chain + reserved,
            caps=caps,
            gas_cost=gas_cost,
        )
        if refusal is None:
            return BondHold(
                scope=parts.oracle.address.lower(),
                currency=currency,
                amount=bond + final_fee,
                max_per_request=caps.max_per_request,
                max_outstanding=caps.max_outstanding,
            )
        raise self._bond_refused(self._logger, "uma.bond_refused", refusal, **context)
