"""A per-agent circuit breaker, as the debate-phases document describes it. Pure: the
caller passes the time, so tests need no clock.

    closed --(failure_threshold consecutive failures)--> open
    open --(cooldown elapsed)--> half_open
    half_open --(success_threshold successes)--> closed
    half_open --(any failure)--> open
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CircuitState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass
class CircuitBreaker:
    failure_threshold: int = 3
    cooldown_seconds: float = 60.0
    success_threshold: int = 2
    _state: CircuitState = CircuitState.CLOSED
    _consecutive_failures: int = 0
    _half_open_successes: int = 0
    _opened_at: float = 0.0

    def state(self, now: float) -> CircuitState:
        if self._state is CircuitState.OPEN and now - self._opened_at >= self.cooldown_seconds:
            self._state = CircuitState.HALF_OPEN
            self._half_open_successes = 0
        return self._state

    def allows(self, now: float) -> bool:
        """Whether the agent may be asked now (closed, or half-open for a trial)."""
        return self.state(now) is not CircuitState.OPEN

    def record_success(self, now: float) -> None:
        state = self.state(now)
        self._consecutive_failures = 0
        if state is CircuitState.HALF_OPEN:
            self._half_open_successes += 1
            if self._half_open_successes >= self.success_threshold:
                self._state = CircuitState.CLOSED

    def record_failure(self, now: float) -> None:
        state = self.state(now)
        self._consecutive_failures += 1
        if state is CircuitState.HALF_OPEN or self._consecutive_failures >= self.failure_threshold:
            self._state = CircuitState.OPEN
            self._opened_at = now
            self._consecutive_failures = 0
