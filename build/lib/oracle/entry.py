"""The `oracle` executable's first lines: for `oracle run`, catch SIGTERM before the heavy
imports, so a stop request during start-up still ends in a clean drain and exit 0."""

from __future__ import annotations

import signal
import sys

from oracle.shutdown import STOP_REQUESTED


def _request_stop(signum: int, frame: object) -> None:
    STOP_REQUESTED.set()


def main() -> None:
    if sys.argv[1:2] == ["run"]:
        signal.signal(signal.SIGTERM, _request_stop)
        signal.signal(signal.SIGINT, _request_stop)
    from oracle.cli import main as cli_main

    cli_main()
