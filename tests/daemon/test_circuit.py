from __future__ import annotations

from oracle.daemon.circuit import CircuitBreaker, CircuitState


def test_opens_after_three_consecutive_failures() -> None:
    breaker = CircuitBreaker()
    breaker.record_failure(0)
    breaker.record_failure(1)
    assert breaker.allows(2)
    breaker.record_failure(2)
    assert breaker.state(3) is CircuitState.OPEN
    assert not breaker.allows(3)


def test_success_resets_the_failure_count() -> None:
    breaker = CircuitBreaker()
    for t in range(2):
        breaker.record_failure(t)
    breaker.record_success(2)
    breaker.record_failure(3)
    breaker.record_failure(4)
    assert breaker.state(5) is CircuitState.CLOSED


def test_half_open_after_cooldown_then_closed_after_two_successes() -> None:
    breaker = CircuitBreaker(cooldown_seconds=60)
    for t in range(3):
        breaker.record_failure(t)
    assert breaker.state(61) is CircuitState.OPEN
    assert breaker.state(62) is CircuitState.HALF_OPEN
    breaker.record_success(63)
    assert breaker.state(64) is CircuitState.HALF_OPEN
    breaker.record_success(65)
    assert breaker.state(66) is CircuitState.CLOSED


def test_failure_while_half_open_reopens() -> None:
    breaker = CircuitBreaker(cooldown_seconds=10)
    for t in range(3):
        breaker.record_failure(t)
    assert breaker.allows(13)
    breaker.record_failure(13)
    assert breaker.state(14) is CircuitState.OPEN
    assert breaker.state(23) is CircuitState.HALF_OPEN
