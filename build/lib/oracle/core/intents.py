"""The transaction intent's states: a table-driven state machine with no I/O (as the market
lifecycle in `oracle.core.lifecycle`), and `decide`, the pure choice of what to do next.

Every change of an intent's state goes through :func:`transition`, which returns the next
state or raises :class:`IllegalIntentTransition`. ``None`` stands for "nothing recorded
under the key yet" (or its last intent reverted or failed and the key is sent again)::

    (none) --recorded--> signed          (none) --found_done--> skipped
    signed --sent / nonce_too_low / underpriced--> broadcast
    signed --resigned--> signed          (a fresh nonce or higher fees before any send)
    signed --refused--> failed           (the node refused it outright)
    signed --found_done--> skipped       (recorded, never sent, and already done)
    broadcast --sent / replaced--> broadcast   (sent again; a fee-bumped attempt)
    signed / broadcast / mined --included--> mined --reorged--> broadcast
    signed / broadcast / mined --confirmed--> confirmed   --reverted--> reverted
    broadcast --nonce_taken--> signed    (our nonce used by another tx, action not done)
    broadcast --found_done--> skipped    (... and the action is done)
    broadcast --nonce_taken_unchecked--> failed   (... and no pre-send check is known)
    reverted / failed --recorded--> signed, --found_done--> skipped   (the key sent again)

CONFIRMED and SKIPPED are terminal. REVERTED and FAILED are final for the manager (nothing
follows them) until a caller sends the key again.

:func:`decide` takes what the manager has observed about one unfinished intent and
returns the next `Action`. Chain reads cost time and the pre-send check is a caller's
read, so facts are gathered lazily: a field left `NOT_READ` that the decision needs comes
back as a `Look` action naming it, and the manager reads it and decides again.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Literal

from oracle.errors import IllegalIntentTransition


class IntentState(StrEnum):
    SIGNED = "signed"
    BROADCAST = "broadcast"
    MINED = "mined"
    CONFIRMED = "confirmed"
    REVERTED = "reverted"
    SKIPPED = "skipped"
    FAILED = "failed"

    @property
    def final(self) -> bool:
        return self in FINAL_STATES

    @property
    def holds_subjects(self) -> bool:
        """Whether an intent in this state keeps other intents off its subjects: it may
        still be mined, or it was (a reverted, skipped or failed one never will be)."""
        return self not in RELEASING_STATES


class IntentEvent(StrEnum):
    RECORDED = "recorded"  # signed and stored, not yet sent
    SENT = "sent"  # the node accepted it (or already knew it)
    NONCE_TOO_LOW = "nonce_too_low"  # on a resend: mined, or our nonce taken; look again
    UNDERPRICED = "underpriced"  # on a resend: the node wants higher fees
    RESIGNED = "resigned"  # signed again before any send (fresh nonce or fees)
    REFUSED = "refused"  # the node refused the first send for good
    REPLACED = "replaced"  # a fee-bumped attempt at the same nonce
    INCLUDED = "included"  # a receipt in a canonical block, not yet deep enough
    CONFIRMED = "confirmed"  # deep enough, status 1
    REVERTED = "reverted"  # deep enough, status 0
    REORGED = "reorged"  # its receipt left the chain
    NONCE_TAKEN = "nonce_taken"  # another tx used our nonce; signed again on a fresh one
    NONCE_TAKEN_UNCHECKED = "nonce_taken_unchecked"  # ... and no check says if it is done
    FOUND_DONE = "found_done"  # the pre-send check found the action already done


S, E = IntentState, IntentEvent
# Where a transaction of this intent may be on the network (or mined) but is not final.
_LIVE = (S.SIGNED, S.BROADCAST, S.MINED)

TRANSITIONS: dict[tuple[IntentState | None, IntentEvent], IntentState] = {
    (None, E.RECORDED): S.SIGNED,
    (None, E.FOUND_DONE): S.SKIPPED,
    (S.SIGNED, E.SENT): S.BROADCAST,
    (S.SIGNED, E.NONCE_TOO_LOW): S.BROADCAST,
    (S.SIGNED, E.UNDERPRICED): S.BROADCAST,
    (S.SIGNED, E.RESIGNED): S.SIGNED,
    (S.SIGNED, E.REFUSED): S.FAILED,
    (S.SIGNED, E.FOUND_DONE): S.SKIPPED,
    (S.BROADCAST, E.SENT): S.BROADCAST,
    (S.BROADCAST, E.REPLACED): S.BROADCAST,
    (S.BROADCAST, E.NONCE_TAKEN): S.SIGNED,
    (S.BROADCAST, E.NONCE_TAKEN_UNCHECKED): S.FAILED,
    (S.BROADCAST, E.FOUND_DONE): S.SKIPPED,
    **{(s, E.INCLUDED): S.MINED for s in _LIVE},
    **{(s, E.CONFIRMED): S.CONFIRMED for s in _LIVE},
    **{(s, E.REVERTED): S.REVERTED for s in _LIVE},
    (S.MINED, E.REORGED): S.BROADCAST,
    (S.REVERTED, E.RECORDED): S.SIGNED,
    (S.REVERTED, E.FOUND_DONE): S.SKIPPED,
    (S.FAILED, E.RECORDED): S.SIGNED,
    (S.FAILED, E.FOUND_DONE): S.SKIPPED,
}

FINAL_STATES = frozenset({S.CONFIRMED, S.REVERTED, S.SKIPPED, S.FAILED})
TERMINAL_STATES = frozenset({S.CONFIRMED, S.SKIPPED})
RELEASING_STATES = frozenset({S.REVERTED, S.SKIPPED, S.FAILED})


def transition(state: IntentState | None, event: IntentEvent) -> IntentState:
    """The state after `event` (`state` None: nothing recorded), or IllegalIntentTransition."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        allowed = [e.value for e in allowed_events(state)]
        raise IllegalIntentTransition(
            state.value if state is not None else "none", event.value, allowed
        ) from None


