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


def emit(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
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
        if record.exc_info:
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
    # Libraries' request-level chatter would drown the daemon's own events.
    for noisy in ("apscheduler", "aiohttp.access", "web3", "urllib3", "alembic"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
    # A job run skipped because the previous one still runs, or coalesced after a busy
    # moment, is the configured behaviour (max_instances=1, coalesce), not a problem:
    # under load the scheduler would warn several times a second.
    logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)
