"""oracle: an AI-agent oracle daemon for prediction markets.

Isolated research agents answer a market's question; the consensus core
(:mod:`oracle.core`) validates their evidence, computes a Byzantine-fault-tolerant
weighted consensus and produces a proof anyone can check.
"""

__version__ = "0.1.0"
