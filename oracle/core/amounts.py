"""Amounts in token units with their symbol, for people: "500 USDC", not "500000000".

A venue records an amount in its currency's smallest unit and the currency as an
ERC-20 address (UMA) or not at all (Reality.eth bonds are in the chain's native token).
What a token is called and how many decimals it has comes from what the venue recorded
with the market (`currency_symbol`, `currency_decimals` in its details) or, failing that,
from the configured list of known tokens; an unknown token's amount is shown in its
smallest unit, saying so, never guessed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation


@dataclass(frozen=True)
class Token:
    symbol: str
    decimals: int


@dataclass(frozen=True)
class Tokens:
    """The tokens known by address (any case) and the native token's symbol."""

    known: Mapping[str, Token] = field(default_factory=dict)
    native: Token = Token("ETH", 18)

    def of(self, currency: str | None, details: Mapping[str, object] | None = None) -> Token | None:
        """The token of `currency` (None: the native token); None when unknown."""
        details = details or {}
        symbol, decimals = details.get("currency_symbol"), details.get("currency_decimals")
        if isinstance(symbol, str) and symbol and isinstance(decimals, int) and decimals >= 0:
            return Token(symbol, decimals)
        if currency is None or currency == "":
            return self.native
        for address, token in self.known.items():
            if address.lower() == currency.lower():
                return token
        return None


def _plain(value: Decimal) -> str:
    whole, _, fraction = format(value, "f").partition(".")
    fraction = fraction.rstrip("0")
    return f"{int(whole):,}" + (f".{fraction}" if fraction else "")


def amount_text(raw: object, token: Token | None, currency: str | None = None) -> str:
    """`raw` (smallest units) as "1.5 USDC"; for an unknown token "1500000 (smallest
    units of 0x…)"; a value that is no whole number is shown as it is, quoted."""
    try:
        units = Decimal(str(raw))
    except InvalidOperation:
        return repr(str(raw))
    if units != units.to_integral_value():
        return repr(str(raw))
    if token is None:
        return f"{_plain(units)} (smallest units of {currency or 'an unknown token'})"
    return f"{_plain(units.scaleb(-token.decimals))} {token.symbol}"
