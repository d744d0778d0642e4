"""`oracle console ...`: the review console (serve it; its accounts, tokens and audit log).

Like `oracle review`, these commands use the daemon's database and never create or
migrate it."""

from __future__ import annotations

import click

from oracle.cli._common import EXIT_CHECK_FAILED, config_option, fail
from oracle.cli.review import _read_secret_file, _review_store


@click.group()
def console() -> None:
    """The review console: a web app where a team reviews escalations."""


@console.command("serve")
@config_option
def console_serve(config_path: str | None) -> None:
    """Serve the console (the `console:` section: host, port, cookies, sign-in limits)."""
    from aiohttp import web

    from oracle.config import load_settings
    from oracle.console.app import make_app
    from oracle.store.database import open_database
    from oracle.store.repository import Store

    settings = load_settings(config_path)
    store = Store(open_database(settings.database.url, create=False))
    app = make_app(store, settings.console)
    host, port = settings.console.host, settings.console.port
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"review console at http://{shown}:{port}/ (Ctrl-C stops it)")
    try:
        web.run_app(app, host=host, port=port, print=None, handle_signals=True)
    finally:
        store.engine.dispose()


@console.group("user")
def user() -> None:
    """Console accounts."""


@user.command("add")
@click.argument("name")
@click.option(
    "--role",
    required=True,
    type=click.Choice(["viewer", "reviewer", "approver", "admin"]),
    help="viewer reads; reviewer decides; approver also approves others' decisions; "
    "admin also manages accounts.",
)
@click.option("--password-file", default=None, help="Read the password from this file.")
@config_option
def user_add(name: str, role: str, password_file: str | None, config_path: str | None) -> None:
    """Add an account (the password is asked for twice, or read from --password-file)."""
    password = (
        _read_secret_file(password_file, "--password-file")
        if password_file
        else click.prompt(f"password for {name}", hide_input=True, confirmation_prompt=True)
    )
    with _review_store(config_path) as store:
        person = store.add_user(name, role, password)
    click.echo(f"added {person.name} ({person.role.value})")


@user.command("disable")
@click.argument("name")
@config_option
def user_disable(name: str, config_path: str | None) -> None:
    """Take NAME's access away now: no sign-in, sessions ended, API tokens revoked."""
    with _review_store(config_path) as store:
        store.disable_user(name, "admin")
    click.echo(f"disabled {name}: signed out, tokens revoked")


@console.group("token")
def token() -> None:
    """API tokens for scripts and `oracle review decide`."""


@token.command("create")
@click.argument("name")
@config_option
def token_create(name: str, config_path: str | None) -> None:
    """A new API token acting as account NAME: printed once, stored only hashed."""
    with _review_store(config_path) as store:
        value = store.create_token(name)
    click.echo(value)


@console.group("audit")
def audit() -> None:
    """The console's hash-chained audit log."""


@audit.command("export")
@click.option("--output", "-o", default="-", help="Write here (default: stdout).")
@config_option
def audit_export(output: str, config_path: str | None) -> None:
    """Every audit entry, oldest first, as JSON lines (each with its hash)."""
    import json

    with _review_store(config_path) as store:
        entries = store.audit_entries()
    lines = "".join(json.dumps(entry, sort_keys=True) + "\n" for entry in entries)
    if output == "-":
        click.echo(lines, nl=False)
    else:
        from pathlib import Path

        Path(output).write_text(lines, encoding="utf-8")


@audit.command("verify")
@click.argument("exported", required=False)
@config_option
def audit_verify(exported: str | None, config_path: str | None) -> None:
    """Check the chain (the database's, or an EXPORTED file): exit 0 when every hash
    holds, 1 naming each break."""
    import sys

    from oracle import safe_json
    from oracle.core.audit import chain_problems

    if exported is not None:
        from pathlib import Path

        try:
            text = Path(exported).read_text(encoding="utf-8")
        except OSError as error:
            fail(f"{exported}: cannot be read ({error.strerror})")
        try:
            entries = [safe_json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as error:
            fail(f"{exported}: not JSON lines ({error})")
        problems = chain_problems(entries)
        count = len(entries)
    else:
        with _review_store(config_path) as store:
            problems = store.verify_audit()
            count = len(store.audit_entries())
    for problem in problems:
        click.echo(problem)
    if problems:
        sys.exit(EXIT_CHECK_FAILED)
    click.echo(f"audit chain verifies: {count} entries")


@token.command("revoke")
@click.argument("name")
@config_option
def token_revoke(name: str, config_path: str | None) -> None:
    """Revoke every API token of account NAME."""
    with _review_store(config_path) as store:
        count = store.revoke_tokens(name, "admin")
    click.echo(f"revoked {count} token{'' if count == 1 else 's'} of {name}")
