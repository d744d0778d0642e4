"""Per-run statistics of research agents and their Prometheus metrics.

The metrics go on the registry they are given: the daemon's own (`oracle.app.assemble`),
so its `/metrics` serves them with everything else; tests build their own. Labels are
agent names, tools and results, never market ids.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter


@dataclass
class RunStats:
    """What one research run used: recorded on the agent (`last_run`) and in metrics."""

    agent: str
    market_id: str
    model: str = ""
    provider: str = ""
    result: str = "failed"  # answered, failed, too_early
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    estimated_usage_calls: int = 0  # model requests whose token counts the server did not give
    tool_calls: int = 0
    tool_crashes: int = 0  # tools that raised an unexpected exception (a bug: see the log)
    searches: int = 0
    pages_opened: int = 0
    tool_errors: int = 0
    answer_retries: int = 0
    sources_dropped: int = 0
    sources_unread: int = 0  # cited, kept as seen, not read: counted for nothing
    wall_seconds: float = 0.0
    error: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class AgentMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.runs = Counter(
            "oracle_agent_runs_total",
            "Research runs, by agent and result (answered, failed, too_early).",
            ["agent", "result"],
            registry=r,
        )
        self.tokens = Counter(
            "oracle_agent_tokens_total",
            "Model tokens used, by agent, provider, model and direction (input, output).",
            ["agent", "provider", "model", "direction"],
            registry=r,
        )
        self.cost = Counter(
            "oracle_agent_cost_usd_total",
            "Estimated model cost in US dollars, by agent, provider and model (from the "
            "configured prices).",
            ["agent", "provider", "model"],
            registry=r,
        )
        self.tool_calls = Counter(
            "oracle_agent_tool_calls_total",
            "Tool calls, by agent, tool and result (ok, error).",
            ["agent", "tool", "result"],
            registry=r,
        )
        self.tool_crashes = Counter(
            "oracle_agent_tool_crashes_total",
            "Tools that raised an unexpected exception (a bug; the log has the traceback), "
            "by agent and tool. The model was told the tool failed; the run went on.",
            ["agent", "tool"],
            registry=r,
        )
        self.model_calls = Counter(
            "oracle_agent_model_calls_total", "Model requests, by agent.", ["agent"], registry=r
        )
        self.window_reads = Counter(
            "oracle_window_reads_total",
            "Answer windows asked of the window model (daemon.window_model), by result "
            "(read, no_time, model_error, or the refusal's reason).",
            ["result"],
            registry=r,
        )

    def record_run(self, stats: RunStats) -> None:
        """Never raises: it runs as a run ends, and an answer must not be lost to it."""
        self.runs.labels(stats.agent, stats.result).inc()
        spender = (stats.agent, stats.provider, stats.model)
        self.tokens.labels(*spender, "input").inc(_amount(stats.input_tokens))
        self.tokens.labels(*spender, "output").inc(_amount(stats.output_tokens))
        self.cost.labels(*spender).inc(_amount(stats.cost_usd))
        self.model_calls.labels(stats.agent).inc(_amount(stats.model_calls))

    def record_tool(self, agent: str, tool: str, ok: bool) -> None:
        self.tool_calls.labels(agent, tool, "ok" if ok else "error").inc()

    def record_tool_crash(self, agent: str, tool: str) -> None:
        self.tool_crashes.labels(agent, tool).inc()


def _amount(value: float) -> float:
    """What a counter may add: finite and not negative (a counter raises otherwise)."""
    try:
        amount = float(value)
    except OverflowError:  # an int beyond float range
        return 0.0
    return amount if math.isfinite(amount) and amount > 0 else 0.0
