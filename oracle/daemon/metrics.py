"""The daemon's Prometheus metrics, on a registry of its own (tests build their own).
The research agents' metrics (`agents`: runs, tokens, cost, tool calls) are on it too, so
one `/metrics` serves everything a panel or an alert reads.

Naming follows Prometheus practice: `oracle_` prefix, base units (seconds, wei), `_total`
on counters, and no market ids as labels (they would grow without bound), except in
`oracle_market_attention_timestamp_seconds`: one series per market awaiting a person, at
most ATTENTION_LIMIT, so that an alert can name the market and link its proof. Labels
never carry a secret: RPC endpoints are their redacted URLs, signers their public
addresses, and the configuration shows only as a checksum of its masked form.

The accuracy ledger's rolling 7- and 30-day figures (`oracle_auto_submitted_accuracy`,
`oracle_agent_brier`) and their configured bounds are refreshed by the `housekeep` job.

The process's own metrics (`process_*`: CPU, memory, open files; `python_info`) are on the
registry too, and `oracle_build_info` says which version, commit and configuration run.

`DaemonMetrics` is the chain layer's observer (`oracle.chain.observer.ChainObserver`):
`oracle.app` hands it to the RPC pool and the transaction manager.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from oracle.agents.metrics import AgentMetrics
from oracle.core.bonds import OUR_PROPOSAL_DISPUTED
from oracle.core.clarifications import UNREADABLE
from oracle.core.decision import REVIEW_CODES
from oracle.core.failures import FailureKind
from oracle.core.lifecycle import MarketState
from oracle.core.scoring import RollingFigures

ERROR_STAGES = ("process", "watch", "settle", "poll", "promote", "dispatch", "housekeep", "clock")
# Why the daemon itself (not a verdict) hands a market to a person.
HANDOVER_CODES = (
    "retries_exhausted",
    "still_undecidable",
    "answer_lost",
    "delivery_refused",
    "delivery_failed",
)
# What a failed delivery was (`oracle_delivery_failures_total{action}`).
DELIVERY_ACTIONS = ("propose", "challenge", "settle")
# Review codes a venue gives (`oracle.daemon.ports.VenueReview`).
VENUE_REVIEW_CODES = (UNREADABLE, OUR_PROPOSAL_DISPUTED)
JOBS = ("poll", "promote", "dispatch", "watch", "housekeep")
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
RPC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
# The labels of `oracle_market_attention_timestamp_seconds`, and how many series it keeps.
ATTENTION_LABELS = ("market", "venue", "reason", "question", "answer", "answers", "review", "proof")
ATTENTION_LIMIT = 200
LABEL_MAX = 200  # characters of a question or a list of answers in a label
PIPELINE_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200)


class DaemonMetrics:
    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry = registry or CollectorRegistry()
        self._wall_clock = wall_clock  # block timestamps are wall-clock seconds
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
            "Failed polls, malformed markets and failed re-reads before research, by source.",
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
        self.debates = Counter(
            "oracle_debates_total",
            "Debates on conflicting answers, by how they stopped (converged, stalled, "
            "exhausted) and the verdict's action after them.",
            ["stop", "action"],
            registry=r,
        )
        self.debate_rounds = Counter("oracle_debate_rounds_total", "Debate rounds run.", registry=r)
        self.debate_flips = Counter(
            "oracle_debate_flips_total",
            "Agents that changed their outcome in a debate, by whether it counted (new "
            "evidence) or was marked (none).",
            ["counted"],
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
        self.review_oldest_open_age = Gauge(
            "oracle_review_oldest_open_age_seconds",
            "How long the oldest open review item has waited for a person (0: none open).",
            registry=r,
        )
        self.signer_balance = Gauge(
            "oracle_signer_balance_wei",
            "What a chain source's signer holds to pay for its answers, in wei of the "
            "native token, by source and signer address.",
            ["source", "signer"],
            registry=r,
        )
        self.llm_budget_per_day = Gauge(
            "oracle_llm_budget_usd_per_day",
            "The research agents' model spend allowed per day, in US dollars "
            "(metrics.llm_budget_usd_per_day; 0: no budget).",
            registry=r,
        )
        self.signer_min_balance = Gauge(
            "oracle_signer_min_balance_wei",
            "The balance below which a signer is reported (chains[].signer.min_balance_wei; "
            "the highest of the configured chains').",
            registry=r,
        )
        self.source_chain = Gauge(
            "oracle_source_chain",
            "1 for each chain source, labelled with the entry of `chains` it is on: join "
            "a source's figures on `source` to break them down by chain.",
            ["source", "chain"],
            registry=r,
        )
        self.tx_pending = Gauge(
            "oracle_tx_pending",
            "Transactions recorded and not yet final, of every signer in the database.",
            registry=r,
        )
        self.tx_oldest_pending_age = Gauge(
            "oracle_tx_oldest_pending_age_seconds",
            "Since when the oldest transaction not yet final was recorded (0: none pending); "
            "one that keeps growing is stuck.",
            registry=r,
        )
        self.tx_replacements = Counter(
            "oracle_tx_replacements_total",
            "Transactions replaced by one with higher fees (not mined in time, or the "
            "node asked for more).",
            registry=r,
        )
        self.rpc_call_seconds = Histogram(
            "oracle_rpc_call_seconds",
            "Time of one call on one RPC node, failed or not, by endpoint (its URL redacted).",
            ["endpoint"],
            buckets=RPC_BUCKETS,
            registry=r,
        )
        self.rpc_call_errors = Counter(
            "oracle_rpc_call_errors_total",
            "Calls on which the RPC node failed (transport, timeout, node trouble; not a "
            "refused request such as a revert), by endpoint (its URL redacted).",
            ["endpoint"],
            registry=r,
        )
        # Each RPC node as the pool's health checks last found it; labels: the chain id, the
        # node's place in chain.rpc.urls and its redacted URL (never credentials).
        node_labels = ["chain_id", "node", "endpoint"]
        self.rpc_node_up = Gauge(
            "oracle_rpc_node_up",
            "1 while the RPC pool may use the node (it answers, serves the chain, does not "
            "lag), by chain id, node index and endpoint (its URL redacted).",
            node_labels,
            registry=r,
        )
        self.rpc_node_head_age = Gauge(
            "oracle_rpc_node_head_age_seconds",
            "Seconds since the timestamp of the latest block the RPC node reported at its "
            "last health check, by chain id, node index and endpoint (its URL redacted); "
            "it grows while the node's head stands still or the node does not answer.",
            node_labels,
            registry=r,
        )
        self._add_bond_metrics(r)
        self.build_info = Gauge(
            "oracle_build_info",
            "1, labelled with what runs: the version, the commit (ORACLE_COMMIT) and the "
            "SHA-256 prefix of the effective configuration with its secrets masked.",
            ["version", "commit", "config_checksum"],
            registry=r,
        )
        # The accuracy ledger's rolling figures (`housekeep`, every
        # metrics.accuracy_refresh_interval), over markets final in the last 7 and 30 days;
        # each replica reads the shared database, so rules combine them with `max`.
        self.auto_submitted_accuracy = Gauge(
            "oracle_auto_submitted_accuracy",
            "Share of the answers the policy submitted by itself that turned out right, over "
            "markets final in the window (7d, 30d); absent while fewer than "
            "metrics.accuracy_min_answers.",
            ["window"],
            registry=r,
        )
        self.auto_submitted_final = Gauge(
            "oracle_auto_submitted_final",
            "Answers the policy submitted by itself whose market became final in the window.",
            ["window"],
            registry=r,
        )
        self.agent_brier = Gauge(
            "oracle_agent_brier",
            "An agent's mean Brier score over markets final in the window (0 perfect, 0.25 a "
            "coin toss); absent while it rests on fewer than metrics.accuracy_min_answers.",
            ["agent", "window"],
            registry=r,
        )
        self.agent_scored_answers = Gauge(
            "oracle_agent_scored_answers",
            "An agent's answers scored against the final outcomes of the window's markets.",
            ["agent", "window"],
            registry=r,
        )
        self.auto_submitted_accuracy_min = Gauge(
            "oracle_auto_submitted_accuracy_min",
            "The auto-submitted accuracy below which an alert fires "
            "(metrics.auto_submitted_accuracy_min; 0: no alert).",
            registry=r,
        )
        self.agent_brier_max = Gauge(
            "oracle_agent_brier_max",
            "The Brier score above which an agent is reported (metrics.agent_brier_max; "
            "0: no alert).",
            registry=r,
        )
        self._accuracy_series: dict[Gauge, set[tuple[str, ...]]] = {}
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)

        # One series per market awaiting a person (an open review item, or a disputed
        # answer), valued at when it began to wait: alerts can then name the market, its
        # question and the answers at stake, and link its proof and its review item.
        # Bounded by what awaits people (at most ATTENTION_LIMIT series): a decided or
        # settled market's series disappears at the next housekeeping.
        self.attention = Gauge(
            "oracle_market_attention_timestamp_seconds",
            "Since when (Unix time) a market awaits a person, by reason (review, disputed).",
            list(ATTENTION_LABELS),
            registry=r,
        )

    def _add_bond_metrics(self, r: CollectorRegistry) -> None:
        """The venues' bonds (UMA, Reality.eth): amounts in the currency's smallest unit."""
        self.bond_refusals = Counter(
            "oracle_bond_refusals_total",
            "Proposals not sent because their bond broke a venue's risk cap, by venue and "
            "reason (per_request_cap, outstanding_cap, reward_below_minimum, reward_below_gas; "
            "Reality.eth: per_question_cap, total_cap).",
            ["venue", "reason"],
            registry=r,
        )
        self.bond_balance = Gauge(
            "oracle_bond_balance",
            "What the signer holds of a bond currency, in its smallest unit, by venue and token.",
            ["venue", "token"],
            registry=r,
        )
        self.bond_min_balance = Gauge(
            "oracle_bond_min_balance",
            "The bond balance below which OracleBondBalanceLow fires (risk.min_bond_balance, "
            "in the currency's smallest unit; 0: no alert), by venue and token.",
            ["venue", "token"],
            registry=r,
        )
        self.bond_allowance = Gauge(
            "oracle_bond_allowance",
            "What the venue's oracle may still take of the signer's bond currency, in its "
            "smallest unit, by venue and token.",
            ["venue", "token"],
            registry=r,
        )
        self.bonds_at_risk = Gauge(
            "oracle_bonds_at_risk",
            "Bonds and final fees the signer posted and has not got back yet, plus those "
            "reserved for intents recorded and not yet seen on chain, in the currency's "
            "smallest unit, by venue and token.",
            ["venue", "token"],
            registry=r,
        )
        self.bonds_claimable = Gauge(
            "oracle_bonds_claimable",
            "What the signer won and can claim or withdraw on a venue (Reality.eth: "
            "finalized questions not claimed yet, and the balance held by the contract), "
            "in the currency's smallest unit, by venue and token.",
            ["venue", "token"],
            registry=r,
        )
        self.bonds_claimed = Counter(
            "oracle_bonds_claimed_total",
            "What the signer's claims credited it (bonds and bounties won), in the "
            "currency's smallest unit, by venue and token.",
            ["venue", "token"],
            registry=r,
        )
        self.bonds_lost = Counter(
            "oracle_bonds_lost_total",
            "Bonds the signer posted and lost, in the currency's smallest unit, by venue, "
            "token and reason (Reality.eth: reveal_missed, a commitment whose reveal window "
            "passed; outanswered, a question finalized on another's answer).",
            ["venue", "token", "reason"],
            registry=r,
        )
        self.answers_superseded = Counter(
            "oracle_answers_superseded_total",
            "Our answers another answer replaced (Reality.eth), by venue and what the bond "
            "policy did (defend, review).",
            ["venue", "decision"],
            registry=r,
        )
        self.venue_disagreements = Counter(
            "oracle_venue_disagreements_total",
            "Answers someone else proposed first on a venue that contradict our verdict.",
            ["venue"],
            registry=r,
        )
        self.challenges = Counter(
            "oracle_challenges_total",
            "Disputes and counter-answers a person confirmed, by result: disputed, answered, "
            "moot (nothing sent: the venue had moved on), failed (retried).",
            ["venue", "result"],
            registry=r,
        )
        self.delivery_failures = Counter(
            "oracle_delivery_failures_total",
            "Failed deliveries, by venue, action (propose: an answer; challenge: a dispute, "
            "counter-answer or defence a person confirmed; settle: a settle or claim) and "
            "kind (permanent: refused for good, a person looks at once; transient: retried "
            "with a growing delay, a person after daemon.max_attempts).",
            ["venue", "action", "kind"],
            registry=r,
        )

    def show_attention(self, items: Iterable[Mapping[str, str | float]]) -> None:
        """Replace the attention series with `items` (labels and `since`), oldest first."""
        self.attention.clear()
        for item in sorted(items, key=lambda i: float(i["since"]))[:ATTENTION_LIMIT]:
            labels = {name: _label(item.get(name, "")) for name in ATTENTION_LABELS}
            self.attention.labels(**labels).set(float(item["since"]))

    def show_accuracy(self, figures: Iterable[RollingFigures]) -> None:
        """The rolling figures of each window; a series a refresh no longer has is removed
        (never cleared first: a scrape in between would see the alerts' series vanish)."""
        values: dict[Gauge, dict[tuple[str, ...], float]] = {
            self.auto_submitted_accuracy: {},
            self.auto_submitted_final: {},
            self.agent_brier: {},
            self.agent_scored_answers: {},
        }
        for window in figures:
            values[self.auto_submitted_final][(window.window,)] = window.auto_submitted
            if window.auto_accuracy is not None:
                values[self.auto_submitted_accuracy][(window.window,)] = window.auto_accuracy
            for agent, count in window.agent_answers.items():
                values[self.agent_scored_answers][(agent, window.window)] = count
            for agent, score in window.agent_brier.items():
                values[self.agent_brier][(agent, window.window)] = score
        for gauge, series in values.items():
            for labels in self._accuracy_series.get(gauge, set()) - set(series):
                gauge.remove(*labels)
            for labels, value in series.items():
                gauge.labels(*labels).set(value)
            self._accuracy_series[gauge] = set(series)

    def prime(self, agents: Iterable[str], sources: Iterable[str]) -> None:
        """Create every known label combination at zero, so the first event shows in rate()."""
        for agent in agents:
            self.agent_latency.labels(agent)
            for result in ("answered", "failed"):
                self.agent_answers.labels(agent, result)
        for source in sources:
            self.source_polls.labels(source)
            self.markets_discovered.labels(source)
            for kind in ("poll", "malformed", "refresh"):
                self.source_errors.labels(source, kind)
            for action in DELIVERY_ACTIONS:
                for failure in FailureKind:
                    self.delivery_failures.labels(source, action, failure.value)
        for action in ("submit", "review", "research_again"):
            for reached in ("true", "false"):
                self.consensus.labels(action, reached)
        for code in (*REVIEW_CODES, *HANDOVER_CODES, *VENUE_REVIEW_CODES):
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

    def describe_build(self, version: str, commit: str, config_checksum: str) -> None:
        self.build_info.clear()  # one series: what runs now
        self.build_info.labels(version, commit, config_checksum).set(1)

    # -- oracle.chain.observer.ChainObserver -------------------------------------------------

    def rpc_call(self, endpoint: str, seconds: float, *, failed: bool) -> None:
        self.rpc_call_seconds.labels(endpoint).observe(seconds)
        errors = self.rpc_call_errors.labels(endpoint)  # at 0 from the first call, for rate()
        if failed:
            errors.inc()

    def tx_replaced(self) -> None:
        self.tx_replacements.inc()

    def rpc_node(
        self, chain_id: int, index: int, endpoint: str, *, up: bool, head_timestamp: int | None
    ) -> None:
        labels = (str(chain_id), str(index), endpoint)
        self.rpc_node_up.labels(*labels).set(1.0 if up else 0.0)
        if head_timestamp is not None:
            # Read at every scrape: the age keeps growing between health checks.
            self.rpc_node_head_age.labels(*labels).set_function(
                lambda: max(self._wall_clock() - head_timestamp, 0.0)
            )


def _label(value: object) -> str:
    """A label value: one line, at most LABEL_MAX characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= LABEL_MAX else text[: LABEL_MAX - 1] + "\u2026"
