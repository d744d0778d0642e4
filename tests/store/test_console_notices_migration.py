"""Migration d7a3f9c1e402: the console's notifications table, added to a database the
previous schema wrote (its accounts kept), on SQLite and PostgreSQL; and the table's
rules there: a notice taken is held past its POST, sent is final, given up is final."""

from __future__ import annotations

from sqlalchemy import text

from oracle.store.engine import make_engine
from oracle.store.migrate import current_revision, head_revision, upgrade
from oracle.store.repository import Store

BEFORE = "c5d81f3a7e29"  # the head before notifications were recorded
NOTICE = {"kind": "assigned", "to": ["rita"], "by": "ann", "review": 3, "path": "/reviews/3"}


def test_the_notices_table_joins_a_database_of_the_previous_schema(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        upgrade(engine, BEFORE)
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO console_user (name, role, password_hash, active, created_at) "
                    "VALUES ('ann', 'approver', 'x', true, 0)"
                )
            )
        upgrade(engine)
        with engine.connect() as connection:
            assert current_revision(connection) == head_revision()
        now = [100.0]
        store = Store(engine, clock=lambda: now[0])
        assert [p.name for p in store.people()] == ["ann"]

        first = store.queue_notice(NOTICE)
        second = store.queue_notice({**NOTICE, "review": 4})
        assert store.pending_notices() == (2, 100.0)
        taken = store.take_due_notices(hold_seconds=35.0, limit=1)
        assert [(n.id, n.body, n.attempts) for n in taken] == [(first, NOTICE, 1)]
        # Held: another sender takes only the other one, and nothing more until the hold ends.
        assert [n.id for n in store.take_due_notices(35.0, 10)] == [second]
        assert store.take_due_notices(35.0, 10) == []

        store.notice_sent(first)
        store.notice_failed(second, "HTTP 503", retry_at=110.0)
        assert store.pending_notices() == (1, 110.0)
        now[0] = 200.0  # past both holds: only the pending one is due again
        [again] = store.take_due_notices(35.0, 10)
        assert (again.id, again.attempts) == (second, 2)
        store.notice_failed(second, "HTTP 503", retry_at=None)
        assert store.pending_notices() == (0, None)
        assert store.take_due_notices(35.0, 10) == []
        states = [(n["status"], n["attempts"], n["last_error"]) for n in store.notices()]
        assert states == [("sent", 1, ""), ("given_up", 2, "HTTP 503")]
    finally:
        engine.dispose()
