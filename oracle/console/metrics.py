"""The console's Prometheus metrics, on its own registry (the daemon's conventions:
`oracle_` prefix, seconds, `_total` counters)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


class ConsoleMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.decisions = Counter(
            "oracle_console_decisions",
            "Review decisions recorded through the console, by reviewer.",
            ["reviewer"],
            registry=self.registry,
        )
        self.approvals = Counter(
            "oracle_console_approvals",
            "Decisions approved through the console (four-eyes), by approver.",
            ["approver"],
            registry=self.registry,
        )
        self.oldest_open_review_age = Gauge(
            "oracle_console_oldest_open_review_age_seconds",
            "Age of the oldest open review item (0 when none is open).",
            registry=self.registry,
        )
        self.open_reviews = Gauge(
            "oracle_console_open_reviews",
            "Review items open or awaiting approval, by status.",
            ["status"],
            registry=self.registry,
        )
        self.login_failures = Counter(
            "oracle_console_login_failures",
            "Failed sign-ins (wrong name or password, or refused while locked out).",
            ["kind"],
            registry=self.registry,
        )
