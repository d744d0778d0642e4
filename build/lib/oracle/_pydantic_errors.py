"""Turn pydantic validation errors into one-line messages that name the field."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic import ValidationError

_MESSAGES_BY_TYPE = {
    "missing": "is required",
    "extra_forbidden": "unknown key",
    "finite_number": "must be a finite number (not NaN or infinity)",
}


def field_path(loc: Iterable[int | str], prefix: str = "") -> str:
    """`("results", 1, "confidence")` -> `results[1].confidence`."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(document)"


def describe(
    error: ValidationError, prefix: str = "", label: Callable[[str], str] | None = None
) -> list[str]:
    """One `path: reason` line per problem, in the order pydantic found them; `label`
    rewrites each path (to name where its value came from)."""
    lines = []
    for item in error.errors(include_url=False):
        message = _MESSAGES_BY_TYPE.get(item["type"], item["msg"])
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        path = field_path(item["loc"], prefix)
        lines.append(f"{label(path) if label else path}: {message}")
    return lines
