"""oracle: an AI-agent oracle daemon for prediction markets.

Isolated research agents answer a market's question; the consensus core
(:mod:`oracle.core`) validates their evidence, computes a Byzantine-fault-tolerant
weighted consensus and produces a proof anyone can check.
"""

import sys as _sys

__version__ = "0.1.0"

# py_ecc (pulled in by the chain stack, through eth-keyfile) raises the interpreter's
# recursion limit to 100,000 when it is imported, for the BLS pairing code of v4 keystores,
# which oracle never runs. Under that limit, C code that recurses (json, repr, copy, pickle)
# overflows the thread stack and kills the process by SIGSEGV where it would otherwise
# raise RecursionError. So py_ecc is imported here, once, before anything else can import
# it, and the limit it found is put back. Outside JSON does not rely on this:
# oracle.safe_json refuses deep nesting under any limit.
_limit = _sys.getrecursionlimit()
import py_ecc  # noqa: E402, F401

_sys.setrecursionlimit(_limit)
del _limit
