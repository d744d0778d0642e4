"""The review console's web app: aiohttp with server-rendered Jinja2 pages (autoescaped:
everything agents and web pages wrote is untrusted), a JSON API over the same checks,
`/healthz` and `/metrics`.

Security, in one place:
- every route is declared in `ROUTES` with the action its role must allow
  (`oracle.core.review_rules`); `_guard` checks it before the handler runs, for the
  pages and the JSON endpoints alike;
- a session is a random token in a Secure, HttpOnly, SameSite=Strict cookie, stored
  hashed; signing in always starts a new one (no fixation);
- every POST made with a session carries its CSRF token (a form field, or the
  X-CSRF-Token header), compared in constant time; API tokens (Authorization: Bearer)
  are never sent by a browser on its own, so they need none;
- sign-in failures are counted in the database: per account, further attempts wait
  longer and longer (capped: a stranger can slow a reviewer, not lock them out); per
  client address, too many end its attempts until the window passes;
- a strict Content-Security-Policy (`default-src 'self'`, no inline script or style);
  links are made only of http(s) URLs.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.resources import files
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import jinja2
from ada_url import URL as WhatwgUrl
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import SQLAlchemyError
from yarl import URL

from oracle.console import notify
from oracle.console.evidence import evidence_brief, gather, review_summary
from oracle.console.metrics import ConsoleMetrics
from oracle.console.settings import ConsoleSettings
from oracle.core.amounts import Tokens
from oracle.core.review_rules import Action, may
from oracle.errors import AccessDenied, StaleDecision, StoreError
from oracle.log import emit
from oracle.store.console import Person, SignInLimits
from oracle.store.repository import Store
from oracle.store.reviews import QueueQuery, Seen

SESSION_COOKIE = "oracle_console_session"
LOGIN_CSRF_COOKIE = "oracle_console_login"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
STATUSES = ("open", "needs_approval", "decided", "sent_back")
MAX_COMMENT_CHARACTERS = 4000
# What a redirect target after sign-in may contain: printable ASCII, without space and
# backslash (see `same_origin_path`).
_REDIRECT_CHARACTERS = frozenset(chr(code) for code in range(0x21, 0x7F)) - {"\\"}
# "." or ".." as a path segment, also percent-encoded (a browser decodes %2e there).
# Where a redirect target is resolved from to see whether it leaves the console.
_PLACEHOLDER_ORIGIN = "https://console.invalid"
_DOT_SEGMENT = re.compile(r"(?:^|/)(?:\.|%2e){1,2}(?:/|$)", re.IGNORECASE)

_LOG = logging.getLogger("oracle.console.audit")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Console:
    store: Store
    settings: ConsoleSettings
    # How amounts are named: the console's tokens and each chain's native token.
    tokens: Tokens
    metrics: ConsoleMetrics
    templates: jinja2.Environment
    # Set on shutdown: the event streams end instead of holding the server open.
    closing: asyncio.Event
    notifier: notify.Notifier
    # The notifier's sender, while the console runs (kept so it is not collected).
    background: set[asyncio.Task[None]] = field(default_factory=set)


CONSOLE = web.AppKey("console", Console)


class ClaimedElsewhere(StoreError):
    """A decision on an item another person claimed, not confirmed as such (HTTP 409)."""


PERSON = web.RequestKey("person", Person)
CSRF = web.RequestKey("csrf", str)


# --- template helpers -------------------------------------------------------------------


def safe_href(url: object) -> str | None:
    """`url` if a browser may follow it (http or https), else None: a `javascript:`,
    `data:` or relative URL is shown as text, never as a link."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() in ("http", "https") and parts.netloc:
        return url.strip()
    return None


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    sign = "-" if seconds < 0 else ""
    minutes = int(abs(seconds) // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"{sign}{days}d {hours}h"
    if hours:
        return f"{sign}{hours}h {minutes}m"
    return f"{sign}{minutes}m"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def templates() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("oracle.console", "templates"),
        autoescape=True,  # every template, whatever its name
        undefined=jinja2.StrictUndefined,
    )
    environment.filters.update(href=safe_href, when=_when, duration=_duration, pct=_pct)
    return environment


# --- identity and guards ----------------------------------------------------------------


