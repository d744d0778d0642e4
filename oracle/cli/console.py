"""`oracle console ...`: the review console (serve it; its accounts, tokens and audit log).

Like `oracle review`, these commands use the daemon's database and never create or
migrate it."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

    from oracle import scrub
    from oracle.config import load_settings
    from oracle.console.app import make_app
    from oracle.log import configure_logging
    from oracle.store.database import open_database
    from oracle.store.repository import Store

    settings = load_settings(config_path)
    # Every configured secret (the notification webhook's URL, the database's password)
    # scrubbed from what the console writes, as the daemon does.
    scrub.add_settings(settings)
    # Its log lines carry the audit log's head (console.audit_appended): an anchor.
    configure_logging(settings.log.level, settings.log.format)
    store = Store(open_database(settings.database.url, create=False))
    app = make_app(store, settings.console, settings.token_table())
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
    if not password_file and not sys.stdin.isatty():
        fail(
            f"oracle console user add: no terminal to ask {name}'s password on: "
            "give it with --password-file FILE"
        )
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
    """Every audit entry, oldest first, as JSON lines (each with its hash); then, when
    `console.audit_key_file` is set, a last line with the head signed by that key: an
    anchor for `audit verify --anchor`."""
    import json

    from oracle.config import load_settings
    from oracle.core.audit import head_of, sign_head

    key = load_settings(config_path).console.audit_key()
    with _review_store(config_path) as store:
        entries = store.audit_entries()
    lines = "".join(json.dumps(entry, sort_keys=True) + "\n" for entry in entries)
    if key is not None:
        lines += json.dumps({"anchor": sign_head(head_of(entries), key)}, sort_keys=True) + "\n"
    if output == "-":
        click.echo(lines, nl=False)
    else:
        Path(output).write_text(lines, encoding="utf-8")
    if key is None:
        click.echo(
            "unsigned: set console.audit_key_file to sign exports (docs/console.md)", err=True
        )


@dataclass(frozen=True)
class _Export:
    entries: list[dict[str, Any]]
    signed_head: dict[str, Any] | None  # the last line's anchor, if the export was signed


def _read_export(path: str, what: str) -> _Export:
    """An exported file: its entries and its signed head; exit 2 naming the file (after
    `what`, the option it came from) when it cannot be read or is not an export."""
    from oracle import safe_json

    name = f"{what} {path}" if what else path
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        fail(f"{name}: cannot be read ({error.strerror})")
    except UnicodeDecodeError:
        fail(f"{name}: not UTF-8 text")
    try:
        lines = [safe_json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as error:
        fail(f"{name}: not JSON lines ({error})")
    if not all(isinstance(line, dict) for line in lines):
        fail(f"{name}: every line must be a JSON object")
    signed = lines.pop()["anchor"] if lines and "anchor" in lines[-1] else None
    if signed is not None and not isinstance(signed, dict):
        fail(f"{name}: its last line's anchor is not an object")
    if any("anchor" in line for line in lines):
        fail(f"{name}: a signed head may only be the last line")
    return _Export(lines, signed)


def _export_problems(export: _Export, name: str, key: bytes | None) -> list[str]:
    """Breaks in an export itself: its chain, its entries against its signed head, and
    that head's signature (when a key is given)."""
    from oracle.core.audit import AuditHead, chain_problems, head_of, signature_problem

    problems = [f"{name}{p}" for p in chain_problems(export.entries)]
    signed = export.signed_head
    if signed is None:
        return problems
    if key is not None:
        problem = signature_problem(signed, key)
        if problem is not None:
            return [*problems, f"{name}the signed head does not verify: {problem}"]
    try:
        head = AuditHead(int(signed["entries"]), str(signed["head_hash"]))
    except (KeyError, TypeError, ValueError):
        return [*problems, f"{name}the signed head lacks its entry count or head hash"]
    ends = head_of(export.entries)
    if ends != head:
        problems.append(
            f"{name}the entries end at entry {ends.entries} ({ends.head_hash[:16]}…), not at "
            f"the signed head, entry {head.entries} ({head.head_hash[:16]}…): it was cut or "
            "altered"
        )
    return problems


def _anchor_problems(
    entries: list[dict[str, Any]], anchor: str, key: bytes | None
) -> tuple[list[str], str]:
    """How `entries` depart from `anchor` (ENTRIES:HASH, or a signed export's file), and
    what the anchor covered."""
    from oracle.core.audit import AuditHead, anchor_problems, export_differences

    try:
        head = AuditHead.parse(anchor)
    except ValueError as error:
        if not Path(anchor).is_file():
            fail(f"--anchor: {error}; nor is it a file (a signed export)")
    else:
        return anchor_problems(entries, head), f"anchored at entry {head.entries}"
    export = _read_export(anchor, "--anchor")
    if export.signed_head is None:
        fail(
            f"--anchor {anchor}: the export is not signed, so anyone who can write the "
            "database could have made it: export with console.audit_key_file set"
        )
    if key is None:
        fail(
            "--anchor: a signed export is checked with the console key: set console.audit_key_file"
        )
    problems = _export_problems(export, f"the anchor {anchor}: ", key)
    if problems:
        return problems, ""
    covered = f"anchored at entry {len(export.entries)} by a signed export"
    return export_differences(entries, export.entries), covered


@audit.command("verify")
@click.argument("exported", required=False)
@click.option(
    "--anchor",
    default=None,
    help="A head recorded outside the database (ENTRIES:HASH, from the console's "
    "console.audit_appended log lines or its oracle_console_audit_head_info metric), or "
    "a signed export: then a cut tail and a rewritten, rehashed entry show too.",
)
@config_option
def audit_verify(exported: str | None, anchor: str | None, config_path: str | None) -> None:
    """Check the chain (the database's, or an EXPORTED file): exit 0 when every hash
    holds, 1 naming each break. Without --anchor only breaks inside the chain show: a cut
    tail, or an entry changed with every hash after it recomputed, pass unseen."""
    import sys

    from oracle.config import load_settings
    from oracle.core.audit import chain_problems

    key = load_settings(config_path).console.audit_key()
    notes = []
    if exported is not None:
        export = _read_export(exported, "")
        entries = export.entries
        problems = _export_problems(export, "", key)
        if export.signed_head is not None:
            notes.append("signed head checked" if key else "signature not checked: no key")
    else:
        with _review_store(config_path) as store:
            entries = store.audit_entries()
        problems = chain_problems(entries)
    if anchor is not None:
        found, covered = _anchor_problems(entries, anchor, key)
        problems.extend(found)
        notes.append(covered)
    else:
        notes.append("no anchor: a cut tail or a rehashed rewrite would not show")
    for problem in problems:
        click.echo(problem)
    if problems:
        sys.exit(EXIT_CHECK_FAILED)
    click.echo(f"audit chain verifies: {len(entries)} entries ({'; '.join(notes)})")


@token.command("revoke")
@click.argument("name")
@config_option
def token_revoke(name: str, config_path: str | None) -> None:
    """Revoke every API token of account NAME."""
    with _review_store(config_path) as store:
        count = store.revoke_tokens(name, "admin")
    click.echo(f"revoked {count} token{'' if count == 1 else 's'} of {name}")