def allowed_events(state: IntentState | None) -> frozenset[IntentEvent]:
    return frozenset(e for (s, e) in TRANSITIONS if s == state)


# -- deciding ---------------------------------------------------------------------------------


class Unread(Enum):
    NOT_READ = "not read"


NOT_READ: Literal[Unread.NOT_READ] = Unread.NOT_READ


@dataclass(frozen=True)
class Receipt:
    """A canonical receipt of one of the intent's attempts."""

    block_number: int
    status: int
    recorded: bool  # the intent already records exactly this inclusion


@dataclass(frozen=True)
class Observation:
    """What the manager knows about one unfinished intent at one look (`NOT_READ`: not
    asked yet). Facts are read in the order `decide` asks for them."""

    state: IntentState
    head: int
    confirmations: int  # depth at which a receipt is final
    resend_after_blocks: int
    nonce: int | None = None
    sent_at_block: int | None = None  # head when the latest attempt was last sent
    is_filler: bool = False  # a nonce-gap filler: its only purpose was its nonce
    receipt: Receipt | Unread | None = NOT_READ
    mined_nonce: int | Unread = NOT_READ  # the account's nonce at the latest block
    receipt_after_nonce: Receipt | Unread | None = NOT_READ  # mined between the two reads?
    nonce_taken_settled: bool | Unread = NOT_READ  # see `nonce_taken_settled`
    known: bool | Unread = NOT_READ  # the node knows the latest attempt
    already_done: bool | Unread | None = NOT_READ  # pre-send check; None: none is known


class Look(StrEnum):
    """A fact `decide` needs before it can choose."""

    RECEIPT = "receipt"
    MINED_NONCE = "mined_nonce"
    RECEIPT_AFTER_NONCE = "receipt_after_nonce"
    NONCE_TAKEN_SETTLED = "nonce_taken_settled"
    KNOWN = "known"
    ALREADY_DONE = "already_done"


class Do(StrEnum):
    LOOK = "look"  # read `Action.look`, then decide again
    WAIT = "wait"  # nothing to do until the next poll
    MARK_MINED = "mark_mined"
    FINISH = "finish"  # confirmed or reverted: `Action.event` says which
    REBROADCAST = "rebroadcast"  # send the latest attempt again (after `event`, if any)
    REPLACE = "replace"  # fill nonce gaps below, then bump fees at the same nonce
    SKIP = "skip"  # the action is done: `FOUND_DONE`
    ABANDON = "abandon"  # our nonce is gone and nobody can tell if the action happened
    RESIGN = "resign"  # our nonce is gone, the action is not done: a fresh nonce


@dataclass(frozen=True)
class Action:
    do: Do
    event: IntentEvent | None = None  # what carrying it out records (through the table)
    look: Look | None = None
    reason: str = ""
    nonce_taken: bool = False  # the choice follows "our nonce was used by another tx"


def _look(fact: Look) -> Action:
    return Action(Do.LOOK, look=fact)


