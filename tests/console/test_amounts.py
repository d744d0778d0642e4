"""Amounts in token units with their symbol (`oracle.core.amounts`) and what is at stake
on an item, as the console and `review show` say it (`oracle.console.evidence`)."""

from __future__ import annotations

from typing import Any

import pytest

from oracle.console.evidence import _stake, chain_context, deadline
from oracle.core.amounts import (
    Token,
    Tokens,
    amount_text,
    token_decimals,
    token_details,
    token_symbol,
)
from oracle.store.tables import MarketRow

USDC = "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174"
TOKENS = Tokens({USDC.lower(): Token("USDC", 6)})


@pytest.mark.parametrize(
    ("raw", "token", "shown"),
    [
        ("500000000", Token("USDC", 6), "500 USDC"),
        ("1500000", Token("USDC", 6), "1.5 USDC"),
        (1234567890123, Token("USDC", 6), "1,234,567.890123 USDC"),
        ("10000000000000000", Token("ETH", 18), "0.01 ETH"),
        ("1", Token("ETH", 18), "0.000000000000000001 ETH"),
        ("0", Token("DAI", 18), "0 DAI"),
        ("5", None, "5 (smallest units of 0xcd)"),
        ("1.5", Token("USDC", 6), "'1.5'"),  # no whole number of units: shown as it is
        ("lots", Token("USDC", 6), "'lots'"),
    ],
)
def test_an_amount_in_token_units(raw: object, token: Token | None, shown: str) -> None:
    assert amount_text(raw, token, "0xcd") == shown


def test_a_token_is_the_configured_one_else_what_the_venue_recorded_else_unknown() -> None:
    assert TOKENS.of(USDC) == Token("USDC", 6)  # any case
    assert TOKENS.of(USDC.upper().replace("0X", "0x")) == Token("USDC", 6)
    assert TOKENS.of(None) == Token("ETH", 18)  # the native token
    assert TOKENS.of("0x" + "ee" * 20) is None
    recorded = {"currency_symbol": "WETH", "currency_decimals": 18}
    assert TOKENS.of("0x" + "ee" * 20, recorded) == Token("WETH", 18)
    assert TOKENS.of("0x" + "ee" * 20, {"currency_symbol": "X", "currency_decimals": -1}) is None


def _market(**fields: Any) -> MarketRow:
    values: dict[str, Any] = {
        "id": "uma:1",
        "source": "uma",
        "external_id": "1",
        "question": "Q?",
        "outcomes": ["YES", "NO"],
        "details": {},
        "resolve_after": 1000.0,
        "state": "needs_review",
        "state_changed_at": 0.0,
        "submission": {},
        "created_at": 0.0,
        **fields,
    }
    return MarketRow(**values)


def test_what_is_at_stake_in_token_units() -> None:
    uma = _market(
        details={"currency": USDC, "bond": "500000000", "final_fee": "1500000", "reward": "0"}
    )
    assert _stake(uma, TOKENS)["text"] == "bond 500 USDC + final fee 1.5 USDC, reward 0 USDC"  # type: ignore[index]
    unknown = _market(details={"currency": "0x" + "ee" * 20, "bond": "7"})
    assert _stake(unknown, TOKENS)["text"] == (  # type: ignore[index]
        f"bond 7 (smallest units of 0x{'ee' * 20})"
    )
    reality = _market(
        source="reality",
        submission={"bond": 10**17, "bond_seen": 2 * 10**17, "challenge": "defend"},
    )
    assert _stake(reality, TOKENS)["text"] == (  # type: ignore[index]
        "our bond 0.1 ETH; their bond 0.2 ETH, answering back posts 0.4 ETH"
    )
    assert _stake(_market(), TOKENS) is None
    assert _stake(_market(details={"currency": USDC}), TOKENS) is None


def test_the_deadline_is_the_challenge_window_else_the_answer_window_else_resolve_after() -> None:
    assert deadline(_market(window_ends_at=5.0, answer_window={"closes_at": 3.0}))[0] == 5.0
    assert deadline(_market(answer_window={"closes_at": 3.0}))[0] == 3.0
    assert deadline(_market()) == (1000.0, "resolve-after time")


def test_the_chain_context_links_only_hex_values_to_the_configured_explorer() -> None:
    market = _market(
        details={
            "chain_id": 137,
            "requester": "0x" + "12" * 20,
            "tx_hash": "javascript:alert(1)",
            "ancillary_data": "0x" + b"q: <b>hi</b>".hex(),
        }
    )
    context = chain_context(market, {"137": "https://polygonscan.com/{kind}/{value}"})
    links = {fact["label"]: fact["link"] for fact in context["facts"]}
    assert links == {
        "requester": f"https://polygonscan.com/address/0x{'12' * 20}",
        "asked in transaction": None,
    }
    assert context["raw_text"] == "q: <b>hi</b>"  # the template escapes it
    assert chain_context(market, {})["facts"][0]["link"] is None


