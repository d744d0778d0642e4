"""Amounts in token units with their symbol, for people: "500 USDC", not "500000000".

A venue records an amount in its currency's smallest unit and the currency as an
ERC-20 address (UMA, Reality.eth's ERC-20 contracts) or not at all (native bonds: the
chain's native token). The venue also records what the token calls itself and its
decimals with the market (`currency_symbol`, `currency_decimals` in its details: read
from the token's `symbol()` and `decimals()` at discovery, made plain text here by
`token_symbol`, or the chain's configured native token). An ERC-20 configured by address
(`console.tokens`) is named as configured even so: a token's own `symbol()` is whatever
its deployer wrote. A native amount without a record is in the market's chain's native
token (`chains[].native_token`); an unknown token's amount is shown in its smallest
unit, saying so, never guessed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from oracle.core.text import clean

MAX_SYMBOL_CHARS = 20
"""A symbol longer than this (once cleaned) is cut, with an ellipsis."""
MAX_DECIMALS = 36
"""More decimals than any real token has: a `decimals()` above it is not believed."""


@dataclass(frozen=True)
class Token:
    symbol: str
    decimals: int


ETH = Token("ETH", 18)
"""A chain's native token unless its configuration names another (`chains[].native_token`)."""


def recorded_token(details: Mapping[str, object]) -> Token | None:
    """The token a venue recorded in a market's details (`currency_symbol`,
    `currency_decimals`), when it recorded both, in range; the symbol made plain again
    (`plain_symbol`): details may come from a venue's API."""
    symbol, decimals = details.get("currency_symbol"), details.get("currency_decimals")
    if not (isinstance(symbol, str) and isinstance(decimals, int)):
        return None
    if isinstance(decimals, bool) or not 0 <= decimals <= MAX_DECIMALS:
        return None
    plain = plain_symbol(symbol)
    return None if plain is None else Token(plain, decimals)


def token_details(symbol: str | None, decimals: int | None) -> dict[str, object]:
    """What a venue records of its currency in a market's details: each of the symbol
    and the decimals it could read."""
    recorded: dict[str, object] = {}
    if symbol is not None:
        recorded["currency_symbol"] = symbol
    if decimals is not None:
        recorded["currency_decimals"] = decimals
    return recorded


@dataclass(frozen=True)
class Tokens:
    """The tokens known by address (any case), the native token of each chain (by its
    name in `chains`) and the one for a market whose chain is not known."""

    known: Mapping[str, Token] = field(default_factory=dict)
    native: Token = ETH
    native_by_chain: Mapping[str, Token] = field(default_factory=dict)

    def of(
        self,
        currency: str | None,
        details: Mapping[str, object] | None = None,
        chain: str | None = None,
    ) -> Token | None:
        """The token of `currency` (None: the native token of `chain`), as configured by
        address, else as the venue recorded it in `details`; None when unknown."""
        recorded = recorded_token(details or {})
        if currency is None or currency == "":
            if recorded is not None:
                return recorded
            return self.native_by_chain.get(chain or "", self.native)
        for address, token in self.known.items():
            if address.lower() == currency.lower():
                return token
        return recorded


def token_symbol(raw: bytes) -> str | None:
    """What an ERC-20's `symbol()` returned (`raw`, the call's return data), as plain
    text to show beside an amount: ABI-encoded `string` as the standard says, or the
    `bytes32` some old tokens (MKR, SAI) return; cleaned like market text (`clean`:
    no invisible or bidirectional characters, NFKC), blanks collapsed, at most
    `MAX_SYMBOL_CHARS` characters. None for anything else (no data, malformed, not
    UTF-8, blank): the amount is then shown without a symbol."""
    if len(raw) == 32:
        text_bytes = raw.rstrip(b"\0")
    elif len(raw) >= 64:
        offset = int.from_bytes(raw[:32], "big")
        if offset > len(raw) - 32:
            return None
        length = int.from_bytes(raw[offset : offset + 32], "big")
        if length > len(raw) - offset - 32:
            return None
        text_bytes = raw[offset + 32 : offset + 32 + length]
    else:
        return None
    try:
        text = text_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return plain_symbol(text)


def plain_symbol(text: str) -> str | None:
    """A token's symbol as written by strangers, made one short line of plain text:
    cleaned like market text (`clean`), blanks collapsed, at most `MAX_SYMBOL_CHARS`
    characters (cut with an ellipsis); None when nothing is left."""
    # Line breaks and tabs survive `clean`: a symbol is one short line.
    symbol = " ".join(clean(text).text.split())
    if len(symbol) > MAX_SYMBOL_CHARS:
        symbol = symbol[: MAX_SYMBOL_CHARS - 1].rstrip() + "…"
    return symbol or None


def token_decimals(raw: bytes) -> int | None:
    """What an ERC-20's `decimals()` returned, when it is one word holding a number of
    decimals a token can have (at most `MAX_DECIMALS`); else None."""
    if len(raw) != 32:
        return None
    value = int.from_bytes(raw, "big")
    return value if value <= MAX_DECIMALS else None


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
