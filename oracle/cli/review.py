"""`oracle review ...`: the queue of markets a person must decide.

These commands use the daemon's database and never create or migrate it: that is
`oracle db upgrade`'s job, and the daemon's."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from oracle.cli._common import config_option, fail
from oracle.core.review_rules import confirming
from oracle.core.text import visible
from oracle.errors import SetupError

if TYPE_CHECKING:
    from oracle.console.settings import ConsoleSettings
    from oracle.store.repository import Store


@click.group()
def review() -> None:
    """The queue of markets a person must decide."""


@contextmanager
def _review_store(config_path: str | None) -> Iterator[Store]:
    """The daemon's database, which must exist at the current schema: a person reviews
    what the daemon queued, so a database made here would only hide a wrong --config.
    A database failure on the way (it went away, it refuses writes) names `database.url`."""
    from sqlalchemy.exc import DBAPIError

    from oracle.config import load_settings
    from oracle.core.urls import redact_url
    from oracle.store.database import KEY, describe, open_database
    from oracle.store.repository import Store

    url = load_settings(config_path).database.url
    store = Store(open_database(url, create=False))
    try:
        yield store
    except DBAPIError as error:
        raise SetupError(KEY, f"{redact_url(url)}: {describe(error, url)}") from None
    finally:
        store.engine.dispose()


def _console_settings(config_path: str | None) -> ConsoleSettings:
    """The `console:` section: token names for amounts, explorer links, the money rule."""
    from oracle.config import load_settings

    return load_settings(config_path).console


def _shown(line: str = "") -> None:
    """One line for the terminal: market text and what quotes it is written by strangers,
    so every control and invisible character in it is shown as its escape (`\\n`,
    `\\u202e`, `oracle.core.text.visible`): nothing printed starts a line or reorders one."""
    click.echo(visible(line))


def _when(epoch: float | None) -> str:
    from datetime import UTC, datetime

    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _age(seconds: float) -> str:
    hours, minutes = divmod(int(seconds // 60), 60)
    return f"{hours}h{minutes:02d}m"


@review.command("list")
@config_option
@click.option("--all", "show_all", is_flag=True, help="Include decided and closed items.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print one JSON object, {"reviews": [ITEM, ...]}, oldest first; each ITEM has the '
    "item's id, status, market_id, venue, chain, question, reasons, age_seconds, "
    "resolve_after, claimed_by and decision (null until decided), among others.",
)
@click.option("--venue", default=None, help="Only this venue's items (its market_sources name).")
@click.option("--chain", default=None, help="Only items of markets on this chain (in chains).")
def review_list(
    config_path: str | None,
    show_all: bool,
    as_json: bool,
    venue: str | None,
    chain: str | None,
) -> None:
    """Review items, oldest first, with age, deadline, time left and reasons (one query)."""
    import json

    from oracle.config import load_settings
    from oracle.console.evidence import review_summary

    tokens = load_settings(config_path).token_table()
    with _review_store(config_path) as store:
        statuses = None if show_all else ["open", "needs_approval"]
        rows = store.review_queue(statuses, venue=venue, chain=chain)
        now = store.clock()
    summaries = [review_summary(item, market, now, tokens) for item, market in rows]
    if as_json:
        click.echo(json.dumps({"reviews": summaries}, indent=2))
        return
    if not summaries:
        _shown("no review items" if show_all else "no open review items")
    for s in summaries:
        decision = s["decision"]
        decided = f" -> {decision['outcome']} by {decision['by']}" if decision else ""
        _shown(f"{s['id']:>5}  {s['status']:<14} {s['market_id']}  {s['question']}{decided}")
        left = s["time_left_seconds"]
        due = f"late by {_age(-left)}" if left < 0 else f"due in {_age(left)}"
        _shown(
            f"       venue {s['venue']}"
            + (f" on chain {s['chain']}" if s["chain"] else "")
            + f", {due} ({s['deadline_by']}), waiting {_age(s['age_seconds'])}, "
            f"resolve after {_when(s['resolve_after'])}"
            + (f", at stake {s['stake']['text']}" if s["stake"] else "")
            + (f", claimed by {s['claimed_by']}" if s["claimed_by"] else "")
        )
        for reason in s["reasons"]:
            _shown(f"       - {reason}")


@review.command("show")
@click.argument("review_id", type=int)
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the full evidence as JSON.")
@click.option(
    "--full",
    is_flag=True,
    help="Every agent's whole reasoning, every source and quote, the whole history.",
)
def review_show(review_id: int, config_path: str | None, as_json: bool, full: bool) -> None:
    """One review item: the question, why it awaits a person, the consensus and its proof,
    each agent's answer in one line, the sources counted per outcome, failures, the
    debate and the latest history; `--full` adds every agent's reasoning, the sources and
    their quotes, and the whole history. `decide` binds to the checksum shown here."""
    import json

    from oracle.config import load_settings
    from oracle.console.evidence import gather

    settings = load_settings(config_path)
    with _review_store(config_path) as store:
        evidence = gather(
            store,
            review_id,
            tokens=settings.token_table(),
            explorers=settings.console.explorers,
        )
    if as_json:
        click.echo(json.dumps(evidence, indent=2))
        return
    _print_evidence(evidence, full=full)


def _answer_window(window: dict[str, Any]) -> str:
    """When the market's outcomes become final, and what said so (its words quoted as
    the market's text, which they are)."""
    import json

    line = f"answerable: every outcome final from {_when(window['closes_at'])}"
    if window.get("opens_at") is not None:
        line += f", the event from {_when(window['opens_at'])}"
    if window.get("early_outcomes"):
        line += f"; final once seen: {', '.join(window['early_outcomes'])}"
    return line + f" (from the {window['origin']}: {json.dumps(window['evidence'])})"


