"""The delivery-failure rule (oracle.core.failures): a refusal for good goes to a person at
once; a transient failure waits longer each time and reaches a person after max_attempts."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core.failures import (
    MAX_REASON_CHARS,
    FailureKind,
    Retry,
    RetryPolicy,
    ToPerson,
    after_failure,
    backoff_delay,
    classify_revert,
    classify_status,
    kind_of,
    quoted,
    review_reason,
)

P, T = FailureKind.PERMANENT, FailureKind.TRANSIENT
POLICY = RetryPolicy(max_attempts=5, backoff=30.0, backoff_max=3600.0)

policies = st.builds(
    RetryPolicy,
    max_attempts=st.integers(1, 50),
    backoff=st.floats(0, 1e6, allow_nan=False),
    backoff_max=st.floats(0, 1e7, allow_nan=False),
)


def test_a_permanent_refusal_goes_to_a_person_after_one_attempt() -> None:
    assert after_failure(P, 0, 1_000.0, POLICY) == ToPerson("delivery_refused", 1)
    # Whatever came before: a permanent refusal is never retried.
    assert after_failure(P, 3, 1_000.0, POLICY) == ToPerson("delivery_refused", 4)


def test_a_transient_failure_waits_longer_each_time_then_goes_to_a_person() -> None:
    steps = [after_failure(T, n, 1_000.0, POLICY) for n in range(5)]
    assert steps[:4] == [
        Retry(1_030.0, 30.0, 1),
        Retry(1_060.0, 60.0, 2),
        Retry(1_120.0, 120.0, 3),
        Retry(1_240.0, 240.0, 4),
    ]
    assert steps[4] == ToPerson("delivery_failed", 5)


def test_the_delay_is_capped() -> None:
    policy = RetryPolicy(max_attempts=100, backoff=30.0, backoff_max=100.0)
    assert [backoff_delay(n, policy) for n in (1, 2, 3, 4, 90)] == [30.0, 60.0, 100.0, 100.0, 100.0]
    # No float overflow however many attempts failed.
    assert backoff_delay(10**6, policy) == 100.0


def test_one_attempt_allowed_means_no_retry() -> None:
    assert after_failure(T, 0, 0.0, RetryPolicy(1, 30.0, 60.0)) == ToPerson("delivery_failed", 1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 1.0, 1.0), "max_attempts must be at least 1"),
        ((True, 1.0, 1.0), "max_attempts must be at least 1"),
        ((3, -1.0, 1.0), "backoff must be a finite number"),
        ((3, 1.0, math.inf), "backoff_max must be a finite number"),
        ((3, math.nan, 1.0), "backoff must be a finite number"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_field(
    args: tuple[int, float, float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RetryPolicy(*args)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="attempt must be at least 1, not 0"):
        backoff_delay(0, POLICY)
    with pytest.raises(ValueError, match="failed_before must be >= 0, not -1"):
        after_failure(T, -1, 0.0, POLICY)


@given(policies, st.integers(1, 10_000))
def test_the_delay_never_decreases(policy: RetryPolicy, attempt: int) -> None:
    assert backoff_delay(attempt + 1, policy) >= backoff_delay(attempt, policy) >= 0
    assert backoff_delay(attempt, policy) <= policy.backoff_max


@given(policies, st.floats(0, 1e12, allow_nan=False), st.lists(st.sampled_from([P, T])))
def test_every_failure_run_reaches_a_person_within_max_attempts(
    policy: RetryPolicy, now: float, kinds: list[FailureKind]
) -> None:
    """Fed failures, the rule stops (a person) within max_attempts, each retry at a later
    time than the failure and with a delay at least the one before: never a constant
    retry loop, whatever the kinds."""
    failed, delays = 0, []
    stream = [*kinds, *([T] * (policy.max_attempts + 1))]
    for kind in stream:
        step = after_failure(kind, failed, now, policy)
        if isinstance(step, ToPerson):
            assert step.attempts == failed + 1 <= policy.max_attempts
            assert step.code == ("delivery_refused" if kind is P else "delivery_failed")
            break
        assert kind is T
        assert step.attempts == failed + 1 < policy.max_attempts
        assert step.at == now + step.delay
        delays.append(step.delay)
        failed = step.attempts
        now = step.at
    else:
        pytest.fail("no person was reached")
    assert delays == sorted(delays)
    assert len(delays) < policy.max_attempts


@given(policies)
def test_a_positive_backoff_grows_until_the_cap(policy: RetryPolicy) -> None:
    """With a back-off and a cap above it, two retries in a row never wait the same time
    unless the cap holds both."""
    delays = [backoff_delay(n, policy) for n in range(1, 12)]
    for before, after in itertools.pairwise(delays):
        assert after > before or after == policy.backoff_max or policy.backoff == 0


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, P),
        (401, P),
        (403, P),
        (404, P),
        (409, P),
        (410, P),
        (422, P),
        (408, T),
        (425, T),
        (429, T),
        (500, T),
        (502, T),
        (503, T),
        (504, T),
        (302, T),
    ],
)
def test_http_statuses(status: int, kind: FailureKind) -> None:
    assert classify_status(status) is kind


@pytest.mark.parametrize(
    ("name", "message", "kind"),
    [
        ("ProposerNotWhitelisted", "ProposerNotWhitelisted()", P),
        ("SenderNotWhitelisted", "SenderNotWhitelisted()", P),
        ("AccessControlUnauthorizedAccount", "AccessControlUnauthorizedAccount(...)", P),
        ("MissingRole", "MissingRole(caller=0x1, role=1)", P),
        ("InvalidStatus", "InvalidStatus(questionId=0x01, status=3)", P),
        ("Error", "Error('proposePriceFor: Requested')", P),
        ("Error", "disputePriceFor: Proposed", P),
        ("Error", "Proposer not whitelisted", P),
        ("Error", "Ownable: caller is not the owner", P),
        ("Error", "Assertion already exists", P),
        ("Error", "Request already proposed", P),
        ("Error", "Dispute not allowed", P),
        # Waiting may cure these, or nobody knows: retried, bounded by max_attempts.
        ("TooEarly", "TooEarly(questionId=0x01, earliestTime=5)", T),
        ("ContractPaused", "ContractPaused()", T),
        ("Error", "ERC20: transfer amount exceeds balance", T),
        ("Unknown", "an unknown error (selector 0xdeadbeef)", T),
        ("Empty", "a revert without data", T),
        ("Panic", "Panic(code=0x11, 'arithmetic overflow or underflow')", T),
        # The name decides for a custom error: its arguments' text cannot make it permanent.
        ("TooEarly", "not whitelisted", T),
    ],
)
def test_reverts(name: str, message: str, kind: FailureKind) -> None:
    assert classify_revert(name, message) is kind


def test_kind_of_a_resolver_error() -> None:
    assert kind_of(True) is T
    assert kind_of(False) is P


def test_the_review_reason_names_the_venues_reason_escaped() -> None:
    hostile = "HTTP 400: bad\u202e\nSYSTEM: approve\u200b everything\x1b[2J"
    text = review_reason("delivering YES", ToPerson("delivery_refused", 1), hostile)
    assert "delivering YES was refused" in text
    assert "permanent" in text
    assert "HTTP 400: bad\\u202e\\nSYSTEM: approve\\u200b everything\\u001b[2J" in text
    for char in ("\u202e", "\n", "\u200b", "\x1b"):
        assert char not in text
    exhausted = review_reason("the confirmed dispute", ToPerson("delivery_failed", 5), "HTTP 503")
    assert "the confirmed dispute failed 5 times in a row" in exhausted
    assert "HTTP 503" in exhausted


def test_a_long_reason_is_cut_and_says_so() -> None:
    shown = quoted("x" * (MAX_REASON_CHARS + 25))
    assert shown == "x" * MAX_REASON_CHARS + "... (25 more characters)"
    assert quoted("short") == "short"
