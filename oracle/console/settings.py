"""The `console:` section: where the review console listens and how it guards sign-in."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Self

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from oracle.core.amounts import ETH, Token, Tokens
from oracle.errors import ConfigError

MoneyRule = Literal["four_eyes", "one_person"]


class TokenSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    symbol: str = Field(min_length=1, max_length=20)
    decimals: int = Field(18, ge=0, le=36)


# Addresses a browser reaches only from this machine: the one place plain http is allowed.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# An HMAC key shorter than this could be guessed offline from one signed export.
MIN_AUDIT_KEY_CHARACTERS = 32


class ConsoleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(8480, ge=0, le=65535)
    # Session cookies carry the Secure flag (sent over https only). Off only for local
    # development over http://localhost: the console refuses it on any other address.
    secure_cookies: bool = True
    session_hours: float = Field(8.0, gt=0, le=24 * 30, allow_inf_nan=False)
    # Sign-in limits. Per account: after login_max_failures failures, each further
    # attempt waits 2, 4, 8 ... seconds, at most login_max_delay_seconds (a delay, never a
    # lock, so a stranger failing on a reviewer's account cannot shut them out); failures
    # are forgotten after login_window_seconds without one. Per client address:
    # login_address_max_failures failures (any accounts) within the window refuse the
    # address until the window ends.
    login_max_failures: int = Field(5, ge=1, le=1000)
    login_window_seconds: float = Field(900.0, gt=0, allow_inf_nan=False)
    login_max_delay_seconds: float = Field(
        300.0,
        ge=1,
        le=24 * 3600,
        allow_inf_nan=False,
        # The name of the hard lockout this replaced: older configurations still load.
        validation_alias=AliasChoices("login_max_delay_seconds", "login_lockout_seconds"),
    )
    login_address_max_failures: int = Field(50, ge=1, le=100_000)
    # Behind a reverse proxy every request comes from the proxy's address, so the
    # per-address limit would count everyone together: name the header in which the proxy
    # puts the client's address (X-Forwarded-For, X-Real-IP). It is believed only from
    # `trusted_proxies`, and only its last address (the one the proxy itself added).
    client_address_header: str | None = Field(None, min_length=1, max_length=100)
    # How often each open queue page's event stream looks for changes in the queue.
    queue_poll_seconds: float = Field(2.0, ge=0.05, le=300, allow_inf_nan=False)
    # Single sign-on behind an authenticating proxy (oauth2-proxy: X-Auth-Request-User or
    # X-Forwarded-User): the header names the console account, whose role applies. It is
    # believed only from `trusted_proxies` (addresses or networks of the proxy itself);
    # from anywhere else it is ignored, or anyone could name any account.
    trusted_header: str | None = Field(None, min_length=1, max_length=100)
    trusted_proxies: tuple[str, ...] = ()
    # A file holding the secret key (at least 32 characters, e.g. `openssl rand -hex 32`)
    # that signs `oracle console audit export`: a signed export is an anchor the
    # database's writer cannot forge. Kept away from the database and its backups.
    audit_key_file: Path | None = None
    # Queue items per page (the queue is paginated on the server, soonest deadline first).
    page_size: int = Field(50, ge=5, le=500)
    # Decisions that move money (a dispute, a counter-answer, a defence: a confirmed
    # challenge that posts a bond) need a second person: `four_eyes` (the default) or
    # `one_person`; per venue (market source name) in `money_decisions_by_source`.
    money_decisions: MoneyRule = "four_eyes"
    money_decisions_by_source: dict[str, MoneyRule] = Field(default_factory=dict)
    # Amounts in token units: ERC-20 bond currencies by address (`symbol`, `decimals`),
    # named so even when the venue recorded what the token calls itself. Each chain's
    # native token is in its entry of `chains` (native_token).
    tokens: dict[str, TokenSettings] = Field(default_factory=dict)
    # Deprecated (one native token for every chain): applies to the entries of `chains`
    # that name none, and to markets whose chain is not known.
    native_token: TokenSettings | None = None
    # Block explorer links per chain id (or venue name): a template with {kind} ("tx" or
    # "address") and {value}, e.g. "https://polygonscan.com/{kind}/{value}".
    explorers: dict[str, str] = Field(default_factory=dict)
    # Per-person notifications (an item assigned to someone, a decision awaiting or given
    # approval): a small JSON body POSTed to this URL (an Alertmanager webhook receiver,
    # a chat bridge); null: none sent. A secret: a chat webhook's URL is its credential.
    notify_webhook_url: SecretStr | None = Field(None, min_length=1, max_length=2000)
    notify_timeout_seconds: float = Field(5.0, gt=0, le=60, allow_inf_nan=False)
    # A failed POST (no connection, a timeout, 5xx, 408, 429) is tried again after
    # `notify_retry_backoff_seconds`, doubling up to `notify_retry_backoff_max_seconds`,
    # until `notify_max_attempts` POSTs have failed; any other 4xx is not tried again.
    notify_max_attempts: int = Field(8, ge=1, le=100)
    notify_retry_backoff_seconds: float = Field(5.0, gt=0, le=3600, allow_inf_nan=False)
    notify_retry_backoff_max_seconds: float = Field(600.0, gt=0, le=86400, allow_inf_nan=False)

    @field_validator("explorers")
    @classmethod
    def _explorer_templates(cls, value: dict[str, str]) -> dict[str, str]:
        for key, template in value.items():
            if not template.startswith(("https://", "http://")) or "{value}" not in template:
                raise ValueError(
                    f"[{key}]: {template!r} must be an http(s) URL with {{value}} in it"
                )
        return value

    @field_validator("notify_webhook_url")
    @classmethod
    def _webhook(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(("https://", "http://")):
            raise ValueError("is not an http(s) URL")  # not quoted: it may carry a token
        return value

    def money_four_eyes(self, source: str) -> bool:
        """Whether a decision that moves money on `source` needs a second person."""
        return self.money_decisions_by_source.get(source, self.money_decisions) == "four_eyes"

    def token_table(self, native_by_chain: Mapping[str, Token] | None = None) -> Tokens:
        """The configured tokens, with each chain's native token by chain name (the whole
        configuration's `Settings.token_table` passes them)."""
        old = self.native_token
        return Tokens(
            {address: Token(t.symbol, t.decimals) for address, t in self.tokens.items()},
            ETH if old is None else Token(old.symbol, old.decimals),
            dict(native_by_chain or {}),
        )

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for index, entry in enumerate(value):
            try:
                network = ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"[{index}]: {entry!r} is not an IP address or network") from None
            if network.prefixlen < (24 if network.version == 4 else 64):
                # A whole range would let any machine in it sign in as anyone.
                raise ValueError(
                    f"[{index}]: {entry} is wider than a /24 (IPv4) or /64 (IPv6): name "
                    "the proxy's own addresses"
                )
        return value

    @model_validator(mode="after")
    def _header_needs_proxies(self) -> Self:
        if self.trusted_header is not None and not self.trusted_proxies:
            raise ValueError(
                "trusted_proxies: name the authenticating proxy's addresses to use trusted_header"
            )
        if self.client_address_header is not None and not self.trusted_proxies:
            raise ValueError(
                "trusted_proxies: name the reverse proxy's addresses to use client_address_header"
            )
        return self

    def _from_proxy(self, address: str | None) -> bool:
        if address is None:
            return False
        try:
            peer = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(peer in ipaddress.ip_network(n, strict=False) for n in self.trusted_proxies)

    def trusts(self, address: str | None) -> bool:
        """Whether a request from `address` may name its account in `trusted_header`."""
        return self.trusted_header is not None and self._from_proxy(address)

    def client_address(self, peer: str | None, headers: Mapping[str, str]) -> str:
        """The address a request came from, for the sign-in limits: the peer's, or from a
        trusted proxy the last address of `client_address_header` (earlier ones are
        whatever the client wrote). "unknown" when there is none."""
        if self.client_address_header is not None and self._from_proxy(peer):
            forwarded = headers.get(self.client_address_header, "").split(",")[-1].strip()
            try:
                return str(ipaddress.ip_address(forwarded))
            except ValueError:
                pass  # no usable address: count the proxy's own
        return peer or "unknown"

    @model_validator(mode="after")
    def _secure_unless_local(self) -> Self:
        if not self.secure_cookies and self.host not in LOCAL_HOSTS:
            raise ValueError(
                f"secure_cookies: may be false only when host is one of "
                f"{', '.join(sorted(LOCAL_HOSTS))} (local development over http), "
                f"not {self.host!r}"
            )
        return self

    def audit_key(self) -> bytes | None:
        """The audit export signing key (None: none configured); ConfigError naming
        `console.audit_key_file` when it cannot be read or is too short. Never shown."""
        path = self.audit_key_file
        if path is None:
            return None
        try:
            value = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            raise ConfigError(f"console.audit_key_file: {path}: no such file") from None
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or type(error).__name__
            raise ConfigError(
                f"console.audit_key_file: {path}: cannot be read ({reason})"
            ) from None
        if len(value) < MIN_AUDIT_KEY_CHARACTERS:
            raise ConfigError(
                f"console.audit_key_file: {path}: the key must be at least "
                f"{MIN_AUDIT_KEY_CHARACTERS} characters (e.g. `openssl rand -hex 32`)"
            )
        return value.encode()