def _print_due_and_context(e: dict[str, Any]) -> None:
    """When the answer is due, what is at stake in token units, the on-chain facts."""
    r = e["review"]
    left = r["time_left_seconds"]
    late = f"late by {_age(-left)}" if left < 0 else f"{_age(left)} left"
    _shown(f"due: {_when(r['deadline_at'])} ({r['deadline_by']}); {late}")
    if r["stake"]:
        _shown(f"at stake: {r['stake']['text']}")
    for fact in e["context"]["facts"]:
        link = f" ({fact['link']})" if fact["link"] else ""
        _shown(f"{fact['label']}: {fact['value']}{link}")


# What the concise `review show` keeps: the start of an agent's reasoning, the latest
# history entries.
_REASONING_SHOWN = 120
_HISTORY_SHOWN = 3


def _first_line(text: str) -> str:
    """The first line of `text` that says something, cut at _REASONING_SHOWN characters;
    `...` marks what was left out."""
    lines = [part.strip() for part in text.split("\n") if part.strip()]
    line = lines[0] if lines else ""
    if len(line) > _REASONING_SHOWN:
        return line[: _REASONING_SHOWN - 3] + "..."
    return line + (" ..." if len(lines) > 1 else "")


def _print_evidence(e: dict[str, Any], *, full: bool) -> None:
    r, m, c = e["review"], e["market"], e["consensus"]
    on = f"{m['venue']} (chain {m['chain']})" if m.get("chain") else m["venue"]
    _shown(f"review {r['id']} ({r['status']}) for market {m['id']} on {on}")
    _shown(f"question: {m['question']}")
    _shown(f"criteria: {m['criteria'] or '(none)'}")
    _shown(f"outcomes: {', '.join(m['outcomes'])}")
    if hidden := m.get("hidden_characters"):
        _shown(
            f"this question contained {hidden} invisible "
            f"character{'' if hidden == 1 else 's'} (removed before any agent read it)"
        )
    _shown(f"waiting {_age(r['age_seconds'])}; resolve after {_when(m['resolve_after'])}")
    if window := m.get("answer_window"):
        _shown(_answer_window(window))
    if r["window_left_seconds"] is not None:
        _shown(
            f"venue window ends {_when(r['window_ends_at'])} "
            f"({_age(r['window_left_seconds'])} left)"
        )
    _print_due_and_context(e)
    if r.get("challenge"):
        ch = r["challenge"]
        _shown(
            f"another's answer stands: {ch['their_outcome']} by {ch['their_account']}; "
            f"our verdict: {ch['our_outcome']}"
        )
        _shown(
            f"  decide {ch['their_outcome']} to leave it standing (nothing is sent); decide "
            f"another outcome to confirm {ch['confirms']}"
        )
    _shown("reasons:")
    for reason in r["reasons"]:
        _shown(f"  - {reason}")
    for comment in e["comments"]:
        _shown(f"comment by {comment['by']} at {_when(comment['at'])}: {comment['text']}")
    if r["decision"]:
        d = r["decision"]
        _shown(f"decided: {d['outcome']} by {d['by']}: {d['reason']}")
        if d["approval_reason"]:
            approved = f"approved by {d['approved_by']}" if d["approved_by"] else "awaiting"
            _shown(f"four-eyes: {d['approval_reason']} ({approved})")
    if c is None:
        _shown("consensus: none recorded")
    else:
        verifies = "verifies" if c["proof_verifies"] else "DOES NOT VERIFY"
        _shown(
            f"consensus {c['id']}: {c['outcome']} (quorum "
            f"{'reached' if c['reached'] else 'not reached'}): {c['explanation']}"
        )
        _shown(f"proof checksum: {c['checksum']} ({verifies})")
    if full:
        _print_answers(e["outcomes"])
    else:
        _print_answers_briefly(e["outcomes"])
    for f in e["failures"]:
        _shown(f"failed: {f['agent_id']}: {f['error']}")
    if e["debate"]:
        _print_debate(e["debate"])
    if e["majority"]:
        _print_majority(e["majority"])
    for x in e["excluded"]:
        _shown(f"excluded: {x}")
    _print_history(e, full=full)


