"""How the uma venue names a request's prices as outcomes, and back (no chain)."""

from __future__ import annotations

from typing import Any

from oracle.core.ancillary import PRICE_SCALE, TOO_EARLY_PRICE, parse_ancillary
from oracle.daemon.ports import MarketRef
from oracle.venues.uma.binding import YES_OR_NO_QUERY, RequestKey, identifier_bytes
from oracle.venues.uma.settings import UmaSourceConfig
from oracle.venues.uma.venue import (
    UmaVenue,
    market_outcomes,
    outcome_of_price,
    question_key,
    request_key,
)

INITIALIZER = ",initializer:" + "ab" * 20
STANDARD = (
    "q: title: Will it rain?, description: Rain in Paris. res_data: p1: 0, p2: 1, p3: 0.5. "
    "Where p1 corresponds to No, p2 to Yes, p3 to unknown/50-50." + INITIALIZER
)
WITH_EARLY = (
    "q: title: Up or down?, description: BTC. res_data: p1: 0, p2: 1, p3: 0.5, "
    f"p4: {TOO_EARLY_PRICE}. Where p1 corresponds to Down, p2 to Up, p3 to unknown/50-50, "
    "and p4 to an early request." + INITIALIZER
)


def test_prices_are_outcomes_and_back() -> None:
    standard = parse_ancillary(STANDARD.encode())
    assert market_outcomes(standard, allow_too_early=False) == ("NO", "YES")
    assert outcome_of_price(standard, 0) == "NO"
    assert outcome_of_price(standard, PRICE_SCALE) == "YES"
    assert outcome_of_price(standard, PRICE_SCALE // 2) == "INVALID"
    assert outcome_of_price(standard, 7) == "price:7"
    labelled = parse_ancillary(WITH_EARLY.encode())
    assert market_outcomes(labelled, allow_too_early=False) == ("Down", "Up")
    assert market_outcomes(labelled, allow_too_early=True) == ("Down", "Up", "TOO_EARLY")
    assert outcome_of_price(labelled, TOO_EARLY_PRICE) == "TOO_EARLY"
    assert outcome_of_price(labelled, PRICE_SCALE) == "Up"


def test_a_markets_details_name_its_request_and_its_question() -> None:
    requester = "0x" + "12" * 20
    key = RequestKey(requester, identifier_bytes(YES_OR_NO_QUERY), 1_700_000_000, STANDARD.encode())
    details = {
        "requester": key.requester,
        "identifier": YES_OR_NO_QUERY,
        "timestamp": key.timestamp,
        "ancillary_data": "0x" + key.ancillary_data.hex(),
    }
    assert request_key(details) == key
    reask = RequestKey(requester, key.identifier, key.timestamp + 60, key.ancillary_data)
    assert question_key(reask) == question_key(key)
    other = RequestKey("0x" + "34" * 20, key.identifier, key.timestamp, key.ancillary_data)
    assert question_key(other) != question_key(key)


async def _no_chain() -> Any:
    raise AssertionError("reading a market's INVALID policy needs no chain")


def _details(text: str) -> MarketRef:
    key = RequestKey("0x" + "12" * 20, identifier_bytes(YES_OR_NO_QUERY), 1, text.encode())
    details = {
        "requester": key.requester,
        "identifier": YES_OR_NO_QUERY,
        "timestamp": key.timestamp,
        "ancillary_data": "0x" + key.ancillary_data.hex(),
    }
    return MarketRef("uma:1", "uma", key.id_hex, ("NO", "YES"), details)


def test_invalid_is_open_where_the_question_offers_fifty_fifty_as_the_source_says() -> None:
    source = {"kind": "uma", "name": "uma", "oracle_address": "0x" + "11" * 20}
    default = UmaVenue(UmaSourceConfig.model_validate(source), _no_chain)
    review = UmaVenue(UmaSourceConfig.model_validate({**source, "invalid": "review"}), _no_chain)
    assert default.invalid_policy(_details(STANDARD)) == "propose"  # as Polymarket's proposers
    assert review.invalid_policy(_details(STANDARD)) == "review"
    no_half = (
        "q: title: Will it rain?, description: Rain. res_data: p1: 0, p2: 1. Where p1 "
        "corresponds to No, p2 to Yes." + INITIALIZER
    )
    assert default.invalid_policy(_details(no_half)) is None
    unreadable = MarketRef("uma:2", "uma", "x", ("NO", "YES"), {"ancillary_data": "0x00"})
    assert default.invalid_policy(unreadable) is None
