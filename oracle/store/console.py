"""The review console's records: accounts (argon2 password hashes), sign-in sessions and
API tokens (only their SHA-256 is stored), sign-in throttling shared by every replica,
the append-only, hash-chained audit log (`oracle.core.audit`), and the per-person
notifications on their way (`oracle.console.notify`)."""

from __future__ import annotations

import base64
import hashlib
import logging
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from argon2.low_level import ARGON2_VERSION
from sqlalchemy import Connection, RowMapping, Table, delete, func, insert, text, update
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
    ConsoleNoticeRow,
    ConsoleSessionRow,
    ConsoleUserRow,
    LoginThrottleRow,
)

_USER: Table = ConsoleUserRow.__table__  # type: ignore[attr-defined]
_SESSION: Table = ConsoleSessionRow.__table__  # type: ignore[attr-defined]
_TOKEN: Table = ApiTokenRow.__table__  # type: ignore[attr-defined]
_THROTTLE: Table = LoginThrottleRow.__table__  # type: ignore[attr-defined]
_AUDIT: Table = ConsoleAuditRow.__table__  # type: ignore[attr-defined]
_NOTICE: Table = ConsoleNoticeRow.__table__  # type: ignore[attr-defined]

_LOG = logging.getLogger("oracle.console.audit")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
MIN_PASSWORD_LENGTH = 10
TOKEN_PREFIX = "oct_"
# Any constant shared by every replica: audit appends take turns on PostgreSQL.
_AUDIT_LOCK_ID = 7_300_418
_HASHER = PasswordHasher()


def _unmatchable_hash(hasher: PasswordHasher) -> str:
    """A hash in `hasher`'s format, with its parameters, that no password matches (its
    salt and digest are random bytes): verifying a password against it costs what it costs
    against an account's hash. Written out, not hashed: hashing cost every process that
    imports the store a third of a CPU second and 64 MB of peak memory (the daemon too)."""

    def encoded(size: int) -> str:
        return base64.b64encode(secrets.token_bytes(size)).decode().rstrip("=")

    return (
        f"$argon2{hasher.type.name.lower()}$v={ARGON2_VERSION}"
        f"$m={hasher.memory_cost},t={hasher.time_cost},p={hasher.parallelism}"
        f"${encoded(hasher.salt_len)}${encoded(hasher.hash_len)}"
    )


# Verified against when the account does not exist, so the answer takes as long either way.
_DUMMY_HASH = _unmatchable_hash(_HASHER)


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


@dataclass(frozen=True)
class SignInLimits:
    """The console's sign-in limits (`console:` settings `login_*`)."""

    free_failures: int
    window_seconds: float
    max_delay_seconds: float
    address_max_failures: int

    def delay_after(self, failures: int) -> float:
        """The wait before the next attempt on an account after `failures`: none for the
        first `free_failures`, then 2, 4, 8 ... seconds, capped."""
        if failures < self.free_failures:
            return 0.0
        exponent = min(failures - self.free_failures + 1, 62)  # 2**62 s is past any cap
        return float(min(2**exponent, self.max_delay_seconds))


@dataclass(frozen=True)
class SignInFailure:
    account_failures: int
    account_wait: float  # seconds before the next attempt on the account (0: none)
    delays_started: bool  # this failure made the account wait for the first time
    address_blocked: bool  # this failure reached the address's limit


