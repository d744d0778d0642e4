"""Errors of the research tools. A tool error is shown to the model, which may try again;
it never ends the run by itself."""

from __future__ import annotations

from oracle.errors import OracleError


class ToolError(OracleError):
    """A search or page read failed; the message is safe to show to the model and to log."""


class RateLimited(ToolError):
    """The service answered 429 and asked for more patience than the budget allows."""
