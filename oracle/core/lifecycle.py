"""The market lifecycle: a table-driven state machine with no I/O (in the manner of h11).

Every change of a market's state goes through :func:`transition`, which either returns
the next state or raises :class:`IllegalTransition`; there is no other way to change a
state, so an illegal transition is impossible rather than merely logged. The daemon
records each transition (time, from, event, to, reason) in the audit log.

::

    discovered --due--> due --research_started--> researching --research_finished--> consensus
    consensus --consensus_submit--> submitting --proposal_confirmed--> submitted
    consensus --consensus_review--> needs_review --review_decided--> reviewed
    reviewed --submission_started--> submitting
    reviewed --review_reopened--> needs_review      (a decision taken back before delivery)
    needs_review --research_requested--> due         (a person sends it back for research)
    submitted --window_passed--> final          submitted --disputed--> disputed
    disputed --dispute_upheld / dispute_rejected--> final
    disputed --proposal_reset--> due      submitted --proposal_reset--> due
    researching / consensus / submitting --failed--> failed_retry --retry--> due
    failed_retry --retry_submission--> submitting   (the verdict stands; only delivery failed)
    failed_retry --retries_exhausted--> needs_review
    submitting / challenging --delivery_stopped--> needs_review  (refused for good, or
                                                     daemon.max_attempts failed deliveries)
    consensus --consensus_research_again--> deferred   (agents agree: not decidable yet)
    deferred --research_again--> due

`submitted --proposal_reset-->` is a dispute and the arbiter's reopening that both fell
within the challenge window, before the watch job ever saw the market disputed.

Nothing failed in `deferred`: its research worked and its verdict cannot be submitted yet
(the agents agree the event cannot be decided yet, or the outcome can still change), so
it neither uses up the failed-attempt budget of `failed_retry` nor reaches a person as a
failure. When it is researched again is the research schedule's (`oracle.core.timing`);
when the schedule gives up, the verdict itself goes to review (`consensus_review`).

`challenging` is the only way from someone else's answer to a transaction against it (a
UMA dispute, a Reality.eth counter-answer): a market recorded as `submitted` beside
another's contradicting answer enters it only when a person confirms the review item that
shows both answers (`oracle.store.reviews`), never by the daemon's own verdict. A
`disputed` market whose own answer was superseded (Reality.eth, the bond policy sending
it to a person) enters it the same way, when a person confirms its defence.

`submitting / challenging --answer_lost--> needs_review` is an answer already paid for
that can no longer take effect (a Reality.eth commitment whose reveal window passed):
retrying cannot help, so a person looks, and it is never retried on its own.

`submitting / challenging --delivery_stopped--> needs_review` is a delivery (or a
confirmed challenge) the venue refused for good, after that one attempt, or one whose
transient failures used up `daemon.max_attempts` (`oracle.core.failures`): a person looks
at once, with the venue's reason, rather than a retry that cannot help.
"""

from __future__ import annotations

from enum import StrEnum

from oracle.errors import IllegalTransition


class MarketState(StrEnum):
    DISCOVERED = "discovered"
    DUE = "due"
    RESEARCHING = "researching"
    CONSENSUS = "consensus"
    SUBMITTING = "submitting"
    SUBMITTED = "submitted"
    FINAL = "final"
    NEEDS_REVIEW = "needs_review"
    REVIEWED = "reviewed"
    FAILED_RETRY = "failed_retry"
    DEFERRED = "deferred"
    DISPUTED = "disputed"
    CHALLENGING = "challenging"


class MarketEvent(StrEnum):
    DUE = "due"
    RESEARCH_STARTED = "research_started"
    RESEARCH_FINISHED = "research_finished"
    CONSENSUS_SUBMIT = "consensus_submit"
    CONSENSUS_REVIEW = "consensus_review"
    CONSENSUS_RESEARCH_AGAIN = "consensus_research_again"
    REVIEW_DECIDED = "review_decided"
    SUBMISSION_STARTED = "submission_started"
    PROPOSAL_CONFIRMED = "proposal_confirmed"
    WINDOW_PASSED = "window_passed"
    DISPUTED = "disputed"
    DISPUTE_UPHELD = "dispute_upheld"
    DISPUTE_REJECTED = "dispute_rejected"
    PROPOSAL_RESET = "proposal_reset"
    FAILED = "failed"
    RETRY = "retry"
    RETRY_SUBMISSION = "retry_submission"
    RETRIES_EXHAUSTED = "retries_exhausted"
    RESEARCH_AGAIN = "research_again"
    REVIEW_REOPENED = "review_reopened"
    RESEARCH_REQUESTED = "research_requested"
    CHALLENGE_CONFIRMED = "challenge_confirmed"
    CHALLENGE_DISPUTED = "challenge_disputed"
    CHALLENGE_ANSWERED = "challenge_answered"
    CHALLENGE_MOOT = "challenge_moot"
    RETRY_CHALLENGE = "retry_challenge"
    ANSWER_LOST = "answer_lost"
    DELIVERY_STOPPED = "delivery_stopped"


