"""The secret scrubber: which secrets the settings hold, their forms, every logger's
records, the JSON log lines, the HTTP clients' loggers quiet at INFO, the HTTP helper's
quoted body, and a proof sealed again once scrubbed."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle import scrub
from oracle.agents.http import request_json
from oracle.config import Settings
from oracle.core.proof import build_proof, reseal, verify_proof
from oracle.errors import ToolError
from oracle.log import JsonFormatter, configure_logging
from oracle.scrub import REDACTED, Scrubber, secrets_in_url, settings_secrets
from oracle.testing import consensus_document


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def test_the_credentials_a_url_carries() -> None:
    assert secrets_in_url("https://postgres:hunter2-pass@db.example/x?api_key=K123&page=2") == [
        "hunter2-pass",
        "K123",
    ]
    infura = "https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161"
    assert secrets_in_url(infura, key_segments=True) == ["9aa3d95b3bc440fa88ea12eaa4456161"]
    assert secrets_in_url(infura) == []  # only a URL that is itself a secret
    assert (
        secrets_in_url("https://example.org/news/2024/the-long-article-title", key_segments=True)
        == []
    )
    assert secrets_in_url("https://x.example/?token=abc&ref=debate") == ["abc"]


def test_every_secret_in_the_settings_is_found() -> None:
    rpc_key, db_password, header, signer = (unique(p) for p in ("rpc", "db", "hdr", "key"))
    settings = Settings.model_validate(
        {
            "database": {"url": f"postgresql://oracle:{db_password}@db.example/oracle"},
            "chain": {
                "rpc": {"urls": [f"https://eth.example/v2/{rpc_key}"]},
                "signer": {"type": "dev_private_key", "dev_private_key": signer},
            },
            "market_sources": [
                {
                    "name": "v",
                    "kind": "http",
                    "url": "https://venue.example/markets",
                    "result_url": "https://venue.example/results",
                    "headers": {"Authorization": f"Bearer {header}"},
                }
            ],
        }
    )
    found = set(settings_secrets(settings))
    assert {rpc_key, db_password, header, f"Bearer {header}", signer} <= found
    # An RPC URL is secret for the key it carries, not for its host and port.
    assert not any(s.startswith("https://eth.example") for s in found)
    assert "postgresql" not in " ".join(found)
    assert "oracle" not in found  # a user name is no secret


def test_a_secret_is_scrubbed_in_every_form_it_travels_in() -> None:
    scrubber = Scrubber()
    secret = 'k3y/with "quotes"&plus+'
    scrubber.add(secret, "short", None)
    for form in (secret, quote(secret, safe=""), json.dumps(secret)[1:-1]):
        assert scrubber.text(f"before {form} after") == f"before {REDACTED} after"
    assert scrubber.text("short words stay") == "short words stay"  # too short to register
    assert scrubber.value({"a": [secret, (1, secret)]}) == {"a": [REDACTED, (1, REDACTED)]}


@pytest.fixture
def secret() -> str:
    value = unique("sk-scrub")
    scrub.add(value)
    return value


# Secrets JSON escapes (quotes, a backslash, a tab, non-ASCII, beyond the BMP), and a
# plain one that is a prefix of another.
_SECRETS = (
    'k3y/with "quotes"&plus+',
    "back\\slash\ttab-key",
    "ключ-секрет-42",
    "\U0001f511-emoji-key",
    "sk-plain-123456",
    "sk-plain-123456-longer",
)
_FORMS = tuple(f for s in _SECRETS for f in (s, quote(s, safe=""), json.dumps(s)[1:-1]))
_FRAGMENTS = st.one_of(
    st.text(max_size=4),
    st.sampled_from(_FORMS),
    st.sampled_from(_FORMS).map(lambda f: f[: len(f) // 2]),
    st.sampled_from(_FORMS).map(lambda f: f[len(f) // 2 :]),
    st.sampled_from(['"', "\\", "\n", "\x00", "\udc80", "é"]),
)
_STRINGS = st.lists(_FRAGMENTS, max_size=4).map("".join)
_LEAVES = st.one_of(
    _STRINGS,
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.binary(max_size=8),
    st.frozensets(_STRINGS, max_size=2),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(_STRINGS, st.integers(), st.tuples(_STRINGS)), inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=400)
@given(_VALUES)
def test_the_json_shortcut_scrubs_what_the_walk_scrubs(value: object) -> None:
    """`Scrubber.value` skips the walk when the value's JSON text shows no secret: what it
    returns is what the walk returns, whatever strings, keys and nesting the value has."""
    scrubber = Scrubber()
    scrubber.add(*_SECRETS)
    assert scrubber.value(value) == scrubber._walked(value)


def test_every_loggers_records_are_scrubbed(secret: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    third_party = logging.getLogger("urllib3.connectionpool")
    third_party.debug("GET /x?key=%s", secret)
    logging.getLogger("aiohttp.access").info("line", extra={"first_request_line": secret})
    try:
        raise ValueError(f"the server said {secret}")
    except ValueError:
        logging.getLogger("oracle.anything").exception("failed")
    logging.getLogger("oracle.x").info("event", extra={"event": "e", "fields": {"k": secret}})
    assert caplog.records
    for record in caplog.records:
        assert secret not in record.getMessage()
        assert secret not in str(vars(record))
        assert secret not in JsonFormatter().format(record)
    assert secret not in caplog.text
    assert f"GET /x?key={REDACTED}" in caplog.text


def test_the_http_clients_loggers_are_quiet_at_info(secret: str) -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        configure_logging("INFO", "json")
        stream = io.StringIO()
        root.handlers[0].setStream(stream)  # type: ignore[attr-defined]
        for name in ("httpx", "httpx2", "aiohttp.client", "openai", "urllib3"):
            assert logging.getLogger(name).getEffectiveLevel() >= logging.WARNING, name
            logging.getLogger(name).info("HTTP Request: POST https://m.example/?key=%s", secret)
        logging.getLogger("web3.providers").warning("Location: /v1?key=%s", secret)
        written = stream.getvalue()
        assert "HTTP Request" not in written
        assert "Location" in written
        assert secret not in written
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def test_a_body_quoted_in_a_tool_error_has_no_secret(secret: str) -> None:
    async def echo(_: web.Request) -> web.Response:
        return web.Response(text=f"Unauthorized: {secret}", content_type="text/plain")

    async def main() -> str:
        app = web.Application()
        app.router.add_get("/", echo)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        import aiohttp  # noqa: PLC0415

        try:
            async with aiohttp.ClientSession() as session:
                await request_json(session, "provider", "GET", f"http://127.0.0.1:{port}/")
        except ToolError as error:
            return str(error)
        finally:
            await runner.cleanup()
        return ""

    message = asyncio.run(main())
    assert message.startswith("provider: the answer is not usable JSON")
    assert f"it begins: Unauthorized: {REDACTED}" in message
    assert secret not in message


def test_a_scrubbed_proof_is_sealed_again() -> None:
    from oracle.core import ConsensusParams, SourceThresholds, evaluate  # noqa: PLC0415
    from oracle.core.models import ConsensusInput  # noqa: PLC0415
    from oracle.testing import result_dict  # noqa: PLC0415

    document = consensus_document(
        [result_dict(a, "YES", 0.9, reasoning="the key was sk-xyz") for a in ("a", "b", "c")]
    )
    consensus_input = ConsensusInput.model_validate(document)
    params, thresholds = ConsensusParams(min_model_families=1), SourceThresholds()
    proof = build_proof(
        consensus_input, evaluate(consensus_input, params, thresholds), params, thresholds
    )
    changed = json.loads(json.dumps(proof).replace("sk-xyz", REDACTED))
    assert not verify_proof(changed)[0]
    sealed = reseal(changed)
    assert verify_proof(sealed)[0]
    assert sealed["checksum"] != proof["checksum"]


def test_no_row_is_written_with_a_secret(secret: str, tmp_path: Path) -> None:
    from sqlalchemy import text as sql  # noqa: PLC0415

    from oracle.store.engine import make_engine  # noqa: PLC0415

    engine = make_engine(f"sqlite:///{tmp_path / 'rows.db'}")
    try:
        with engine.begin() as connection:
            connection.execute(sql("CREATE TABLE note (body TEXT)"))
            connection.execute(sql("INSERT INTO note VALUES (:b)"), {"b": f"said {secret}"})
            connection.execute(sql("INSERT INTO note VALUES (:b)"), [{"b": secret}, {"b": "x"}])
            rows = connection.execute(sql("SELECT body FROM note")).scalars().all()
    finally:
        engine.dispose()
    assert rows == [f"said {REDACTED}", REDACTED, "x"]
    assert secret.encode() not in (tmp_path / "rows.db").read_bytes()
