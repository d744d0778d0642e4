"""Configured secrets scrubbed from everything the oracle writes or sends.

Every configured secret (API keys read from `api_key_env`/`api_key_file`, `SecretStr`
settings such as RPC URLs, venue headers and the signer's key, credentials and key-like
query parameters in any URL of the settings, the keystore password) is registered here
(`add`, `add_settings`) when it is read, and replaced by `[redacted]` wherever outside text
could carry it back:

* at the boundaries, where outside text enters (`oracle.agents.http` quoting an error
  body, the `data` agent quoting a value, a page reader's or model server's error);
* at the sinks: every log record of every logger (`install`: `Logger.makeRecord` scrubs a
  record's message, arguments, traceback and `extra=` fields as it is made, and
  `ScrubFilter` on the root handlers does it again for records made elsewhere; the HTTP
  clients' own loggers are quiet below WARNING, `oracle.log.configure_logging`), a
  model's own turns (so a key it writes reaches neither a search provider nor the model
  again), tool results and errors sent to a model, agents' answers and failures
  (`oracle.daemon.research`), the proof before it is sealed, every row the store writes
  (`oracle.store.engine`: INSERT and UPDATE parameters), and /metrics.

A secret is matched as written and in its URL-encoded and JSON-escaped forms; secrets
shorter than `MIN_SECRET_CHARS` are not registered (they would scrub ordinary words).
Matching is one regular expression of escaped literals: linear in the text. A dict, list
or tuple is walked string by string only when its JSON text (written in C) shows a
secret's JSON-escaped form: most values hold none, and are told so at once.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

from pydantic import BaseModel, SecretStr

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8
# Query parameters that carry credentials (`?api_key=...`, `?token=...`).
_KEY_PARAMETER = re.compile(
    r"(?i)(^|[_-])(key|apikey|api_key|token|secret|password|passwd|pass|auth|sig|signature|"
    r"access_token|credential|credentials)$"
)
# A path segment that looks like a key (Infura's /v3/<key>, Alchemy's /v2/<key>).
_KEY_SEGMENT = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_-]{16,}$")


class Scrubber:
    """The registered secrets and the one pattern that finds any of them."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        # Every secret's form as it reads inside a JSON string (`_may_hold_secret`).
        self._in_json: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, *values: str | SecretStr | None) -> None:
        """Register secrets (None, empty and short values are ignored)."""
        fresh: set[str] = set()
        for value in values:
            text = value.get_secret_value() if isinstance(value, SecretStr) else value
            if text is None:
                continue
            text = text.strip()
            if len(text) < MIN_SECRET_CHARS:
                continue
            fresh |= {text, quote(text, safe=""), quote_plus(text), json.dumps(text)[1:-1]}
        with self._lock:
            if fresh <= self._secrets:
                return
            self._secrets |= fresh
            ordered = sorted(self._secrets, key=len, reverse=True)  # longest first
            # Before `_pattern`: whoever sees the new secrets there sees them here too.
            self._in_json = re.compile("|".join(re.escape(json.dumps(s)[1:-1]) for s in ordered))
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))
        install()

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        """`text` with every registered secret replaced by `[redacted]`."""
        pattern = self._pattern
        if pattern is None or not text:
            return text
        return pattern.sub(REDACTED, text)

    def value(self, value: Any) -> Any:
        """Strings scrubbed inside dicts, lists and tuples (keys too); the rest as is."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if not self._may_hold_secret(value):
            return value  # the common case, told without a walk in Python
        return self._walked(value)

    def _walked(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._walked(k): self._walked(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walked(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._walked(v) for v in value)
        return value

    def _may_hold_secret(self, value: Any) -> bool:
        """False only when no string inside `value` holds a secret: its JSON text (every
        string inside dicts, lists and tuples, keys too, escaped character by character,
        so a string holding a secret holds its escaped form) shows no secret's escaped
        form. Whatever JSON cannot write (a tuple key, a cycle) is walked."""
        in_json = self._in_json
        if in_json is None:
            return True
        try:
            text = json.dumps(value, default=_opaque)
        except Exception:  # a key JSON cannot write, a cycle, an integer too long
            return True
        return in_json.search(text) is not None

    def clear(self) -> None:
        """Forget every secret (tests)."""
        with self._lock:
            self._secrets.clear()
            self._pattern = None
            self._in_json = None


def _opaque(_value: object) -> None:
    """What `Scrubber.value` leaves as is (no dict, list, tuple or string): no text."""
    return None


SCRUBBER = Scrubber()


def add(*values: str | SecretStr | None) -> None:
    """Register secrets with the process's scrubber."""
    SCRUBBER.add(*values)


