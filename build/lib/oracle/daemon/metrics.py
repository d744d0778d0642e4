"""The daemon's Prometheus metrics, on a registry of its own (tests build their own).
The research agents' metrics (`agents`: runs, tokens, cost, tool calls) are on it too, so
one `/metrics` serves everything a panel or an alert reads.

Naming follows Prometheus practice: `oracle_` prefix, base units (seconds), `_total` on
counters, and no market ids as labels (they would grow without bound).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from oracle.agents.metrics import AgentMetrics
from oracle.core.decision import REVIEW_CODES
from oracle.core.lifecycle import MarketState

ERROR_STAGES = ("process", "watch", "settle", "poll", "promote", "dispatch", "housekeep", "clock")
# Why the daemon itself (not a verdict) hands a market to a person.
HANDOVER_CODES = ("retries_exhausted", "still_undecidable")
JOBS = ("poll", "promote", "dispatch", "watch", "housekeep")
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
PIPELINE_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200)


class DaemonMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.agents = AgentMetrics(r)
        self.markets = Gauge("oracle_markets", "Markets by lifecycle state.", ["state"], registry=r)
        for state in MarketState:
            self.markets.labels(state.value)
        self.reviews_open = Gauge(
            "oracle_reviews_open", "Review items awaiting a person.", registry=r
        )
        self.markets_discovered = Counter(
            "oracle_markets_discovered_total",
            "Markets first seen, by source.",
            ["source"],
            registry=r,
        )
        self.source_errors = Counter(
            "oracle_source_errors_total",
            "Failed polls or malformed markets, by source.",
            ["source", "kind"],
            registry=r,
        )
        self.agent_latency = Histogram(
            "oracle_agent_research_seconds",
            "Time one agent took to research one market.",
            ["agent"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.agent_answers = Counter(
            "oracle_agent_answers_total",
            "Agent answers, by agent and result (answered, failed).",
            ["agent", "result"],
            registry=r,
        )
        self.consensus = Counter(
            "oracle_consensus_total",
            "Verdicts, by action (submit, review, research_again) and whether the quorum agreed.",
            ["action", "reached"],
            registry=r,
        )
        self.review_reasons = Counter(
            "oracle_review_reasons_total",
            "Reasons verdicts went to review.",
            ["reason"],
            registry=r,
        )
        self.submissions = Counter(
            "oracle_submissions_total",
            "Answers delivered, by result (confirmed, failed).",
            ["result"],
            registry=r,
        )
        self.gas_used = Counter(
            "oracle_gas_used_total", "Gas used by the daemon's transactions.", registry=r
        )
        self.due_to_submitted = Histogram(
            "oracle_due_to_submitted_seconds",
            "From a market's resolution time to its answer being accepted.",
            buckets=PIPELINE_BUCKETS,
            registry=r,
        )
        self.errors = Counter(
            "oracle_errors_total",
            "Errors handled without stopping, by stage.",
            ["stage"],
            registry=r,
        )
        self.inflight = Gauge(
            "oracle_markets_in_flight", "Markets being worked on now.", registry=r
        )
        self.source_polls = Counter(
            "oracle_source_polls_total",
            "Polls of a market source, by source.",
            ["source"],
            registry=r,
        )
        self.job_failing = Gauge(
            "oracle_job_failing",
            "1 while a scheduled job's last run failed (it is retried with back-off).",
            ["name"],  # not `job`: Prometheus' own label for the scrape target
            registry=r,
        )
        self.source_up = Gauge(
            "oracle_source_up",
            "1 while a market source reaches its venue (a chain source: an RPC node answers).",
            ["source"],
            registry=r,
        )

    def prime(self, agents: Iterable[str], sources: Iterable[str]) -> None:
        """Create every known label combination at zero, so the first event shows in rate()."""
        for agent in agents:
            self.agent_latency.labels(agent)
            for result in ("answered", "failed"):
                self.agent_answers.labels(agent, result)
        for source in sources:
            self.source_polls.labels(source)
            self.markets_discovered.labels(source)
            for kind in ("poll", "malformed"):
                self.source_errors.labels(source, kind)
        for action in ("submit", "review", "research_again"):
            for reached in ("true", "false"):
                self.consensus.labels(action, reached)
        for code in (*REVIEW_CODES, *HANDOVER_CODES):
            self.review_reasons.labels(code)
        for result in ("confirmed", "failed"):
            self.submissions.labels(result)
        for stage in ERROR_STAGES:
            self.errors.labels(stage)
        for job in JOBS:
            self.job_failing.labels(job)

    def watch_health(self, name: str, health: Callable[[], str | None]) -> None:
        """`oracle_source_up{source=name}`, read from `health()` at every scrape."""
        self.source_up.labels(name).set_function(lambda: 0.0 if health() else 1.0)