def _print_answers_briefly(outcomes: list[dict[str, Any]]) -> None:
    """Each outcome's sources counted, and its agents one line each."""
    _shown("answers:")
    for group in outcomes:
        sources = group["sources"]
        alone = sum(1 for s in sources if s["only_this_side"])
        unread = sum(1 for s in sources if not s.get("read", True))
        _shown(
            f"  {group['outcome']}: {len(group['agents'])} agent(s), "
            f"{len(sources)} source(s)"
            + (f", {alone} only this side" if alone else "")
            + (f", {unread} seen, not read: counted for nothing" if unread else "")
        )
        for a in group["agents"]:
            counted = "" if a["counted"] else ", not counted"
            _shown(
                f"    {a['agent_id']} {a['confidence']:.0%}{counted}: {_first_line(a['reasoning'])}"
            )


def _print_history(e: dict[str, Any], *, full: bool) -> None:
    """The market's and the console's history: the latest entries, or (`full`) all."""
    _shown("")
    history = e["history"] if full else e["history"][-_HISTORY_SHOWN:]
    earlier = len(e["history"]) - len(history)
    _shown("history:" + (f" (the latest {len(history)}; {earlier} earlier)" if earlier else ""))
    for h in history:
        _shown(f"  {_when(h['at'])} {h['actor']}: {h['from']} -> {h['to']} ({h['reason']})")
    console_history = e["console_history"] if full else e["console_history"][-_HISTORY_SHOWN:]
    for h in console_history:
        _shown(f"  {_when(h['at'])} {h['actor']}: {h['action']}")
    if not full:
        _shown("")
        _shown(
            "every agent's reasoning, the sources and their quotes: "
            f"oracle review show {e['review']['id']} --full"
        )


