"""The review console's records: accounts (argon2 password hashes), sign-in sessions and
API tokens (only their SHA-256 is stored), sign-in throttling shared by every replica,
and the append-only, hash-chained audit log (`oracle.core.audit`)."""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Connection, RowMapping, Table, delete, insert, text, update
from sqlalchemy import select as core_select
from sqlalchemy.exc import IntegrityError

from oracle.core.audit import GENESIS, AuditHead, chain_problems, entry_hash
from oracle.core.review_rules import Role, parse_role
from oracle.errors import AccessDenied, StoreError
from oracle.log import emit
from oracle.store._transaction import Transactions
from oracle.store.tables import (
    ApiTokenRow,
    ConsoleAuditRow,
    ConsoleSessionRow,
    ConsoleUserRow,
    LoginThrottleRow,
)

_USER: Table = ConsoleUserRow.__table__  # type: ignore[attr-defined]
_SESSION: Table = ConsoleSessionRow.__table__  # type: ignore[attr-defined]
_TOKEN: Table = ApiTokenRow.__table__  # type: ignore[attr-defined]
_THROTTLE: Table = LoginThrottleRow.__table__  # type: ignore[attr-defined]
_AUDIT: Table = ConsoleAuditRow.__table__  # type: ignore[attr-defined]

_LOG = logging.getLogger("oracle.console.audit")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
MIN_PASSWORD_LENGTH = 10
TOKEN_PREFIX = "oct_"
# Any constant shared by every replica: audit appends take turns on PostgreSQL.
_AUDIT_LOCK_ID = 7_300_418
_HASHER = PasswordHasher()
# Verified against when the account does not exist, so the answer takes as long either way.
_DUMMY_HASH = _HASHER.hash("not a password of anyone")


def token_digest(token: str) -> str:
    """What is stored for a session or API token: its SHA-256 (the token has 256 random
    bits, so a slow hash would add nothing)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Person:
    """A signed-in person: account id, name and role."""

    id: int
    name: str
    role: Role


@dataclass(frozen=True)
class SignedIn:
    """A session's person and the CSRF token its forms must carry."""

    person: Person
    csrf_token: str


def _person(row: Mapping[Any, Any]) -> Person:
    return Person(id=row["id"], name=row["name"], role=Role(row["role"]))


