"""Structured logging: stable event names with fields, rendered as JSON lines or text.

`emit(logger, logging.INFO, "market.submitted", market=..., tx=...)` logs the message
`market.submitted market=... tx=...` and attaches `event` and `fields` to the record, so
the JSON formatter (or a test) reads them without parsing text. Never pass a secret.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from oracle.scrub import ScrubFilter, install, scrub_value

NOISY_LOGGERS = (
    "apscheduler",
    "aiohttp",
    "aiohttp.access",
    "aiohttp.client",
    "aiohttp.server",
    "httpx",
    "httpcore",
    "httpx2",  # the copies of httpx and httpcore the model SDKs bring
    "httpcore2",
    "openai",
    "anthropic",
    "web3",
    "urllib3",
    "alembic",
)


def emit(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    if not logger.isEnabledFor(level):
        return  # nothing to scrub or format for a record that is not made
    fields = scrub_value(fields)  # a configured secret never reaches a record (oracle.scrub)
    text = " ".join(f"{name}={value}" for name, value in fields.items())
    logger.log(level, "%s %s", event, text, extra={"event": event, "fields": fields}, stacklevel=2)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        event = getattr(record, "event", None)
        if event is not None:
            document["event"] = event
            document.update(getattr(record, "fields", {}))
        else:
            document["message"] = record.getMessage()
        if record.exc_text:  # set, and scrubbed, by oracle.scrub
            document["exception"] = record.exc_text
        elif record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, default=str, ensure_ascii=False)


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Every record of every logger is scrubbed of configured secrets (oracle.scrub).
    install()
    # Libraries' request-level chatter would drown the daemon's own events; and the HTTP
    # clients' own loggers name URLs (a redirect's Location once carried a model server's
    # key at INFO): they say nothing below WARNING.
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
    # A job run skipped because the previous one still runs, or coalesced after a busy
    # moment, is the configured behaviour (max_instances=1, coalesce), not a problem:
    # under load the scheduler would warn several times a second.
    logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)


class _Holder(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.addFilter(ScrubFilter())
        self.records: list[logging.LogRecord] = []
        self.dropping = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.dropping:
            self.records.append(record)


class HeldLogs:
    """Holds back every log record until `release()` writes them; `discard()` drops them.

    `oracle run` holds its logs while it checks its setup: a setup it refuses ends in the
    one line that names the problem, not after the records of the checks that led to it.
    """

    def __init__(self) -> None:
        self._root = logging.getLogger()
        self._handlers = self._root.handlers[:]
        self._holder = _Holder()
        self._root.handlers[:] = [self._holder]

    def release(self) -> None:
        """Write the held records and log as usual from now on (once; then a no-op)."""
        if self._holder.dropping or self._holder not in self._root.handlers:
            return
        self._root.handlers[:] = self._handlers
        for record in self._holder.records:
            for handler in self._handlers:
                if record.levelno >= handler.level:
                    handler.handle(record)
        self._holder.records.clear()

    def discard(self) -> None:
        """Drop the held records and every record from now on (the process is ending)."""
        self._holder.dropping = True
        self._holder.records.clear()
