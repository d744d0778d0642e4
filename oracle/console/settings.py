"""The `console:` section: where the review console listens and how it guards sign-in."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Addresses a browser reaches only from this machine: the one place plain http is allowed.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class ConsoleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(8480, ge=0, le=65535)
    # Session cookies carry the Secure flag (sent over https only). Off only for local
    # development over http://localhost: the console refuses it on any other address.
    secure_cookies: bool = True
    session_hours: float = Field(8.0, gt=0, le=24 * 30, allow_inf_nan=False)
    # Sign-in throttling per account and client address: this many failures within the
    # window lock both out for lockout_seconds.
    login_max_failures: int = Field(5, ge=1, le=1000)
    login_window_seconds: float = Field(900.0, gt=0, allow_inf_nan=False)
    login_lockout_seconds: float = Field(900.0, gt=0, allow_inf_nan=False)
    # How often each open queue page's event stream looks for changes in the queue.
    queue_poll_seconds: float = Field(2.0, ge=0.05, le=300, allow_inf_nan=False)

    @model_validator(mode="after")
    def _secure_unless_local(self) -> Self:
        if not self.secure_cookies and self.host not in LOCAL_HOSTS:
            raise ValueError(
                f"secure_cookies: may be false only when host is one of "
                f"{', '.join(sorted(LOCAL_HOSTS))} (local development over http), "
                f"not {self.host!r}"
            )
        return self