def _print_answers(outcomes: list[dict[str, Any]]) -> None:
    """Each outcome's agents with their whole reasoning, and its sources with quotes."""
    for group in outcomes:
        _shown("")
        _shown(f"== {group['outcome']}: {len(group['agents'])} agents")
        for a in group["agents"]:
            _shown(
                f"-- {a['agent_id']} ({a['provider'] or '?'}, family {a['model_family'] or '?'}, "
                f"confidence {a['confidence']:.0%}{'' if a['counted'] else ', not counted'})"
            )
            for line in a["reasoning"].split("\n"):
                _shown(line)
        _print_sources(group["sources"])


def _print_sources(sources: list[dict[str, Any]]) -> None:
    for s in sources:
        mark = "  [only this side]" if s["only_this_side"] else ""
        if not s.get("read", True):
            mark += "  [seen, not read: counted for nothing]"
        _shown(
            f"   * {s['title'] or s['url']} <{s['url']}> {s['category']}, credibility "
            f"{s['credibility']:.0%}, cited by {', '.join(s['cited_by'])}{mark}"
        )
        for q in s["quotes"]:
            _shown(f'     "{q["quote"]}" ({q["agent_id"]})')


# A flip's new sources shown in the terminal; the proof keeps every one.
_NEW_SOURCES_SHOWN = 5


def _print_debate(debate: dict[str, Any]) -> None:
    """The rounds of the debate that led to the verdict (the answers above came before)."""
    _shown("")
    strength = debate["strength"]
    _shown(
        f"debate: stopped {debate['stop']} after {len(debate['rounds'])} round(s); "
        f"agreement {strength['before']} -> {strength['after']}"
    )
    positions = ", ".join(f"{a}: {o}" for a, o in debate["initial"].items())
    _shown(f"  round 0 (independent): {positions}")
    for round_ in debate["rounds"]:
        positions = ", ".join(f"{a}: {o}" for a, o in round_["standing"].items())
        _shown(f"  round {round_['round']}: {positions}")
        for flip in round_["flips"]:
            why = (
                f"counted, {len(flip['new_sources'])} new source(s)"
                if flip["counted"]
                else "not counted: no new evidence"
            )
            _shown(f"    {flip['agent']} {flip['from']} -> {flip['to']} ({why})")
            shown = flip["new_sources"][:_NEW_SOURCES_SHOWN]
            for url in shown:
                _shown(f"      new evidence: {url}")
            hidden = len(flip["new_sources"]) - len(shown)
            if hidden:
                _shown(f"      ... and {hidden} more in the proof")
        for agent, error in round_["failures"].items():
            _shown(f"    {agent} failed: {error}")


def _print_majority(majority: dict[str, Any]) -> None:
    """`conflict_resolution: majority`: the proposed answer, a suggestion for the reviewer."""
    weights = ", ".join(f"{o}: {w:.3f}" for o, w in majority["weights"].items())
    proposed = majority["proposed"]
    _shown("")
    if proposed is None:
        _shown(f"majority: no proposal, the vote weights tie ({weights})")
    else:
        _shown(
            f"majority: proposes {proposed} ({majority['share']:.0%} of the vote weight: "
            f"{weights}); the decision is yours"
        )


TOKEN_ENV = "ORACLE_CONSOLE_TOKEN"


def _read_secret_file(path: str, what: str) -> str:
    from pathlib import Path

    try:
        value = Path(path).read_text(encoding="utf-8").strip()
    except OSError as error:
        fail(f"{what} {path}: cannot be read ({error.strerror})")
    if not value:
        fail(f"{what} {path}: is empty")
    return value


