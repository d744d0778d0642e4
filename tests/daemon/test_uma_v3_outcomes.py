"""How the uma_v3 venue names an assertion's settled truth as a market outcome (no chain)."""

from __future__ import annotations

from oracle.daemon.ports import MarketRef
from oracle.daemon.uma_v3_venue import settled_outcome


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