def _abi_string(data: bytes) -> bytes:
    """`data` as a Solidity function returns a `string`: offset, length, padded bytes."""
    padded = data + b"\0" * (-len(data) % 32)
    return (32).to_bytes(32, "big") + len(data).to_bytes(32, "big") + padded


@pytest.mark.parametrize(
    ("raw", "symbol"),
    [
        (_abi_string(b"USDC"), "USDC"),
        (_abi_string(b""), None),  # blank: no symbol
        (b"MKR".ljust(32, b"\0"), "MKR"),  # old tokens return bytes32
        (bytes(32), None),
        (b"", None),  # no code at the address: the call returns nothing
        (b"\x01" * 40, None),  # neither form
        # A hostile symbol: a bidi override, a zero-width space, a line break, markup and a
        # fullwidth word come out as one plain line (the console escapes the markup).
        (_abi_string("U\u202eS\u200bDC\n<b>ＵＳＤ</b>".encode()), "USDC <b>USD</b>"),
        (_abi_string(b"A" * 64), "A" * 19 + "…"),  # cut at 20 characters
        (_abi_string(b"\xff\xfe"), None),  # not UTF-8
        # An offset or a length pointing past the data: malformed, never read beyond it.
        ((2**255).to_bytes(32, "big") + bytes(32), None),
        ((32).to_bytes(32, "big") + (2**200).to_bytes(32, "big") + b"USDC".ljust(32, b"\0"), None),
    ],
)
def test_a_tokens_own_symbol_is_plain_short_text_or_nothing(raw: bytes, symbol: str | None) -> None:
    assert token_symbol(raw) == symbol


def test_a_tokens_decimals_are_believed_only_in_range() -> None:
    assert token_decimals((6).to_bytes(32, "big")) == 6
    assert token_decimals((0).to_bytes(32, "big")) == 0
    assert token_decimals((37).to_bytes(32, "big")) is None
    assert token_decimals(b"MKR".ljust(32, b"\0")) is None
    assert token_decimals(b"") is None
    assert token_details("USDC", 6) == {"currency_symbol": "USDC", "currency_decimals": 6}
    assert token_details(None, 6) == {"currency_decimals": 6}
    assert token_details(None, None) == {}


def test_a_native_amount_is_in_its_markets_chain_token_and_a_configured_address_wins() -> None:
    tokens = Tokens(
        {USDC.lower(): Token("USDC", 6)},
        native=Token("ETH", 18),
        native_by_chain={"gnosis": Token("xDAI", 18), "polygon": Token("POL", 18)},
    )
    assert tokens.of(None, {}, "gnosis") == Token("xDAI", 18)
    assert tokens.of(None, {}, "polygon") == Token("POL", 18)
    assert tokens.of(None, {}, None) == Token("ETH", 18)  # a market of no known chain
    assert tokens.of(None, {}, "elsewhere") == Token("ETH", 18)
    # What the venue recorded of the native token when it found the market.
    recorded = {"currency_symbol": "xDAI", "currency_decimals": 18}
    assert tokens.of(None, recorded, "polygon") == Token("xDAI", 18)
    # A token's own symbol() is whatever its deployer wrote: the configured name wins.
    impostor = {"currency_symbol": "USDT", "currency_decimals": 18}
    assert tokens.of(USDC, impostor) == Token("USDC", 6)
    assert tokens.of(USDC, {"currency_symbol": "X", "currency_decimals": True}) == Token("USDC", 6)
    assert tokens.of("0x" + "ee" * 20, {"currency_decimals": 6}) is None  # no symbol read
    # Details from a venue's API are made plain again when shown.
    api = {"currency_symbol": "\u202eDSU\u200b\n", "currency_decimals": 6}
    assert tokens.of("0x" + "ee" * 20, api) == Token("DSU", 6)
    assert tokens.of("0x" + "ee" * 20, {**api, "currency_symbol": "\u200b"}) is None

    gnosis = _market(
        source="reality", chain="gnosis", submission={"bond": 10**18, "bond_seen": 10**18}
    )
    assert _stake(gnosis, tokens)["text"] == "our bond 1 xDAI; their bond 1 xDAI"  # type: ignore[index]
    # An OOv3 claim's bond, in the currency recorded with our assertion.
    claim = _market(
        source="uma_v3",
        submission={
            "bond": "250000000",
            "currency": "0x" + "ab" * 20,
            "currency_symbol": "USDC.e",
            "currency_decimals": 6,
        },
    )
    stake = _stake(claim, tokens)
    assert stake is not None
    assert (stake["text"], stake["currency"], stake["token"]) == (
        "our bond 250 USDC.e",
        "0x" + "ab" * 20,
        "USDC.e",
    )