@review.command("decide")
@click.argument("review_id", type=int)
@click.option("--outcome", required=True, help="One of the market's outcomes, or INVALID.")
@click.option("--reason", required=True, help="Why; recorded with the decision.")
@click.option(
    "--token-file",
    default=None,
    help=f"A file holding the console API token to act as (or ${TOKEN_ENV}).",
)
@click.option(
    "--as",
    "account",
    default=None,
    help="An admin console account to act as; its password is asked for (or --password-file).",
)
@click.option("--password-file", default=None, help="The --as account's password, from a file.")
@click.option(
    "--checksum",
    default=None,
    help="The proof checksum `review show` printed: refused as stale if newer research "
    "arrived since (default: the latest consensus now).",
)
@config_option
def review_decide(  # click passes every option by name
    *,
    review_id: int,
    outcome: str,
    reason: str,
    token_file: str | None,
    account: str | None,
    password_file: str | None,
    checksum: str | None,
    config_path: str | None,
) -> None:
    """Decide a review item as a console account (an API token, or an admin account and
    its password). The four-eyes rule holds here too: an INVALID decision, or one
    overriding a consensus that reached quorum, waits for an approver's approval."""
    import os

    from oracle.core.review_rules import Action, may
    from oracle.errors import AccessDenied
    from oracle.store.reviews import Seen

    if not reason.strip():
        fail("--reason: must not be empty")
    token = (
        _read_secret_file(token_file, "--token-file") if token_file else os.environ.get(TOKEN_ENV)
    )
    if account is not None and token:
        fail("--as: give either an API token or --as, not both")
    if account is not None and not password_file and not sys.stdin.isatty():
        fail(
            f"oracle review decide: no terminal to ask {account}'s password on: "
            "give it with --password-file FILE (or use --token-file)"
        )
    with _review_store(config_path) as store:
        if account is not None:
            password = (
                _read_secret_file(password_file, "--password-file")
                if password_file
                else click.prompt(f"password of {account}", hide_input=True)
            )
            person = store.authenticate(account, password)
            if person is None:
                raise AccessDenied(f"--as {account}: wrong account name or password")
            if not may(person.role, Action.ADMINISTER):
                raise AccessDenied(
                    f"--as {account}: only an admin account decides without a token "
                    f"({account} is {person.role.value}); use an API token"
                )
        elif token:
            person = store.token_person(token)
        else:
            fail(f"who decides? give --token-file (or ${TOKEN_ENV}), or --as an admin account")
        if not may(person.role, Action.DECIDE):
            raise AccessDenied(f"{person.name} ({person.role.value}) may not decide")
        item = store.review(review_id)
        latest = store.latest_consensus(item.market_id)
        if checksum is not None and (latest is None or latest.checksum != checksum):
            from oracle.errors import StaleDecision

            raise StaleDecision(
                f"review {review_id}: the consensus shown (proof {checksum}) is no longer the "
                f"latest ({latest.checksum if latest else 'none'}): run `review show` again"
            )
        seen = Seen(latest.id, latest.checksum) if latest is not None else Seen(None, None)
        market = store.decide_review(
            review_id,
            outcome,
            reason.strip(),
            person.name,
            seen=seen,
            money_four_eyes=_console_settings(config_path).money_four_eyes,
        )
        decided = store.review(review_id)
        status = decided.status
    if status == "needs_approval":
        click.echo(
            f"review {review_id}: {market.id} decided {outcome} by {person.name}; "
            "it needs an approver's approval before the daemon submits it "
            f"({decided.approval_reason})"
        )
    elif status == "closed":
        click.echo(
            f"review {review_id}: {market.id} decided {outcome} by {person.name}; "
            "the answer standing on the venue is left as it is: nothing is sent"
        )
    elif market.state == "challenging":
        action = str(market.submission["challenge_pending"]["action"])
        click.echo(
            f"review {review_id}: {market.id} decided {outcome} by {person.name}; "
            f"the daemon will send {confirming(action)} on the venue, once"
        )
    else:
        click.echo(
            f"review {review_id}: {market.id} decided {outcome} by {person.name}; "
            "the daemon will submit it"
        )
