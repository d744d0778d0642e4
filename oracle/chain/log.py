"""Structured log events: a stable event name plus fields, never a secret.

`emit(logger, logging.WARNING, "tx.fee_above_cap", key=..., required_gwei=...)` logs the
message `tx.fee_above_cap key=... required_gwei=...` and attaches `event` and `fields` to
the record, so a JSON formatter (or a test) can read them without parsing text.
"""

from __future__ import annotations

import logging
from typing import Any


def emit(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    text = " ".join(f"{name}={value}" for name, value in fields.items())
    logger.log(level, "%s %s", event, text, extra={"event": event, "fields": fields}, stacklevel=2)