@dataclass(frozen=True)
class DueNotice:
    """A notification taken to be sent: its row id, its body and how many POSTs have been
    begun, this one included."""

    id: int
    body: dict[str, Any]
    attempts: int


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

    # --- sign-in limits -------------------------------------------------------------
    #
    # Two lines, both rows of console_login_throttle shared by every replica:
    # - per account: after `free_failures`, each further attempt waits 2, 4, 8 ... seconds
    #   (at most `max_delay_seconds`) after the last failure; failures are forgotten
    #   after `window_seconds` without one. A delay, not a lock: whoever fails on
    #   someone's account slows it, never shuts its owner out for longer than the cap.
    # - per client address: `address_max_failures` failures (on any accounts) within
    #   `window_seconds` refuse that address until the window ends.
    # `locked_until` is when the next attempt is allowed; an attempt refused before then
    # is not verified and not counted, so waiting is all it takes.

    def sign_in_wait(self, account_key: str, address_key: str) -> float:
        """Seconds before an attempt on `account_key` from `address_key` is allowed (0: now)."""
        now = self.clock()
        with self.reading() as session:
            rows = session.connection().execute(
                core_select(_THROTTLE.c.locked_until).where(
                    _THROTTLE.c.key.in_([account_key, address_key])
                )
            )
            until = max((row[0] for row in rows), default=0.0)
        return max(until - now, 0.0)

    def sign_in_failed(
        self, account_key: str, address_key: str, limits: SignInLimits
    ) -> SignInFailure:
        """Count a failed sign-in against the account and the address."""
        now = self.clock()
        with self._writing() as connection:
            account = self._count_failure(
                connection, account_key, now, limits.window_seconds, quiet_after_wait=True
            )
            wait = limits.delay_after(account)
            self._set_allowed_at(connection, account_key, now + wait if wait else 0.0)
            address = self._count_failure(
                connection, address_key, now, limits.window_seconds, quiet_after_wait=False
            )
            blocked = address >= limits.address_max_failures
            if blocked:
                first = connection.execute(
                    core_select(_THROTTLE.c.first_failure_at).where(_THROTTLE.c.key == address_key)
                ).scalar_one()
                self._set_allowed_at(connection, address_key, first + limits.window_seconds)
        return SignInFailure(
            account_failures=account,
            account_wait=wait,
            delays_started=account == limits.free_failures,
            address_blocked=address == limits.address_max_failures,
        )

    def _count_failure(
        self,
        connection: Connection,
        key: str,
        now: float,
        window_seconds: float,
        *,
        quiet_after_wait: bool,
    ) -> int:
        """One more failure for `key`. Earlier ones are forgotten once the window has
        passed since the first (an address), or since the end of the last wait (an
        account: a sustained attack keeps it slowed)."""
        row = (
            connection.execute(
                core_select(_THROTTLE).where(_THROTTLE.c.key == key).with_for_update()
            )
            .mappings()
            .first()
        )
        if row is None:
            try:
                with connection.begin_nested():
                    connection.execute(
                        insert(_THROTTLE),
                        {"key": key, "failures": 1, "first_failure_at": now, "locked_until": 0.0},
                    )
                return 1
            except IntegrityError:  # another replica counted a first failure meanwhile
                return self._count_failure(
                    connection, key, now, window_seconds, quiet_after_wait=quiet_after_wait
                )
        quiet_since = row["first_failure_at"]
        if quiet_after_wait:
            quiet_since = max(quiet_since, row["locked_until"])
        if now - quiet_since >= window_seconds:
            failures, first = 1, now
        else:
            failures, first = row["failures"] + 1, row["first_failure_at"]
        connection.execute(
            update(_THROTTLE)
            .where(_THROTTLE.c.key == key)
            .values(failures=failures, first_failure_at=first)
        )
        return int(failures)

    def _set_allowed_at(self, connection: Connection, key: str, when: float) -> None:
        connection.execute(
            update(_THROTTLE).where(_THROTTLE.c.key == key).values(locked_until=when)
        )

    def sign_in_succeeded(self, account_key: str) -> None:
        """Forget the account's failures (not the address's: signing in to one account
        must not reset the count of an address that tries many)."""
        with self._writing() as connection:
            connection.execute(delete(_THROTTLE).where(_THROTTLE.c.key == account_key))

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

    # --- notifications --------------------------------------------------------------
    # A notice is `pending` until a POST is accepted (`sent`) or it is given up; both are
    # final, so a sent notice is never taken again. Taking one moves its next attempt past
    # the POST's time (`hold_seconds`) in the same statement that checks it is still due,
    # so two console replicas never POST the same notice at once, and one whose sender
    # died mid-POST is due again once the hold has passed.

    def queue_notice(self, body: Mapping[str, Any]) -> int:
        """Record a notification to send now; its row id."""
        now = self.clock()
        with self._writing() as connection:
            return int(
                connection.execute(
                    insert(_NOTICE).returning(_NOTICE.c.id),
                    {
                        "kind": body["kind"],
                        "review": body["review"],
                        "body": dict(body),
                        "status": "pending",
                        "attempts": 0,
                        "next_attempt_at": now,
                        "last_error": "",
                        "created_at": now,
                    },
                ).scalar_one()
            )

    def take_due_notices(self, hold_seconds: float, limit: int) -> list[DueNotice]:
        """Up to `limit` pending notices whose time has come, oldest due first, each now
        held for `hold_seconds` with one more attempt counted."""
        now = self.clock()
        taken: list[DueNotice] = []
        with self._writing() as connection:
            due = connection.execute(
                core_select(
                    _NOTICE.c.id, _NOTICE.c.body, _NOTICE.c.attempts, _NOTICE.c.next_attempt_at
                )
                .where(_NOTICE.c.status == "pending", _NOTICE.c.next_attempt_at <= now)
                .order_by(_NOTICE.c.next_attempt_at, _NOTICE.c.id)
                .limit(limit)
            ).all()
            for row in due:
                claimed = connection.execute(
                    update(_NOTICE)
                    .where(
                        _NOTICE.c.id == row.id,
                        _NOTICE.c.status == "pending",
                        _NOTICE.c.next_attempt_at == row.next_attempt_at,
                    )
                    .values(next_attempt_at=now + hold_seconds, attempts=row.attempts + 1)
                ).rowcount
                if claimed == 1:
                    taken.append(DueNotice(int(row.id), dict(row.body), int(row.attempts) + 1))
        return taken

    def notice_sent(self, notice_id: int) -> None:
        with self._writing() as connection:
            connection.execute(
                update(_NOTICE)
                .where(_NOTICE.c.id == notice_id)
                .values(status="sent", finished_at=self.clock(), last_error="")
            )

    def notice_failed(self, notice_id: int, error: str, retry_at: float | None) -> None:
        """A failed POST: try again at `retry_at`, or (None) give the notice up."""
        values: dict[str, Any] = {"last_error": error[:200]}
        if retry_at is None:
            values |= {"status": "given_up", "finished_at": self.clock()}
        else:
            values["next_attempt_at"] = retry_at
        with self._writing() as connection:
            connection.execute(update(_NOTICE).where(_NOTICE.c.id == notice_id).values(values))

    def pending_notices(self) -> tuple[int, float | None]:
        """How many notices are pending, and when the soonest is due (None: none is)."""
        with self.reading() as session:
            count, soonest = (
                session.connection()
                .execute(
                    core_select(func.count(), func.min(_NOTICE.c.next_attempt_at)).where(
                        _NOTICE.c.status == "pending"
                    )
                )
                .one()
            )
        return int(count), None if soonest is None else float(soonest)

    def notices(self) -> list[dict[str, Any]]:
        """Every notice, oldest first (tests and inspection)."""
        with self.reading() as session:
            return [
                dict(row)
                for row in session.connection()
                .execute(core_select(_NOTICE).order_by(_NOTICE.c.id))
                .mappings()
            ]