def scrub(text: str) -> str:
    """`text` without any registered secret."""
    return SCRUBBER.text(text)


def scrub_value(value: Any) -> Any:
    """`value` (JSON-like data) without any registered secret."""
    return SCRUBBER.value(value)


def secrets_in_url(url: str, *, key_segments: bool = False) -> list[str]:
    """The credentials a URL carries: its password (not the user name: "postgres" is no
    secret, and scrubbing it would mangle every "postgresql://"), key-like query
    parameters' values, and with `key_segments` (a URL that is itself a secret, as an RPC
    URL) path segments that look like keys."""
    try:
        parts = urlsplit(url.strip())
        password = parts.password
    except ValueError:
        return []
    found = [password] if password else []
    found += [
        value
        for name, value in parse_qsl(parts.query, keep_blank_values=False)
        if _KEY_PARAMETER.search(name)
    ]
    if key_segments:
        found += [segment for segment in parts.path.split("/") if _KEY_SEGMENT.match(segment)]
    return found


def settings_secrets(value: Any) -> list[str]:
    """Every secret in settings: `SecretStr` values (each word of them too, so the token of
    "Bearer <token>"; of those that are URLs, their credentials and key-like path
    segments), and the credentials of every other URL."""
    found: list[str] = []
    if isinstance(value, SecretStr):
        secret = value.get_secret_value()
        if "://" in secret:
            # A URL held as a secret (an RPC URL) is secret for what it carries: a plain
            # http://127.0.0.1:8545 scrubbed would leave the metrics' endpoints unnamed.
            found += secrets_in_url(secret, key_segments=True)
        else:
            found.append(secret)
            found += secret.split()  # a header's "Bearer <token>": the token alone too
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            found += settings_secrets(getattr(value, name, None))
    elif isinstance(value, dict):
        for item in value.values():
            found += settings_secrets(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            found += settings_secrets(item)
    elif value is not None and "://" in (text := str(value)) and len(text) < 100_000:
        found += secrets_in_url(text)
    return found


def add_settings(settings: BaseModel) -> None:
    """Register every secret of `settings` (`settings_secrets`)."""
    add(*settings_secrets(settings))


# -- logging -----------------------------------------------------------------------------


def scrub_record(record: logging.LogRecord) -> None:
    """The record's message (with its arguments), traceback, stack and `fields` scrubbed."""
    if not SCRUBBER.active:
        return
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: logging reports it itself
        return
    scrubbed = scrub(message)
    if scrubbed != message or record.args:
        record.msg, record.args = scrubbed, None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        text = scrub(record.exc_text)
        if text != record.exc_text:
            # The exception itself still holds the secret: only its scrubbed text is kept
            # (every formatter prints `exc_text` when it is set).
            record.exc_text, record.exc_info = text, None
    if record.stack_info:
        record.stack_info = scrub(record.stack_info)
    # What `extra=` set on the record: structured fields, an access log's request line.
    for name, value in list(vars(record).items()):
        if name not in _RECORD_ATTRIBUTES and isinstance(value, str | dict | list | tuple):
            setattr(record, name, scrub_value(value))


_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
}


class ScrubFilter(logging.Filter):
    """On a handler: scrubs every record it is given, whichever logger made it."""

    def filter(self, record: logging.LogRecord) -> bool:
        scrub_record(record)
        return True


_INSTALLED: list[Callable[..., logging.LogRecord]] = []


def install() -> None:
    """Scrub every log record of every logger as it is made, `extra=` fields included
    (`logging.Logger.makeRecord` wrapped, once per process), and on the root logger's
    handlers (for records made elsewhere)."""
    if not _INSTALLED:
        make_record = logging.Logger.makeRecord

        def scrubbed_record(self: logging.Logger, *args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make_record(self, *args, **kwargs)
            scrub_record(record)
            return record

        _INSTALLED.append(make_record)
        logging.Logger.makeRecord = scrubbed_record  # type: ignore[method-assign]
    install_on_handlers(logging.getLogger().handlers)


def install_on_handlers(handlers: Iterable[logging.Handler]) -> None:
    for handler in handlers:
        if not any(isinstance(f, ScrubFilter) for f in handler.filters):
            handler.addFilter(ScrubFilter())
