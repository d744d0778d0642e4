"""API keys for agents: named by an environment variable or a secrets file, never inline.

A key is read when the agent is built and held as a `SecretStr`, so it never appears in
a repr, a log line, an error message or `oracle config check`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from oracle.errors import ConfigError

EnvName = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class SecretRef(BaseModel):
    """Where a key comes from: `api_key_env` (a variable's name) or `api_key_file` (a path)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_key_env: EnvName | None = None
    api_key_file: Path | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SecretRef:
        if self.api_key_env is not None and self.api_key_file is not None:
            raise ValueError("set api_key_env or api_key_file, not both")
        return self

    @property
    def configured(self) -> bool:
        return self.api_key_env is not None or self.api_key_file is not None

    def resolve(self, where: str) -> SecretStr | None:
        """The key, or None when none is configured; ConfigError names `where` and the field."""
        if self.api_key_env is not None:
            value = os.environ.get(self.api_key_env, "").strip()
            if not value:
                raise ConfigError(
                    f"{where}.api_key_env: environment variable {self.api_key_env} is not set"
                )
            return SecretStr(value)
        if self.api_key_file is not None:
            try:
                value = self.api_key_file.read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                raise ConfigError(
                    f"{where}.api_key_file: {self.api_key_file}: no such file"
                ) from None
            except (OSError, UnicodeDecodeError) as error:
                reason = getattr(error, "strerror", None) or type(error).__name__
                raise ConfigError(
                    f"{where}.api_key_file: {self.api_key_file}: cannot be read ({reason})"
                ) from None
            if not value:
                raise ConfigError(f"{where}.api_key_file: {self.api_key_file} is empty")
            return SecretStr(value)
        return None

    def require(self, where: str) -> SecretStr:
        secret = self.resolve(where)
        if secret is None:
            raise ConfigError(f"{where}: needs api_key_env or api_key_file")
        return secret
