"""Keystore passwords from a file or an environment variable (never from the command line)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import SecretStr

from oracle import scrub
from oracle.errors import KeystoreError


def read_password(password_file: Path | None, password_env: str | None) -> SecretStr:
    """The keystore password: from the file if one is given, else from the variable."""
    if password_file is not None:
        try:
            text = password_file.read_text(encoding="utf-8")
        except OSError as error:
            raise KeystoreError(
                f"{password_file}: password file cannot be read ({error.strerror})"
            ) from None
        password = text.rstrip("\r\n")
        if not password:
            raise KeystoreError(f"{password_file}: password file is empty")
        scrub.add(password)  # never in a log line or a record (oracle.scrub)
        return SecretStr(password)
    if password_env:
        value = os.environ.get(password_env)
        if value:
            scrub.add(value)
            return SecretStr(value)
        raise KeystoreError(f"${password_env}: keystore password variable is not set or empty")
    raise KeystoreError("no keystore password: set a password file or a password variable")