async def _db(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(function, *args, **kwargs)


def _wants_json(request: web.Request) -> bool:
    return request.path.startswith("/api/")


async def _identify(request: web.Request) -> tuple[Person | None, str | None, bool]:
    """(the person, the session's CSRF token, whether by API token)."""
    console = request.app[CONSOLE]
    authorization = request.headers.get("Authorization", "")
    if authorization.startswith("Bearer "):
        try:
            person = await _db(console.store.token_person, authorization[7:].strip())
        except AccessDenied:
            return None, None, True
        return person, None, True
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None, None, False
    signed_in = await _db(console.store.session_person, token)
    if signed_in is None:
        return None, None, False
    return signed_in.person, signed_in.csrf_token, False


def _refuse(request: web.Request, status: int, message: str) -> web.StreamResponse:
    if _wants_json(request):
        return web.json_response({"error": message}, status=status)
    if status == 401:
        # Back to the page after signing in (as requested: still percent-encoded, with its
        # query); a refused POST goes back to the queue.
        target = request.raw_path if request.method == "GET" else "/"
        raise web.HTTPSeeOther(f"/login?next={quote(target, safe='')}")
    return _page(request, "error.html", status=status, message=message)


async def _forbid(request: web.Request, message: str) -> web.StreamResponse:
    """Refuse a signed-in person (403), with an audit entry: a refused action is worth
    knowing about (a probe, a misconfigured role, a forged form)."""
    console = request.app[CONSOLE]
    person: Person = request[PERSON]
    await _db(
        console.store.record,
        person.name,
        "console.refused",
        f"user:{person.name}",
        {"method": request.method, "path": request.path[:200], "reason": message},
    )
    return _refuse(request, 403, message)


def _guard(action: Action, handler: Handler) -> Handler:
    """Run `handler` only for a person whose role allows `action`; a POST made with a
    session must carry the session's CSRF token."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        person, csrf, by_token = await _identify(request)
        if person is None:
            return _refuse(request, 401, "sign in first (or send a valid API token)")
        request[PERSON], request[CSRF] = person, csrf or ""
        if request.method == "POST" and not by_token:
            sent = request.headers.get("X-CSRF-Token")
            if sent is None and request.content_type == "application/x-www-form-urlencoded":
                sent = (await request.post()).get("csrf_token")  # type: ignore[assignment]
            if not isinstance(sent, str) or csrf is None or not hmac.compare_digest(sent, csrf):
                return await _forbid(request, "the form's CSRF token is missing or wrong")
        if not may(person.role, action):
            return await _forbid(
                request, f"{person.name} ({person.role.value}) may not {action.value}"
            )
        try:
            return await handler(request)
        except (StaleDecision, ClaimedElsewhere) as error:
            return _refuse(request, 409, str(error))
        except AccessDenied as error:
            return await _forbid(request, str(error))
        except StoreError as error:
            return _refuse(request, 400, str(error))

    return guarded


def _page(request: web.Request, name: str, *, status: int = 200, **context: Any) -> web.Response:
    console = request.app[CONSOLE]
    person = request.get(PERSON)
    text = console.templates.get_template(name).render(
        person=person,
        csrf_token=request.get(CSRF) or "",
        may=lambda action: person is not None and may(person.role, Action(action)),
        **context,
    )
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


# --- sign-in ----------------------------------------------------------------------------


def _cookie_options(console: Console) -> dict[str, Any]:
    return {
        "httponly": True,
        "secure": console.settings.secure_cookies,
        "samesite": "Strict",
        "path": "/",
    }


async def login_form(
    request: web.Request, *, message: str = "", status: int = 200
) -> web.StreamResponse:
    console = request.app[CONSOLE]
    if request.method == "GET" and console.settings.trusts(request.remote):
        signed_in = await _sign_in_by_proxy(request)
        if signed_in is not None:
            return signed_in
    nonce = request.cookies.get(LOGIN_CSRF_COOKIE) or secrets.token_urlsafe(32)
    response = _page(
        request,
        "login.html",
        status=status,
        message=message,
        login_csrf=nonce,
        next=same_origin_path(request.query.get("next", "/")),
    )
    response.set_cookie(LOGIN_CSRF_COOKIE, nonce, max_age=3600, **_cookie_options(console))
    return response


async def _sign_in_by_proxy(request: web.Request) -> web.StreamResponse | None:
    """Single sign-on: the authenticating proxy (a trusted address) names the account in
    `console.trusted_header`; a session starts as after a password sign-in. None when the
    header is absent; a refusal when it names no active account."""
    console = request.app[CONSOLE]
    header = console.settings.trusted_header
    assert header is not None
    name = request.headers.get(header, "").strip()
    if not name:
        return None
    person = await _db(console.store.person_named, name)
    if person is None:
        console.metrics.login_failures.labels("unknown_sso_account").inc()
        await _db(
            console.store.record,
            "anonymous",
            "console.sign_in_failed",
            await _sign_in_subject(request, name),
            {"address": request.remote or "unknown", "via": "proxy"},
        )
        return _page(
            request,
            "error.html",
            status=403,
            message="the single sign-on account has no active console account: ask an admin",
        )
    return await _start_session(request, person, str(request.query.get("next", "/")), "proxy")


async def _start_session(
    request: web.Request, person: Person, target: str, via: str
) -> web.StreamResponse:
    """A new session for `person` (any session the browser held ends: no fixation)."""
    console = request.app[CONSOLE]
    old = request.cookies.get(SESSION_COOKIE)
    if old:
        await _db(console.store.end_session, old)
    token, _ = await _db(console.store.start_session, person, console.settings.session_hours * 3600)
    await _db(
        console.store.record, person.name, "console.signed_in", f"user:{person.name}", {"via": via}
    )
    response = web.HTTPSeeOther(same_origin_path(target))
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=math.ceil(console.settings.session_hours * 3600),
        **_cookie_options(console),
    )
    response.del_cookie(LOGIN_CSRF_COOKIE, path="/")
    return response


def same_origin_path(target: str) -> str:
    r"""`target` if a browser following it as a redirect stays on the console, else "/"
    (no open redirect). Browsers drop tab, CR and LF anywhere in a URL, read a backslash
    as a slash and collapse dot segments, so "/\t/host", "/\host" and "/..//host" would
    all become "//host" (another site): only printable ASCII without space or backslash
    is accepted, starting with one slash, free of dot segments and read by a WHATWG URL
    parser (ada-url, as a browser) as a path on the same origin; both as given and as
    aiohttp writes it into the Location header."""
    try:
        written = str(URL(target))
    except (ValueError, TypeError):
        return "/"
    if _plain_local_path(target) and _plain_local_path(written):
        return written
    return "/"


def _plain_local_path(target: str) -> bool:
    if not target or not set(target) <= _REDIRECT_CHARACTERS:
        return False
    if not target.startswith("/") or target.startswith("//"):
        return False
    path = target.split("?", 1)[0].split("#", 1)[0]
    if _DOT_SEGMENT.search(path):
        return False
    try:  # and as a browser reads it (WHATWG): same origin, no path taken for a host
        read = WhatwgUrl(target, _PLACEHOLDER_ORIGIN + "/login")
    except ValueError:
        return False
    return read.origin == _PLACEHOLDER_ORIGIN and not read.pathname.startswith("//")


async def login(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    form = await request.post()
    nonce = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    sent = form.get("csrf_token")
    if not nonce or not isinstance(sent, str) or not hmac.compare_digest(sent, nonce):
        return await login_form(request, message="The sign-in form expired: try again.", status=403)
    name = str(form.get("name", "")).strip()
    password = str(form.get("password", ""))
    settings = console.settings
    address = settings.client_address(request.remote, request.headers)
    # Only a real account gets a count of its own: any other name (it may be a password
    # typed into the name field) shares one, and is never stored.
    known = await _db(console.store.account_exists, name)
    subject = f"user:{name}" if known else "user:?"
    account_key, address_key = f"account:{subject}", f"address:{address}"
    wait = await _db(console.store.sign_in_wait, account_key, address_key)
    if wait > 0:
        console.metrics.login_failures.labels("delayed").inc()
        seconds = math.ceil(wait)
        response = await login_form(
            request,
            message=f"Too many failed sign-ins: try again in {_duration_text(seconds)}.",
            status=429,
        )
        response.headers["Retry-After"] = str(seconds)
        return response
    person = await _db(console.store.authenticate, name, password)
    if person is None:
        console.metrics.login_failures.labels("wrong").inc()
        failure = await _db(
            console.store.sign_in_failed,
            account_key,
            address_key,
            SignInLimits(
                free_failures=settings.login_max_failures,
                window_seconds=settings.login_window_seconds,
                max_delay_seconds=settings.login_max_delay_seconds,
                address_max_failures=settings.login_address_max_failures,
            ),
        )
        where = {"address": address}
        await _db(console.store.record, "anonymous", "console.sign_in_failed", subject, where)
        if failure.delays_started:
            details = {**where, "failures": failure.account_failures}
            await _db(console.store.record, "console", "console.sign_in_delayed", subject, details)
        if failure.address_blocked:
            await _db(
                console.store.record,
                "console",
                "console.sign_in_address_blocked",
                f"address:{address}",
                where,
            )
        return await login_form(request, message="Wrong name or password.", status=401)
    await _db(console.store.sign_in_succeeded, account_key)
    return await _start_session(request, person, str(form.get("next", "/")), "password")


def _duration_text(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'' if seconds == 1 else 's'}"
    return _duration(seconds)


async def _sign_in_subject(request: web.Request, name: str) -> str:
    """The audit subject of a failed sign-in: the account, if `name` is one. Any other
    name is not kept: it may be a password typed into the name field."""
    known = await _db(request.app[CONSOLE].store.account_exists, name)
    return f"user:{name}" if known else "user:?"


async def logout(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        await _db(console.store.end_session, token)
    person: Person = request[PERSON]
    await _db(console.store.record, person.name, "console.signed_out", f"user:{person.name}", {})
    response = web.HTTPSeeOther("/login")
    response.del_cookie(SESSION_COOKIE, path="/")
    return response


# --- the queue and the evidence ---------------------------------------------------------


def _summaries(console: Console, rows: Any) -> list[dict[str, Any]]:
    now = console.store.clock()
    tokens = console.tokens
    return [review_summary(item, market, now, tokens) for item, market in rows]


def _queue_query(request: web.Request) -> tuple[QueueQuery, dict[str, str]]:
    """The queue page asked for: status, search, venue, chain, reason, assignee and page."""
    console = request.app[CONSOLE]
    filters = {
        key: request.query.get(key, default).strip()[:200]
        for key, default in (
            ("status", "open"),
            ("q", ""),
            ("venue", ""),
            ("chain", ""),
            ("reason", ""),
            ("assignee", ""),
            ("page", "1"),
        )
    }
    # The older name of the assignee filter ("claimed": mine / nobody) still works.
    claimed = request.query.get("claimed", "")
    if claimed and not filters["assignee"]:
        filters["assignee"] = claimed
    if filters["status"] not in (*STATUSES, "all"):
        raise StoreError(f"status {filters['status']!r} is not one of {', '.join(STATUSES)}, all")
    try:
        page = max(int(filters["page"]), 1)
    except ValueError:
        raise StoreError(f"page {filters['page']!r} is not a number") from None
    assignee = request[PERSON].name if filters["assignee"] == "mine" else filters["assignee"]
    query = QueueQuery(
        statuses=None if filters["status"] == "all" else (filters["status"],),
        search=filters["q"],
        venue=filters["venue"],
        chain=filters["chain"],
        reason=filters["reason"],
        assignee=assignee,
        page=page,
        per_page=console.settings.page_size,
    )
    return query, filters


async def _queue_rows(
    request: web.Request,
) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, Any]]:
    console = request.app[CONSOLE]
    query, filters = _queue_query(request)
    rows, total = await _db(console.store.review_page, query)
    pages = max(math.ceil(total / query.per_page), 1)
    paging = {"page": query.page, "pages": pages, "total": total, "per_page": query.per_page}
    return _summaries(console, rows), filters, paging


def _page_link(filters: dict[str, str], page: int) -> str:
    """The queue's URL with the same filters, at `page`."""
    query = {k: v for k, v in filters.items() if v and k != "page"}
    return "/?" + urlencode({**query, "page": page})


async def queue(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    rows, filters, paging = await _queue_rows(request)
    venues = await _db(console.store.review_venues)
    chains = await _db(console.store.review_chains)
    return _page(
        request,
        "queue.html",
        rows=rows,
        filters=filters,
        statuses=STATUSES,
        paging=paging,
        venues=venues,
        chains=chains,
        page_link=lambda page: _page_link(filters, page),
    )


async def queue_rows_fragment(request: web.Request) -> web.StreamResponse:
    """The queue rows of the items `ids` (comma-separated, at most one page), as the queue
    page shows them: the live script puts them in place of the rows that changed."""
    console = request.app[CONSOLE]
    try:
        ids = [int(part) for part in request.query.get("ids", "").split(",") if part.strip()]
    except ValueError:
        raise StoreError("ids must be review numbers, separated by commas") from None
    ids = ids[: console.settings.page_size]
    rows = _summaries(console, await _db(console.store.review_rows, ids))
    return _page(request, "queue_rows.html", rows=rows)


async def approvals(request: web.Request) -> web.StreamResponse:
    """Decisions awaiting a second person, each with the evidence an approver needs at a
    glance: the consensus and its quorum, how the agents split, what is at stake."""
    console = request.app[CONSOLE]
    rows = _summaries(console, await _db(console.store.review_queue, ["needs_approval"]))
    briefs = {}
    for row in rows:
        briefs[row["id"]] = await _db(evidence_brief, console.store, row["id"], console.tokens)
    return _page(request, "approvals.html", rows=rows, briefs=briefs)


def _review_id(request: web.Request) -> int:
    try:
        return int(request.match_info["review_id"])
    except ValueError:
        raise StoreError(f"review {request.match_info['review_id']!r} is not a number") from None


async def _evidence(request: web.Request) -> dict[str, Any]:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    evidence: dict[str, Any] = await _db(
        gather,
        console.store,
        review_id,
        tokens=console.tokens,
        explorers=console.settings.explorers,
    )
    consensus = evidence["consensus"]
    await _db(
        console.store.record,
        request[PERSON].name,
        "review.viewed",
        f"market:{evidence['market']['id']}",
        {"review": review_id, "consensus": consensus["id"] if consensus else None},
    )
    return evidence


async def review_page(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    evidence = await _evidence(request)
    people = await _db(console.store.people)
    reviewers = [p.name for p in people if may(p.role, Action.DECIDE)]
    return _page(
        request,
        "review.html",
        e=evidence,
        reviewers=reviewers,
        money_four_eyes=console.settings.money_four_eyes(evidence["market"]["venue"]),
    )


async def review_json(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _evidence(request))


async def queue_json(request: web.Request) -> web.StreamResponse:
    rows, _, paging = await _queue_rows(request)
    return web.json_response({"reviews": rows, **paging})


async def proof_json(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    try:
        consensus_id = int(request.match_info["consensus_id"])
    except ValueError:
        raise StoreError("the proof id is not a number") from None
    row = await _db(console.store.consensus, consensus_id)
    return web.Response(
        text=json.dumps(row.proof, indent=2, sort_keys=True),
        content_type="application/json",
        headers={"Content-Disposition": f'inline; filename="proof-{row.checksum[:16]}.json"'},
    )


# --- acting on an item ------------------------------------------------------------------


async def _fields(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        try:
            body = await request.json()
        except ValueError:
            raise StoreError("the body is not valid JSON") from None
        if not isinstance(body, dict):
            raise StoreError("the body must be a JSON object")
        return body
    return dict(await request.post())


def _seen(fields: dict[str, Any]) -> Seen:
    raw_id = fields.get("consensus_id")
    checksum = fields.get("checksum") or None
    if raw_id in (None, ""):
        consensus_id = None
    else:
        try:
            consensus_id = int(raw_id)
        except (TypeError, ValueError):
            raise StoreError(f"consensus_id {raw_id!r} is not a number") from None
    if checksum is not None and not isinstance(checksum, str):
        raise StoreError("checksum must be a string")
    return Seen(consensus_id, checksum)


def _done(request: web.Request, review_id: int, result: dict[str, Any]) -> web.StreamResponse:
    if _wants_json(request):
        return web.json_response({"review": review_id, **result})
    raise web.HTTPSeeOther(f"/reviews/{review_id}")


async def decide(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    fields = await _fields(request)
    person: Person = request[PERSON]
    # A value market's decision may be typed (`value`) instead of chosen (`outcome`).
    outcome = str(fields.get("value") or fields.get("outcome") or "").strip()
    reason = str(fields.get("reason", "")).strip()
    if fields.get("confirm") not in ("yes", True):
        raise StoreError("confirm the decision (tick the confirmation box)")
    if not outcome:
        raise StoreError("choose an outcome")
    if not reason:
        raise StoreError("give the reason for the decision")
    before = await _db(console.store.review, review_id)
    if before.claimed_by not in (None, person.name):
        # Someone else said they work on it: deciding over them is a choice, made knowingly.
        if fields.get("override_claim") not in ("yes", True):
            raise ClaimedElsewhere(
                f"review {review_id} is claimed by {before.claimed_by}: confirm that you "
                "decide it instead (tick the box on the page; override_claim in the API)"
            )
        await _db(
            console.store.record,
            person.name,
            "review.claim_overridden",
            f"market:{before.market_id}",
            {"review": review_id, "claimed_by": before.claimed_by},
        )
    market = await _db(
        console.store.decide_review,
        review_id,
        outcome,
        reason,
        person.name,
        seen=_seen(fields),
        money_four_eyes=console.settings.money_four_eyes,
    )
    console.metrics.decisions.labels(person.name).inc()
    item = await _db(console.store.review, review_id)
    if item.status == "needs_approval":
        people = await _db(console.store.people)
        approvers = [
            p.name for p in people if may(p.role, Action.APPROVE) and p.name != person.name
        ]
        await _notify(request, "approval_needed", approvers, review_id, market)
    return _done(request, review_id, {"status": item.status, "market_state": market.state})


async def approve(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    person: Person = request[PERSON]
    decided_by = (await _db(console.store.review, review_id)).decided_by
    market = await _db(console.store.approve_review, review_id, person.name)
    console.metrics.approvals.labels(person.name).inc()
    await _notify(request, "approved", [decided_by] if decided_by else [], review_id, market)
    return _done(request, review_id, {"status": "decided", "market_state": market.state})


async def reopen(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    await _db(console.store.reopen_review, review_id, request[PERSON].name)
    return _done(request, review_id, {"status": "open"})


async def send_back(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    fields = await _fields(request)
    reason = str(fields.get("reason", "")).strip()
    market = await _db(
        console.store.send_back_for_research, review_id, request[PERSON].name, reason
    )
    return _done(request, review_id, {"status": "sent_back", "market_state": market.state})


async def claim(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    name = request[PERSON].name
    await _db(console.store.claim_review, review_id, name, assignee=name)
    return _done(request, review_id, {"claimed_by": name})


async def assign(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    fields = await _fields(request)
    assignee = str(fields.get("assignee", "")).strip()
    if not assignee:
        raise StoreError("choose whom to assign the item to")
    await _db(
        console.store.claim_review,
        review_id,
        request[PERSON].name,
        assignee=assignee,
        reassign=True,
    )
    item = await _db(console.store.review, review_id)
    market = await _db(console.store.get_market, item.market_id)
    if assignee != request[PERSON].name:
        await _notify(request, "assigned", [assignee], review_id, market)
    return _done(request, review_id, {"claimed_by": assignee})


async def comment(request: web.Request) -> web.StreamResponse:
    """A comment on an item: kept in the audit log (hash-chained, like every action) and
    shown on the item's page, escaped."""
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    fields = await _fields(request)
    text = str(fields.get("text", "")).strip()
    if not text:
        raise StoreError("write the comment first")
    if len(text) > MAX_COMMENT_CHARACTERS:
        raise StoreError(f"a comment holds at most {MAX_COMMENT_CHARACTERS} characters")
    item = await _db(console.store.review, review_id)
    await _db(
        console.store.record,
        request[PERSON].name,
        "review.commented",
        f"market:{item.market_id}",
        {"review": review_id, "text": text},
    )
    return _done(request, review_id, {"commented": True})


async def _notify(
    request: web.Request, kind: str, to: list[str], review_id: int, market: Any
) -> None:
    """Tell `to` (per person) about `kind`: recorded after the action committed, sent
    by the notifier without the request waiting for it. A notice that cannot be recorded
    is logged; the action stands."""
    notifier = request.app[CONSOLE].notifier
    if not notifier.enabled or not to:
        return
    notice = notify.body(kind, to, request[PERSON].name, review_id, market.id, market.question)
    try:
        await notifier.record(notice)
    except SQLAlchemyError as error:
        emit(
            _LOG,
            logging.ERROR,
            "console.notify_unrecorded",
            error=type(error).__name__,
            kind=kind,
            review=review_id,
        )


async def unassign(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    review_id = _review_id(request)
    await _db(console.store.claim_review, review_id, request[PERSON].name, assignee=None)
    return _done(request, review_id, {"claimed_by": None})


# --- live updates -----------------------------------------------------------------------


async def queue_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events of what changed in the queue: first `queue` with the counts,
    then, whenever items awaiting a person change (opened, claimed, decided, approved, a
    deadline moved), `changes` with the counts and the ids of the items `changed`,
    `added` and `removed` since the tick before. The page re-fetches only the rows it
    shows that changed (`/queue/rows?ids=`), and offers to reload for new items; each tick
    reads a few columns per item, never the items themselves.

    The stream lasts only as long as what opened it: each tick identifies the request
    again, so a session signed out or ended (the account disabled) or a token revoked
    ends it at the next tick, with a last `signed_out` event."""
    console = request.app[CONSOLE]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"}
    )
    await response.prepare(request)
    last: dict[int, tuple[Any, ...]] | None = None
    quiet = 0.0
    while not console.closing.is_set():
        person, _, _ = await _identify(request)
        if person is None:
            await response.write(b"event: signed_out\ndata: {}\n\n")
            break
        marks: dict[int, tuple[Any, ...]] = await _db(console.store.queue_marks)
        counts = {
            status: sum(1 for mark in marks.values() if mark[0] == status)
            for status in ("open", "needs_approval")
        }
        if last is None:
            last, quiet = marks, 0.0
            await response.write(f"event: queue\ndata: {json.dumps(counts)}\n\n".encode())
        elif marks != last:
            change = {
                "counts": counts,
                "changed": sorted(i for i in marks.keys() & last.keys() if marks[i] != last[i]),
                "added": sorted(marks.keys() - last.keys()),
                "removed": sorted(last.keys() - marks.keys()),
            }
            last, quiet = marks, 0.0
            await response.write(f"event: changes\ndata: {json.dumps(change)}\n\n".encode())
        elif quiet >= 15.0:  # a comment now and then keeps proxies from closing the stream
            quiet = 0.0
            await response.write(b": still here\n\n")
        try:
            await asyncio.wait_for(console.closing.wait(), console.settings.queue_poll_seconds)
        except TimeoutError:
            quiet += console.settings.queue_poll_seconds
    return response


# --- operations -------------------------------------------------------------------------


async def healthz(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    try:
        await _db(console.store.reviews, "open")
    except Exception as error:  # any database failure: unhealthy, said briefly
        return web.json_response({"status": "unhealthy", "error": type(error).__name__}, status=503)
    return web.json_response({"status": "ok"})


async def metrics(request: web.Request) -> web.StreamResponse:
    console = request.app[CONSOLE]
    rows = await _db(console.store.review_queue, ["open", "needs_approval"])
    now = console.store.clock()
    open_items = [item for item, _ in rows if item.status == "open"]
    oldest = min((item.created_at for item in open_items), default=now)
    console.metrics.oldest_open_review_age.set(max(now - oldest, 0.0))
    for status in ("open", "needs_approval"):
        console.metrics.open_reviews.labels(status).set(
            sum(1 for item, _ in rows if item.status == status)
        )
    # What the database holds now: a count lower than an earlier scrape's is a cut tail.
    console.metrics.publish_audit_head(await _db(console.store.audit_head), read=True)
    pending, _ = await _db(console.store.pending_notices)
    console.metrics.pending_notifications.set(pending)
    body = generate_latest(console.metrics.registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


# Every route the console serves, with the action a person's role must allow (None: open
# to anyone: sign-in, health, metrics, the stylesheet). tests/console checks each one.
ROUTES: tuple[tuple[str, str, Handler, Action | None], ...] = (
    ("GET", "/login", login_form, None),
    ("POST", "/login", login, None),
    ("GET", "/healthz", healthz, None),
    ("GET", "/metrics", metrics, None),
    ("POST", "/logout", logout, Action.VIEW),
    ("GET", "/", queue, Action.VIEW),
    ("GET", "/approvals", approvals, Action.APPROVE),
    ("GET", "/events/queue", queue_events, Action.VIEW),
    ("GET", "/queue/rows", queue_rows_fragment, Action.VIEW),
    ("GET", "/reviews/{review_id}", review_page, Action.VIEW),
    ("GET", "/proofs/{consensus_id}.json", proof_json, Action.VIEW),
    ("POST", "/reviews/{review_id}/decide", decide, Action.DECIDE),
    ("POST", "/reviews/{review_id}/approve", approve, Action.APPROVE),
    ("POST", "/reviews/{review_id}/reopen", reopen, Action.DECIDE),
    ("POST", "/reviews/{review_id}/send-back", send_back, Action.DECIDE),
    ("POST", "/reviews/{review_id}/claim", claim, Action.DECIDE),
    ("POST", "/reviews/{review_id}/unassign", unassign, Action.DECIDE),
    ("POST", "/reviews/{review_id}/assign", assign, Action.APPROVE),
    ("POST", "/reviews/{review_id}/comment", comment, Action.DECIDE),
    ("GET", "/api/reviews", queue_json, Action.VIEW),
    ("GET", "/api/reviews/{review_id}", review_json, Action.VIEW),
    ("POST", "/api/reviews/{review_id}/decide", decide, Action.DECIDE),
    ("POST", "/api/reviews/{review_id}/approve", approve, Action.APPROVE),
    ("POST", "/api/reviews/{review_id}/reopen", reopen, Action.DECIDE),
    ("POST", "/api/reviews/{review_id}/send-back", send_back, Action.DECIDE),
    ("POST", "/api/reviews/{review_id}/comment", comment, Action.DECIDE),
)


@web.middleware
async def _headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as error:
        response = error
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers.setdefault("Cache-Control", "no-store")
    if isinstance(response, web.HTTPException):
        raise response
    return response


def make_app(
    store: Store, settings: ConsoleSettings, tokens: Tokens | None = None
) -> web.Application:
    """The console over `store`; its metrics are on `app[CONSOLE].metrics.registry`.
    `tokens`: the whole configuration's (`Settings.token_table`, with each chain's native
    token); without, the console section's alone."""
    app = web.Application(middlewares=[_headers], client_max_size=256 * 1024)
    tokens = settings.token_table() if tokens is None else tokens
    metrics = ConsoleMetrics()
    notifier = notify.Notifier(store, settings, metrics)
    app[CONSOLE] = Console(store, settings, tokens, metrics, templates(), asyncio.Event(), notifier)

    async def end_streams(app: web.Application) -> None:
        app[CONSOLE].closing.set()

    publish = app[CONSOLE].metrics.publish_audit_head

    async def anchor_audit_log(app: web.Application) -> None:
        # The head as the console finds it, then after each entry it appends.
        head = await _db(store.audit_head)
        publish(head, read=True)
        emit(
            _LOG, logging.INFO, "console.audit_head", entries=head.entries, head_hash=head.head_hash
        )
        store.audit_head_listeners.append(publish)

    async def stop_anchoring(app: web.Application) -> None:
        if publish in store.audit_head_listeners:
            store.audit_head_listeners.remove(publish)

    async def start_notifier(app: web.Application) -> None:
        # Also sends what an earlier run left pending.
        if notifier.enabled:
            task = asyncio.get_running_loop().create_task(notifier.run(app[CONSOLE].closing))
            app[CONSOLE].background.add(task)
            task.add_done_callback(app[CONSOLE].background.discard)

    async def stop_notifier(app: web.Application) -> None:
        # The POST under way may finish (and be marked sent, or failed); one cut short
        # stays pending and is tried again once its hold has passed (oracle.console.notify).
        app[CONSOLE].closing.set()
        running = set(app[CONSOLE].background)
        if running:
            _, unfinished = await asyncio.wait(
                running, timeout=settings.notify_timeout_seconds + 1.0
            )
            for task in unfinished:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    app.on_startup.append(anchor_audit_log)
    app.on_startup.append(start_notifier)
    app.on_shutdown.append(end_streams)
    app.on_cleanup.append(stop_anchoring)
    app.on_cleanup.append(stop_notifier)
    for method, path, handler, action in ROUTES:
        app.router.add_route(method, path, handler if action is None else _guard(action, handler))
    app.router.add_static("/static/", _static_dir(), append_version=True)
    return app


def _static_dir() -> str:
    return str(files("oracle.console") / "static")