class ConsoleRecords(Transactions):
    # --- accounts -------------------------------------------------------------------

    def add_user(self, name: str, role: str, password: str) -> Person:
        """A new account; StoreError naming the problem for a bad name, role or password."""
        if not _NAME.match(name):
            raise StoreError(
                f"user name {name!r}: use 1-100 letters, digits and . _ @ -, "
                "starting with a letter or digit"
            )
        try:
            parsed = parse_role(role)
        except ValueError as error:
            raise StoreError(str(error)) from None
        if len(password) < MIN_PASSWORD_LENGTH:
            raise StoreError(f"password: must be at least {MIN_PASSWORD_LENGTH} characters")
        try:
            with self._writing() as connection:
                user_id = connection.execute(
                    insert(_USER).returning(_USER.c.id),
                    {
                        "name": name,
                        "role": parsed.value,
                        "password_hash": _HASHER.hash(password),
                        "active": True,
                        "created_at": self.clock(),
                    },
                ).scalar_one()
                self._append_audit(
                    connection, "admin", "user.added", f"user:{name}", {"role": parsed.value}
                )
        except IntegrityError:
            raise StoreError(f"user {name!r} already exists") from None
        return Person(id=user_id, name=name, role=parsed)

    def disable_user(self, name: str, actor: str) -> None:
        """Take an account's access away at once: it can no longer sign in, its sessions
        end and its API tokens are revoked (its past decisions and audit entries stay)."""
        person = self.person(name)
        with self._writing() as connection:
            connection.execute(update(_USER).where(_USER.c.id == person.id).values(active=False))
            connection.execute(delete(_SESSION).where(_SESSION.c.user_id == person.id))
            self._revoke_tokens(connection, person.id)
            self._append_audit(connection, actor, "user.disabled", f"user:{name}", {})

    def revoke_tokens(self, name: str, actor: str) -> int:
        """Revoke every API token of account `name`; returns how many were live."""
        person = self.person(name)
        with self._writing() as connection:
            count = self._revoke_tokens(connection, person.id)
            self._append_audit(
                connection, actor, "token.revoked", f"user:{name}", {"tokens": count}
            )
        return count

    def _revoke_tokens(self, connection: Connection, user_id: int) -> int:
        result = connection.execute(
            update(_TOKEN)
            .where(_TOKEN.c.user_id == user_id, _TOKEN.c.revoked_at.is_(None))
            .values(revoked_at=self.clock())
        )
        return int(result.rowcount)

    def person(self, name: str) -> Person:
        """An active account by name, or AccessDenied."""
        with self.reading() as session:
            row = (
                session.connection()
                .execute(core_select(_USER).where(_USER.c.name == name, _USER.c.active.is_(True)))
                .mappings()
                .first()
            )
        if row is None:
            raise AccessDenied(f"no active console account named {name!r}")
        return _person(row)

    def people(self) -> list[Person]:
        """Every active account, by name."""
        with self.reading() as session:
            rows = session.connection().execute(
                core_select(_USER).where(_USER.c.active.is_(True)).order_by(_USER.c.name)
            )
            return [_person(row) for row in rows.mappings()]

    def _active_user(self, name: str) -> RowMapping | None:
        with self.reading() as session:
            return (
                session.connection()
                .execute(core_select(_USER).where(_USER.c.name == name, _USER.c.active.is_(True)))
                .mappings()
                .first()
            )

    def account_exists(self, name: str) -> bool:
        """Whether `name` is an account, active or disabled."""
        with self.reading() as session:
            found = (
                session.connection()
                .execute(core_select(_USER.c.id).where(_USER.c.name == name))
                .first()
            )
        return found is not None

    def person_named(self, name: str) -> Person | None:
        """The active account `name` (None: no such account, or disabled), for a sign-in
        an authenticating proxy vouched for."""
        row = self._active_user(name)
        return _person(row) if row is not None else None

    def authenticate(self, name: str, password: str) -> Person | None:
        """The account if the password is right, else None (same work either way)."""
        row = self._active_user(name)
        stored = row["password_hash"] if row is not None else _DUMMY_HASH
        try:
            _HASHER.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return None
        return _person(row) if row is not None else None

    # --- sign-in throttling ---------------------------------------------------------

    def login_locked_until(self, key: str) -> float:
        """Until when sign-ins for `key` (account and address) are refused (0: not)."""
        with self.reading() as session:
            row = (
                session.connection()
                .execute(core_select(_THROTTLE.c.locked_until).where(_THROTTLE.c.key == key))
                .first()
            )
        return 0.0 if row is None or row[0] <= self.clock() else float(row[0])

    def login_failed(
        self, key: str, *, max_failures: int, window_seconds: float, lockout_seconds: float
    ) -> float:
        """Count a failed sign-in; returns until when `key` is now locked (0: not)."""
        now = self.clock()
        with self._writing() as connection:
            row = (
                connection.execute(
                    core_select(_THROTTLE).where(_THROTTLE.c.key == key).with_for_update()
                )
                .mappings()
                .first()
            )
            if row is None:
                try:
                    connection.execute(
                        insert(_THROTTLE),
                        {"key": key, "failures": 1, "first_failure_at": now, "locked_until": 0.0},
                    )
                except IntegrityError:  # another replica counted the first failure too
                    return 0.0
                failures, first = 1, now
            else:
                failures, first = row["failures"] + 1, row["first_failure_at"]
                if now - first > window_seconds:
                    failures, first = 1, now
            locked_until = now + lockout_seconds if failures >= max_failures else 0.0
            connection.execute(
                update(_THROTTLE)
                .where(_THROTTLE.c.key == key)
                .values(
                    failures=0 if locked_until else failures,
                    first_failure_at=first,
                    locked_until=locked_until,
                ),
            )
        return locked_until

    def login_succeeded(self, key: str) -> None:
        with self._writing() as connection:
            connection.execute(delete(_THROTTLE).where(_THROTTLE.c.key == key))

    # --- sessions -------------------------------------------------------------------

    def start_session(self, person: Person, ttl_seconds: float) -> tuple[str, str]:
        """A new session for `person`: (its token, for the cookie; its CSRF token). Always
        new, so a session id planted before sign-in never becomes a signed-in one."""
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        now = self.clock()
        with self._writing() as connection:
            connection.execute(delete(_SESSION).where(_SESSION.c.expires_at < now))
            connection.execute(
                insert(_SESSION),
                {
                    "token_hash": token_digest(token),
                    "user_id": person.id,
                    "csrf_token": csrf,
                    "created_at": now,
                    "expires_at": now + ttl_seconds,
                },
            )
        return token, csrf

    def session_person(self, token: str) -> SignedIn | None:
        """Who a session token belongs to, if it is live and its account active."""
        with self.reading() as session:
            row = (
                session.connection()
                .execute(
                    core_select(_USER, _SESSION.c.csrf_token)
                    .join(_SESSION, _SESSION.c.user_id == _USER.c.id)
                    .where(
                        _SESSION.c.token_hash == token_digest(token),
                        _SESSION.c.expires_at > self.clock(),
                        _USER.c.active.is_(True),
                    )
                )
                .mappings()
                .first()
            )
        return None if row is None else SignedIn(_person(row), row["csrf_token"])

    def end_session(self, token: str) -> None:
        with self._writing() as connection:
            connection.execute(delete(_SESSION).where(_SESSION.c.token_hash == token_digest(token)))

    # --- API tokens -----------------------------------------------------------------

    def create_token(self, name: str) -> str:
        """A new API token acting as account `name`; shown once, stored hashed."""
        person = self.person(name)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._writing() as connection:
            connection.execute(
                insert(_TOKEN),
                {
                    "token_hash": token_digest(token),
                    "user_id": person.id,
                    "created_at": self.clock(),
                    "revoked_at": None,
                },
            )
            self._append_audit(connection, "admin", "token.created", f"user:{name}", {})
        return token

    def token_person(self, token: str) -> Person:
        """The account an API token acts as, or AccessDenied (never echoing the token)."""
        with self.reading() as session:
            row = (
                session.connection()
                .execute(
                    core_select(_USER)
                    .join(_TOKEN, _TOKEN.c.user_id == _USER.c.id)
                    .where(
                        _TOKEN.c.token_hash == token_digest(token),
                        _TOKEN.c.revoked_at.is_(None),
                        _USER.c.active.is_(True),
                    )
                )
                .mappings()
                .first()
            )
        if row is None:
            raise AccessDenied("the API token is not valid (unknown or revoked)")
        return _person(row)

    # --- the audit chain ------------------------------------------------------------

    def record(self, actor: str, action: str, subject: str, details: Mapping[str, Any]) -> None:
        """Append one entry to the audit log, in its own transaction."""
        with self._writing() as connection:
            self._append_audit(connection, actor, action, subject, details)

    def _append_audit(
        self,
        connection: Connection,
        actor: str,
        action: str,
        subject: str,
        details: Mapping[str, Any],
    ) -> None:
        """Append an entry in the caller's transaction, chained to the newest one."""
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _AUDIT_LOCK_ID})
        last = connection.execute(
            core_select(_AUDIT.c.id, _AUDIT.c.hash).order_by(_AUDIT.c.id.desc()).limit(1)
        ).first()
        entry: dict[str, Any] = {
            "id": 1 if last is None else last.id + 1,
            "at": self.clock(),
            "actor": actor,
            "action": action,
            "subject": subject,
            "details": dict(details),
            "prev_hash": GENESIS if last is None else last.hash,
        }
        head = AuditHead(entry["id"], entry_hash(entry))
        connection.execute(insert(_AUDIT), {**entry, "hash": head.head_hash})
        self._after_commit(lambda: self._publish_audit_head(head, action))

    @property
    def audit_head_listeners(self) -> list[Callable[[AuditHead], None]]:
        """Called with the new head after each committed append (the console's metrics)."""
        listeners: list[Callable[[AuditHead], None]] | None = self.__dict__.get(
            "_audit_head_listeners"
        )
        if listeners is None:
            listeners = self.__dict__["_audit_head_listeners"] = []
        return listeners

    def _publish_audit_head(self, head: AuditHead, action: str) -> None:
        """The anchor outside the database: whoever later cuts the log's tail or rewrites
        an entry (and every hash after it) cannot take back this line (docs/console.md)."""
        emit(
            _LOG,
            logging.INFO,
            "console.audit_appended",
            entries=head.entries,
            head_hash=head.head_hash,
            action=action,
        )
        for listener in self.audit_head_listeners:
            listener(head)

    def audit_head(self) -> AuditHead:
        """The newest entry's id and hash ((0, GENESIS) for an empty log)."""
        with self.reading() as session:
            last = (
                session.connection()
                .execute(
                    core_select(_AUDIT.c.id, _AUDIT.c.hash).order_by(_AUDIT.c.id.desc()).limit(1)
                )
                .first()
            )
        return AuditHead(0, GENESIS) if last is None else AuditHead(int(last.id), str(last.hash))

    def audit_entries(self, subject: str | None = None) -> list[dict[str, Any]]:
        """The audit log oldest first (only `subject`'s entries when given)."""
        query = core_select(_AUDIT).order_by(_AUDIT.c.id)
        if subject is not None:
            query = query.where(_AUDIT.c.subject == subject)
        with self.reading() as session:
            return [dict(row) for row in session.connection().execute(query).mappings()]

    def verify_audit(self) -> list[str]:
        """Every break in the audit chain (empty: it verifies)."""
        return chain_problems(self.audit_entries())
