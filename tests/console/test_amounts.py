"""Amounts in token units with their symbol (`oracle.core.amounts`) and what is at stake
on an item, as the console and `review show` say it (`oracle.console.evidence`)."""

from __future__ import annotations

from typing import Any

import pytest

from oracle.console.evidence import _stake, chain_context, deadline
from oracle.core.amounts import Token, Tokens, amount_text
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


def test_a_token_is_what_the_venue_recorded_else_the_configured_one_else_unknown() -> None:
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
