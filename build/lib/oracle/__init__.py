"""oracle: an AI-agent oracle daemon for prediction markets.

Isolated research agents answer a market's question; the consensus core
(:mod:`oracle.core`) validates their evidence, computes a Byzantine-fault-tolerant
weighted consensus and produces a proof anyone can check.
"""

import sys as _sys
from importlib import machinery as _machinery

__version__ = "0.1.0"

# py_ecc (pulled in by the chain stack, through eth-keyfile) raises the interpreter's
# recursion limit to 100,000 when it is imported, for the BLS pairing code of v4 keystores,
# which oracle never runs. Under that limit, C code that recurses (json, repr, copy, pickle)
# overflows the thread stack and kills the process by SIGSEGV where it would otherwise
# raise RecursionError. So whenever py_ecc is imported (by anything, after oracle), the
# limit it found is put back. Importing py_ecc here instead would cost every command,
# `oracle --help` included, about 30 ms. Outside JSON does not rely on this:
# oracle.safe_json refuses deep nesting under any limit.


class _KeepRecursionLimit:
    """A meta path finder that wraps py_ecc's loading to restore the recursion limit."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> object:
        if name != "py_ecc":
            return None
        spec = _machinery.PathFinder.find_spec(name, path)  # type: ignore[arg-type]
        loader = getattr(spec, "loader", None)
        if loader is None:
            return spec
        exec_module = loader.exec_module

        def exec_keeping_limit(module: object) -> None:
            limit = _sys.getrecursionlimit()
            try:
                exec_module(module)
            finally:
                _sys.setrecursionlimit(limit)

        loader.exec_module = exec_keeping_limit
        return spec


_sys.meta_path.insert(0, _KeepRecursionLimit)  # type: ignore[arg-type]
