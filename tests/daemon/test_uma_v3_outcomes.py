"""How the uma_v3 venue names an assertion's settled truth as a market outcome, and whose
assertions it watches (no chain)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from oracle.chain.events import DecodedLog
from oracle.daemon.ports import MarketRef
from oracle.venues.uma.settings import UmaV3SourceConfig
from oracle.venues.uma.venue_v3 import UmaV3Venue, settled_outcome


def ref(kind: str, outcomes: tuple[str, ...], asserted: str | None = None) -> MarketRef:
    submission = {} if asserted is None else {"asserted_outcome": asserted}
    return MarketRef("m", "uma-v3", "x", outcomes, {"kind": kind}, submission)


def test_the_settled_truth_is_an_outcome() -> None:
    # Someone else's claim: true is YES, false NO, whatever our verdict was.
    theirs = ref("assertion", ("YES", "NO"))
    assert (settled_outcome(theirs, True), settled_outcome(theirs, False)) == ("YES", "NO")
    # Ours: true is what we asserted; false the other of two outcomes.
    binary = ref("claim", ("YES", "NO"), asserted="NO")
    assert (settled_outcome(binary, True), settled_outcome(binary, False)) == ("NO", "YES")
    # With more outcomes, false only says which one it was not.
    three = ref("claim", ("Red", "Green", "Blue"), asserted="Green")
    assert (settled_outcome(three, True), settled_outcome(three, False)) == ("Green", "not:Green")


def test_whose_assertions_are_watched() -> None:
    us, them, manager = "0x" + "11" * 20, "0x" + "22" * 20, "0x" + "33" * 20
    nobody = "0x" + "00" * 20
    config = UmaV3SourceConfig.model_validate(
        {
            "kind": "uma_v3",
            "oracle_address": "0x" + "44" * 20,
            "second_opinion": {"escalation_managers": [manager], "claim_prefixes": ["Q:"]},
        }
    )

    async def never() -> Any:
        raise AssertionError("not connected in this test")

    venue = UmaV3Venue(config, never)
    parts: Any = SimpleNamespace(manager=SimpleNamespace(address=us))

    def log(asserter: str, escalation_manager: str, claim: bytes) -> DecodedLog:
        args = {"asserter": asserter, "escalationManager": escalation_manager, "claim": claim}
        return DecodedLog("AssertionMade", args, "0x" + "44" * 20, 1, "0x", "0x", 0)

    assert venue._watched(parts, log(them, manager, b"anything"))  # its escalation manager
    assert venue._watched(parts, log(them, nobody, b"Q: is it?"))  # its prefix
    assert not venue._watched(parts, log(them, nobody, b"q: is it?"))  # prefixes are exact
    assert not venue._watched(parts, log(us, manager, b"Q: ours"))  # ours: a claim market