def decide(seen: Observation) -> Action:
    """What to do next with the intent `seen` describes (not final)."""
    if seen.state.final:
        raise ValueError(f"a {seen.state} intent is not driven")
    if seen.receipt is NOT_READ:
        return _look(Look.RECEIPT)
    if seen.receipt is not None:
        return _on_receipt(seen, seen.receipt)
    if seen.state == S.SIGNED:
        return _recorded_not_sent(seen)
    if seen.state == S.MINED:
        return Action(Do.REBROADCAST, event=E.REORGED, reason="reorg")
    if seen.mined_nonce is NOT_READ:
        return _look(Look.MINED_NONCE)
    if seen.nonce is not None and seen.mined_nonce > seen.nonce:
        return _nonce_used(seen)
    if seen.known is NOT_READ:
        return _look(Look.KNOWN)
    if not seen.known:
        return Action(Do.REBROADCAST, reason="dropped")
    sent_at = seen.sent_at_block if seen.sent_at_block is not None else seen.head
    if seen.head - sent_at >= seen.resend_after_blocks:
        return Action(Do.REPLACE, event=E.REPLACED, reason="not mined")
    return Action(Do.WAIT)


def _on_receipt(seen: Observation, receipt: Receipt) -> Action:
    depth = seen.head - receipt.block_number + 1
    if depth >= seen.confirmations:
        return Action(Do.FINISH, event=E.CONFIRMED if receipt.status == 1 else E.REVERTED)
    if seen.state != S.MINED or not receipt.recorded:
        return Action(Do.MARK_MINED, event=E.INCLUDED)
    return Action(Do.WAIT)


def _recorded_not_sent(seen: Observation) -> Action:
    """Recorded but maybe never sent (the process died in between, or the nodes were
    down): before sending it now, make sure it is still wanted."""
    if seen.known is NOT_READ:
        return _look(Look.KNOWN)
    if not seen.known:
        if seen.already_done is NOT_READ:
            return _look(Look.ALREADY_DONE)
        if seen.already_done:
            return Action(
                Do.SKIP,
                event=E.FOUND_DONE,
                reason="recorded but never sent, and the pre-send check found it done",
            )
    return Action(Do.REBROADCAST, reason="recorded, not yet broadcast")


def _nonce_used(seen: Observation) -> Action:
    """The account's nonce passed ours but no receipt of ours was found."""
    if seen.receipt_after_nonce is NOT_READ:
        return _look(Look.RECEIPT_AFTER_NONCE)
    if seen.receipt_after_nonce is not None:
        return _on_receipt(seen, seen.receipt_after_nonce)
    if seen.nonce_taken_settled is NOT_READ:
        return _look(Look.NONCE_TAKEN_SETTLED)
    if not seen.nonce_taken_settled:
        return Action(Do.WAIT)
    done: bool | Unread | None = True if seen.is_filler else seen.already_done
    if done is NOT_READ:
        return _look(Look.ALREADY_DONE)
    if done is None:
        # Without a way to tell whether the action happened, never sign it again on our
        # own: the caller decides (submitting the key again runs its check).
        return Action(
            Do.ABANDON,
            event=E.NONCE_TAKEN_UNCHECKED,
            reason="nonce used by another transaction and no pre-send check is known",
            nonce_taken=True,
        )
    if done:
        return Action(
            Do.SKIP,
            event=E.FOUND_DONE,
            reason="nonce used by another transaction; the action is already done",
            nonce_taken=True,
        )
    return Action(Do.RESIGN, event=E.NONCE_TAKEN, nonce_taken=True)


class SendAnswer(StrEnum):
    """What a node answered to a broadcast."""

    SENT = "sent"  # accepted, or it already knew the transaction
    NONCE_LOW = "nonce_low"  # the nonce is used: ours was mined, or another tx took it
    UNDERPRICED = "underpriced"  # it wants higher fees
    REFUSED = "refused"  # anything else


def after_resend(state: IntentState, answer: SendAnswer) -> IntentEvent | None:
    """The event a resend's answer records, or None (nothing changes). A signed intent
    counts as broadcast once a node has seen it in any way: it may be on the network."""
    if answer == SendAnswer.SENT:
        return E.SENT
    if state == S.SIGNED and answer == SendAnswer.NONCE_LOW:
        return E.NONCE_TOO_LOW
    if state == S.SIGNED and answer == SendAnswer.UNDERPRICED:
        return E.UNDERPRICED
    return None


def nonce_taken_settled(
    first_seen: tuple[int, float], head: int, now: float, poll_interval: float
) -> bool:
    """Whether "our nonce was used but our receipt is missing", first seen at
    `first_seen` (head, time), has held long enough to act on.

    A node can count a transaction in the account's nonce a moment before its receipt
    and its effects are readable (seen on anvil under load); acting on that moment would
    sign the action again. So the observation must survive a new block, or, on a chain
    that produces none, a few polls.
    """
    settle = max(2.0, 3 * poll_interval)
    return head > first_seen[0] or now - first_seen[1] >= settle