S, E = MarketState, MarketEvent

TRANSITIONS: dict[tuple[MarketState, MarketEvent], MarketState] = {
    (S.DISCOVERED, E.DUE): S.DUE,
    (S.DUE, E.RESEARCH_STARTED): S.RESEARCHING,
    (S.RESEARCHING, E.RESEARCH_FINISHED): S.CONSENSUS,
    (S.RESEARCHING, E.FAILED): S.FAILED_RETRY,
    (S.CONSENSUS, E.CONSENSUS_SUBMIT): S.SUBMITTING,
    (S.CONSENSUS, E.CONSENSUS_REVIEW): S.NEEDS_REVIEW,
    (S.CONSENSUS, E.CONSENSUS_RESEARCH_AGAIN): S.DEFERRED,
    (S.CONSENSUS, E.FAILED): S.FAILED_RETRY,
    (S.NEEDS_REVIEW, E.REVIEW_DECIDED): S.REVIEWED,
    (S.NEEDS_REVIEW, E.RESEARCH_REQUESTED): S.DUE,
    (S.REVIEWED, E.SUBMISSION_STARTED): S.SUBMITTING,
    (S.REVIEWED, E.REVIEW_REOPENED): S.NEEDS_REVIEW,
    (S.SUBMITTING, E.PROPOSAL_CONFIRMED): S.SUBMITTED,
    (S.SUBMITTING, E.FAILED): S.FAILED_RETRY,
    (S.SUBMITTED, E.WINDOW_PASSED): S.FINAL,
    (S.SUBMITTED, E.DISPUTED): S.DISPUTED,
    (S.SUBMITTED, E.PROPOSAL_RESET): S.DUE,
    (S.DISPUTED, E.DISPUTE_UPHELD): S.FINAL,
    (S.DISPUTED, E.DISPUTE_REJECTED): S.FINAL,
    (S.DISPUTED, E.PROPOSAL_RESET): S.DUE,
    (S.FAILED_RETRY, E.RETRY): S.DUE,
    (S.FAILED_RETRY, E.RETRY_SUBMISSION): S.SUBMITTING,
    (S.FAILED_RETRY, E.RETRIES_EXHAUSTED): S.NEEDS_REVIEW,
    (S.DEFERRED, E.RESEARCH_AGAIN): S.DUE,
    (S.SUBMITTED, E.CHALLENGE_CONFIRMED): S.CHALLENGING,
    (S.CHALLENGING, E.CHALLENGE_DISPUTED): S.DISPUTED,
    (S.CHALLENGING, E.CHALLENGE_ANSWERED): S.SUBMITTED,
    (S.CHALLENGING, E.CHALLENGE_MOOT): S.SUBMITTED,
    (S.CHALLENGING, E.FAILED): S.FAILED_RETRY,
    (S.FAILED_RETRY, E.RETRY_CHALLENGE): S.CHALLENGING,
    (S.DISPUTED, E.CHALLENGE_CONFIRMED): S.CHALLENGING,
    (S.SUBMITTING, E.ANSWER_LOST): S.NEEDS_REVIEW,
    (S.CHALLENGING, E.ANSWER_LOST): S.NEEDS_REVIEW,
    (S.SUBMITTING, E.DELIVERY_STOPPED): S.NEEDS_REVIEW,
    (S.CHALLENGING, E.DELIVERY_STOPPED): S.NEEDS_REVIEW,
}

TERMINAL_STATES = frozenset({S.FINAL})
# States in which a replica holds a lease while it works; a crash leaves the lease to expire.
WORKING_STATES = frozenset({S.RESEARCHING, S.CONSENSUS, S.SUBMITTING, S.CHALLENGING})


def transition(state: MarketState, event: MarketEvent) -> MarketState:
    """The state after `event`, or IllegalTransition."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        allowed = [e.value for e in allowed_events(state)]
        raise IllegalTransition(state.value, event.value, allowed) from None


def allowed_events(state: MarketState) -> frozenset[MarketEvent]:
    return frozenset(e for (s, e) in TRANSITIONS if s == state)
