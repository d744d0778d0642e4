"""The stop request of `oracle run`: set by the signal handler that `oracle.entry`
installs before the heavy imports, read by the runner once it starts (a SIGTERM that
arrives during start-up still ends in a clean drain and exit 0)."""

from __future__ import annotations

import threading

STOP_REQUESTED = threading.Event()
