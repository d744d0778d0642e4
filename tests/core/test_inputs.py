"""`oracle consensus` reads its input with `read_consensus_input` (sources as fields, checked
column by column) and evaluates that; the daemon evaluates the models
`parse_consensus_input` builds. Both must give the same verdict and the same proof, byte for
byte, or the same error, for any document: valid, slightly wrong, or hostile."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from oracle.cli.consensus import run_consensus
from oracle.core import (
    ConsensusParams,
    SourceThresholds,
    build_proof,
    evaluate,
    inputs,
    parse_consensus_input,
    verify_proof,
)
from oracle.errors import InputError, ProofError
from oracle.testing import consensus_document, result_dict, source_dicts

LENIENT = SourceThresholds(min_total=1, min_categories=1, min_official=0, min_news=0)

# Mostly values a valid source holds, with a sprinkling of each way one can be wrong or
# unusual: URLs the parser must read (case, ports, dot segments, tracking, IDNA, a lone
# surrogate), categories to lower-case or blank, scores at and beyond the bounds or as text,
# dates in every spelling, and fields of the wrong type.
_plain_urls = st.builds(
    lambda host, page: f"https://{host}.example/{page}",
    st.sampled_from(["news", "official", "data", "academic", "reference"]),
    st.integers(0, 12),
)
_odd_urls = st.sampled_from(
    [
        "https://news.example/1/",
        "HTTPS://News.Example/1",
        "https://news.example/1?utm_source=x",
        "https://news.example/./1",
        "https://news.example",
        "https://news.example:443/1",
        "https://user:pw@news.example/1",
        "https://Bücher.example/a",
        "http://0x7f.1/",
        "https://a.example/b\n",
        "https://a.example/\ud800",
        "ftp://news.example/1",
        "not a url",
        "",
        "https://" + "a" * 16_400 + ".example/",
    ]
)
_categories = st.sampled_from(["news", "official", "data", "academic", "reference"])
_odd_categories = st.sampled_from(["News", " news ", "", "  ", "ACADEMIC", "\x1fnews", "İ", "ΣΑΣ"])
_scores = st.sampled_from([0.0, 0.5, 0.7, 0.8, 0.9, 1.0])
_odd_scores = st.sampled_from(
    [-0.0, 1e-7, 5e-324, 0.1234567, 1, 0, True, "0.5", 1.5, -0.1, None, math.nan, math.inf]
)
_dates = st.sampled_from([None, "2024-01-01T00:00:00Z", "2024-01-01T12:00:00+02:00"])
_odd_dates = st.sampled_from(["2024-01-01", "garbage", 1_700_000_000, "2024-02-30T00:00:00"])
_odd_values = st.sampled_from([None, 5, "x", [], {}])


_plain_sources = st.fixed_dictionaries(
    {
        "url": _plain_urls,
        "category": _categories,
        "credibility_score": _scores,
        "relevance_score": _scores,
    },
    optional={
        "title": st.sampled_from(["", "t", "\U0001f600", 'a"b\\c']),
        "published_at": _dates,
        "quote": st.sampled_from(["", "q"]),
        "read": st.sampled_from([True, True, False]),
        "extra": st.just({"a": [1, 2]}),
    },
)
# What a mutation may put in a source's field (or in place of the source).
_odd_by_field: dict[str, st.SearchStrategy[Any]] = {
    "url": _odd_urls | _odd_values,
    "category": _odd_categories | _odd_values,
    "credibility_score": _odd_scores | _odd_values,
    "relevance_score": _odd_scores | _odd_values,
    "title": _odd_values,
    "published_at": _odd_dates | _odd_values,
    "quote": st.just("x" * 2001) | _odd_values,
    "read": _odd_values,
}

# What a field may hold that is valid yet not as the quick reading takes it as it is.
_unusual_by_field: dict[str, st.SearchStrategy[Any]] = {
    "url": st.sampled_from(
        [
            "https://news.example/1/",
            "HTTPS://News.Example/1",
            "https://news.example/./1",
            "https://news.example",
            "https://user:pw@news.example/1",
            "http://0x7f.1/",
        ]
    ),
    "category": st.sampled_from(["News", " news ", "news\n", "ACADEMIC", "İ", "ΣΑΣ", "a b"]),
    "credibility_score": st.sampled_from([-0.0, 1e-7, 5e-324, 1, 0, True, "0.5"]),
    "published_at": st.sampled_from(["2024-01-01", 1_700_000_000]),
    "read": st.sampled_from([1, 0, "yes", "no"]),
}


@st.composite
def _documents(draw: st.DrawFn) -> Any:
    """A valid document, then a few changes (often none) that may make it invalid or odd."""
    results = [
        {
            "agent_id": f"agent-{index}",
            "outcome": draw(st.sampled_from(["YES", "YES", "NO", "UNDETERMINED"])),
            "confidence": draw(_scores),
            "reasoning": "because",
            "sources": draw(st.lists(_plain_sources, max_size=12)),
            **draw(
                st.fixed_dictionaries({}, optional={"model_family": st.sampled_from(["f", "g"])})
            ),
        }
        for index in range(draw(st.integers(1, 6)))
    ]
    document: Any = {"market": {"id": "m", "question": "Q?"}, "results": results}
    if draw(st.booleans()):
        document["failures"] = [{"agent_id": "failed", "error": "timeout"}]
    for _ in range(draw(st.integers(0, 3))):
        result = draw(st.sampled_from(results))
        kind = draw(
            st.sampled_from(["unusual", "unusual", "source field", "source", "result", "document"])
        )
        sources = result.get("sources")
        dicts = [s for s in sources if isinstance(s, dict)] if isinstance(sources, list) else []
        if kind == "source field" and dicts:
            source = draw(st.sampled_from(dicts))
            field = draw(st.sampled_from(sorted(_odd_by_field)))
            if draw(st.booleans()):
                source[field] = draw(_odd_by_field[field])
            else:
                source.pop(field, None)
        elif kind == "unusual" and dicts:
            field = draw(st.sampled_from(sorted(_unusual_by_field)))
            for source in dicts[: draw(st.integers(1, len(dicts)))]:
                source[field] = draw(_unusual_by_field[field])
        elif kind == "source" and isinstance(sources, list) and sources:
            sources[0] = draw(_odd_values)
        elif kind == "result":
            field = draw(st.sampled_from(["agent_id", "outcome", "confidence", "sources"]))
            result[field] = draw(
                st.sampled_from(["", "dup", "MAYBE", "agent-0", 1.5, ("tuple",)]) | _odd_values
            )
        elif kind == "document":
            document = draw(st.sampled_from([[], "x", {"market": {}}, {**document, "market": {}}]))
            break
    return document


# The errors either reading may raise: the input refused, or a proof it cannot hold (a
# title with a lone surrogate: pydantic-core keeps it, RFC 8785 refuses it).
_REFUSALS = (InputError, ProofError)


def _by_models(document: Any, thresholds: SourceThresholds) -> Any:
    try:
        consensus_input = parse_consensus_input(document)
        params = ConsensusParams()
        result = evaluate(consensus_input, params, thresholds)
        return result, build_proof(consensus_input, result, params, thresholds)
    except _REFUSALS as error:
        return f"{type(error).__name__}: {error}"


def _as_the_command_reads_it(document: Any, thresholds: SourceThresholds) -> Any:
    try:
        return run_consensus(document, ConsensusParams(), thresholds)
    except _REFUSALS as error:
        return f"{type(error).__name__}: {error}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents(), st.sampled_from([LENIENT, SourceThresholds()]))
@example(
    consensus_document(
        [result_dict(f"agent-{i}", "YES", 0.8, 60, shared=source_dicts("s", 30)) for i in range(4)]
    ),
    SourceThresholds(),
)
@example(  # valid, yet not plainly: read by the models
    consensus_document(
        [
            result_dict("a", "YES", 0.8, 3)
            | {"sources": [{**s, "category": " News "} for s in source_dicts("a", 3)]},
            result_dict("b", "YES", 0.9, 3)
            | {
                "sources": [
                    {**s, "url": s["url"].upper(), "read": "yes", "credibility_score": "1"}
                    for s in source_dicts("a", 3)
                ]
            },
        ]
    ),
    LENIENT,
)
def test_the_command_reads_every_document_as_the_models_do(
    document: Any, thresholds: SourceThresholds
) -> None:
    _assert_read_alike(document, thresholds)


def _assert_read_alike(document: Any, thresholds: SourceThresholds) -> None:
    expected = _by_models(document, thresholds)
    got = _as_the_command_reads_it(document, thresholds)
    if isinstance(expected, str):
        assert got == expected
        return
    assert not isinstance(got, str)
    assert got[0] == expected[0]
    # The proof as written: its bytes, key order included, and its checksum recomputed
    # the slow way (the whole proof through the RFC 8785 encoder).
    assert json.dumps(got[1]) == json.dumps(expected[1])
    assert verify_proof(got[1]) == (True, got[1]["checksum"])


def _with_sources(change: Any, count: int = 6) -> Any:
    """Two agents citing the same `count` sources, each source as `change(index, source)`
    gives it (a new dict)."""
    sources = [change(index, dict(s)) for index, s in enumerate(source_dicts("s", count))]
    return consensus_document(
        [result_dict(agent, "YES", 0.8, 0) | {"sources": sources} for agent in ("a", "b")]
    )


def _set(**fields: Any) -> Any:
    return lambda index, source: source | fields


def _on_some(**fields: Any) -> Any:  # every other source only
    return lambda index, source: source | fields if index % 2 else source


# Each way the column reading can meet a source: kept as it is, converted, or refused.
_EDGES = {
    "unknown keys": _set(extra={"a": [1]}, notes="x"),
    "int scores": _set(credibility_score=1, relevance_score=0),
    "int and float scores": lambda i, s: s | {"credibility_score": [1, 1.0, True, 0][i % 4]},
    "bool scores": _set(credibility_score=True, relevance_score=False),
    "a text score": _set(relevance_score="0.5"),
    "an int score beyond": _on_some(credibility_score=2),
    "NaN": _on_some(credibility_score=math.nan),
    "negative zero": _set(credibility_score=-0.0),
    "dates as text": lambda i, s: s | {"published_at": f"2024-01-0{1 + i % 3}T00:00:00Z"},
    "dates in some": _on_some(published_at="2024-01-01T12:00:00+02:00"),
    "dates and None": lambda i, s: s | {"published_at": [None, "2024-01-01"][i % 2]},
    "a date as a number": _on_some(published_at=1_700_000_000),
    "a bad date": _on_some(published_at="2024-02-30T00:00:00Z"),
    "read in some": _on_some(read=False),
    "read as an int": _set(read=1),
    "read as None": _on_some(read=None),
    "title in some": lambda i, s: s if i % 2 else {k: v for k, v in s.items() if k != "title"},
    "title None": _on_some(title=None),
    "quote at the limit": _set(quote="q" * 2000),
    "quote beyond": _on_some(quote="q" * 2001),
    "quote not text": _on_some(quote=5),
    "category missing": lambda i, s: {k: v for k, v in s.items() if k != "category"},
    "category to lower-case": _on_some(category="News"),
    "surrogate in a title": _on_some(title="t\ud800"),
    "surrogate in a quote": _on_some(quote="q\ud800"),
    "surrogate in a category": _on_some(category="news\udfff"),
    "surrogate in a URL": lambda i, s: s | {"url": s["url"] + "\ud800"},
    "an empty URL": _on_some(url=""),
    "a list for a score": _on_some(credibility_score=[0.5]),
    # URL and category types are read from their distinct values.
    "a list for a URL": _on_some(url=["https://a.example/"]),
    "a number for a URL": _on_some(url=1),
    "None for a category": _on_some(category=None),
    "a dict for a category": _on_some(category={"news": 1}),
    "a number for a category": lambda i, s: s | {"category": [1, "news", 1.0, True][i % 4]},
    "a source not a dict": lambda i, s: [s] if i == 3 else s,
}


@pytest.mark.parametrize("edge", sorted(_EDGES))
def test_the_command_reads_each_edge_as_the_models_do(edge: str) -> None:
    _assert_read_alike(_with_sources(_EDGES[edge]), LENIENT)


def test_a_plain_document_is_read_without_building_a_source_model() -> None:
    """The quick reading applies to ordinary input (else it is only the slow one renamed),
    and keeps the document's own sources: nothing is copied."""
    document = consensus_document([result_dict(f"agent-{i}", "YES", 0.8) for i in range(3)])
    read = inputs._quick_read(document)
    assert read is not None
    assert all(r.sources == () for r in read["answers"].results)
    assert all(read["sources"][r["agent_id"]] is r["sources"] for r in document["results"])
    assert read["normalized"] is None  # every URL already in its normal form


def test_only_sources_with_a_value_to_convert_are_copied() -> None:
    document = _with_sources(_on_some(published_at="2024-01-01T00:00:00Z", credibility_score=1))
    given = json.dumps(document)
    read = inputs._quick_read(document)
    assert read is not None
    sources, cited = read["sources"]["a"], document["results"][0]["sources"]
    assert [s is c for s, c in zip(sources, cited, strict=True)] == [True, False] * 3
    assert sources[1]["published_at"] == datetime(2024, 1, 1, tzinfo=UTC)
    assert type(sources[1]["credibility_score"]) is float
    assert json.dumps(document) == given  # the document as it was
