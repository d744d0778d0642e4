"""The console's Prometheus metrics, on its own registry (the daemon's conventions:
`oracle_` prefix, seconds, `_total` counters)."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge

from oracle.core.audit import AuditHead


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
            "Failed sign-ins: wrong name or password, refused as too soon after failures "
            "(delayed), or a single sign-on account unknown.",
            ["kind"],
            registry=self.registry,
        )
        # The audit log's head, as an anchor outside the database (docs/console.md): a
        # drop in the count, or a head Prometheus saw that the log no longer has, shows a
        # cut tail or a rewrite. A hash is no metric value, so it is a label of a constant 1.
        self.audit_entries = Gauge(
            "oracle_console_audit_entries",
            "Entries in the console's audit log (the newest entry's id).",
            registry=self.registry,
        )
        self.audit_head = Gauge(
            "oracle_console_audit_head_info",
            "The newest audit entry's hash and id (always 1).",
            ["head_hash", "entries"],
            registry=self.registry,
        )
        self.notifications = Counter(
            "oracle_console_notifications",
            "Per-person notification POSTs by outcome: sent; failed (tried again later); "
            "given_up (the attempts spent); refused (a 4xx, not tried again).",
            ["outcome"],
            registry=self.registry,
        )
        for outcome in ("sent", "failed", "given_up", "refused"):
            self.notifications.labels(outcome)
        self.pending_notifications = Gauge(
            "oracle_console_notifications_pending",
            "Per-person notifications recorded and not yet sent or given up.",
            registry=self.registry,
        )

        self._audit_lock = threading.Lock()
        self._audit_shown = -1

    def publish_audit_head(self, head: AuditHead, *, read: bool = False) -> None:
        """Show `head`: one just appended (an older one than shown is skipped: appends on
        several threads report in any order), or one `read` from the database, shown
        as it is (a drop there is what this metric is for)."""
        with self._audit_lock:
            if not read and head.entries < self._audit_shown:
                return
            self._audit_shown = head.entries
            self.audit_entries.set(head.entries)
            self.audit_head.clear()  # one head at a time
            self.audit_head.labels(head.head_hash, str(head.entries)).set(1)
