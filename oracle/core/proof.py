"""Consensus proofs: a self-contained record of a verdict that anyone can re-check.

A proof holds the market, the verdict, every vote (with weight, source count and, for
excluded agents, why), the dissent with its reasoning, tensions, blind spots, the
source overlap, the merged sources and the effective configuration.

Checksum (the full definition, for third-party verifiers, is in docs/consensus.md):

- Version 2 (written since): SHA-256 over the RFC 8785 (JSON Canonicalization Scheme)
  serialization of the proof without `checksum` and `proof_id`, hashed as written (floats
  are rounded to 6 decimals when the proof is built, never when it is checked). Any
  language with an RFC 8785 implementation can check it; `verifier/verify-proof.mjs` does,
  with Node's standard library only. Every value must be representable in RFC 8785: finite
  numbers, integers within +-(2**53 - 1), strings of Unicode scalar values; anything
  else is refused with the path of the field. No proof field holds a quantity beyond that
  range; one that ever must (a wei amount) is to be a decimal string.
- Version 1 (older files, still verified): SHA-256 over Python's
  `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)` of the same
  fields with every float rounded to 6 decimals: Python's own float rendering, which
  other languages do not reproduce.

`proof_id` is `proof-` + the first 16 hex digits of the checksum. The hex digest is what
the daemon commits on-chain: the proof hash is its first 20 bytes (`bytes20`), whatever
the version (`oracle.chain.contracts.proof_hash`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import orjson
import rfc8785

from oracle.core import canonical
from oracle.core.text import markdown_inline, visible
from oracle.errors import ProofError

if TYPE_CHECKING:
    # Annotations only: `oracle proof verify` checks a document without building the
    # core's models.
    from pydantic import TypeAdapter

    from oracle.core.models import (
        AgentResult,
        ConsensusInput,
        ConsensusResult,
        Dissent,
        MergedSource,
        SourceOverlap,
        Vote,
    )
    from oracle.core.params import ConsensusParams, SourceThresholds

PROOF_VERSION = 2
# RFC 8785 numbers are IEEE 754 doubles: integers beyond this lose their value.
MAX_SAFE_INTEGER = 2**53 - 1
_FLOAT_DECIMALS = 6
_DERIVED_FIELDS = ("checksum", "proof_id")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What every proof has, consensus or decision: (field, type, the type as errors name it).
_REQUIRED_FIELDS: tuple[tuple[str, type, str], ...] = (
    ("checksum", str, "a string"),
    ("proof_id", str, "a string"),
    ("version", int, "an integer"),
    ("market", dict, "an object"),
)


# Values `_canonical_values` returns as they are: most of a proof's leaves, told apart by
# their exact type before any isinstance check (a float's subclass is still rounded below).
_KEPT_AS_THEY_ARE = frozenset({str, int, bool, type(None)})


# The floats of a part of a proof, by the name of the object member each is the value of
# (a zero standing for both signs).
Numbers = dict[str, Collection[float]]


def _canonical_values(value: Any, floats: list[float] | None = None) -> Any:
    """`value` with its floats rounded to 6 decimals, tuples as lists and keys as text;
    each float (rounded) appended to `floats` when given."""
    kind = type(value)
    if kind in _KEPT_AS_THEY_ARE:
        return value
    if kind is dict:
        return {
            k if type(k) is str else str(k): v
            if type(v) in _KEPT_AS_THEY_ARE
            else _canonical_values(v, floats)
            for k, v in value.items()
        }
    if kind is list or kind is tuple:
        return [v if type(v) in _KEPT_AS_THEY_ARE else _canonical_values(v, floats) for v in value]
    if isinstance(value, float):
        rounded = round(value, _FLOAT_DECIMALS)
        if floats is not None:
            floats.append(rounded)
        return rounded
    if isinstance(value, dict):
        return {str(k): _canonical_values(v, floats) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical_values(v, floats) for v in value]
    return value


def round_like_a_proof(value: Any) -> Any:
    """`value` with every float rounded as a proof's are (to 6 decimals), for figures shown
    beside a proof: `0.8999999999999998` is shown as the proof holds it, `0.9`."""
    return _canonical_values(value)


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if _PLAIN_KEY.fullmatch(key) else f"{path}[{json.dumps(key)}]"


def _unrepresentable(value: Any, *, integer_limit: bool = True) -> str | None:
    """Why `value` (or what it holds) has no RFC 8785 form, naming the field path; or None.

    Without `integer_limit`, integers of any size pass (version 1 had no limit)."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, where = stack.pop()
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, int):
            if integer_limit and abs(item) > MAX_SAFE_INTEGER:
                return f"{where}: integer {item} is beyond +-(2**53 - 1), which JSON numbers hold"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{where}: {item} is not a JSON number (no NaN or infinity)"
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return f"{where}: the string holds a lone surrogate (not Unicode text)"
        elif isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{where}: object key {key!r} is not a string"
                key_path = _child(where, key)
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:
                    return f"{key_path}: the key holds a lone surrogate (not Unicode text)"
                stack.append((child, key_path))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
        else:
            return f"{where}: {type(item).__name__} is not a JSON value"
    return None


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 serialization of `value`; ProofError naming the field it cannot hold."""
    problem = _unrepresentable(value)
    if problem is not None:
        raise ProofError(f"not representable in RFC 8785 JSON: {problem}")
    return _canonical_bytes(value)


def _canonical_bytes(value: Any) -> bytes:
    """`canonical_bytes` of a value with no NaN or infinity in it (the fast encoder writes
    them as null); anything else it cannot hold is refused naming the field."""
    try:
        return canonical.canonical_bytes(value)
    except (rfc8785.CanonicalizationError, ValueError, TypeError, AttributeError):
        problem = _unrepresentable(value)
        if problem is None:  # pragma: no cover - _unrepresentable names all it refuses
            raise
        raise ProofError(f"not representable in RFC 8785 JSON: {problem}") from None


def _digest_v1(canonical_body: dict[str, Any]) -> str:
    problem = _unrepresentable(canonical_body, integer_limit=False)
    if problem is not None:
        raise ProofError(f"not a proof: {problem}")
    text = json.dumps(
        canonical_body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _digest_v2(body: dict[str, Any]) -> str:
    """The checksum of `body`."""
    return hashlib.sha256(canonical_bytes(body)).hexdigest()


def _body(proof: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in proof.items() if k not in _DERIVED_FIELDS}


def compute_checksum(proof: dict[str, Any]) -> str:
    """The checksum of a proof document as read back, whatever its key order or spacing,
    under the rule of its `version` (ProofError for a version this oracle does not read)."""
    version = proof.get("version")
    if type(version) is int and version == 1:
        return _digest_v1(_canonical_values(_body(proof)))
    if type(version) is int and version == 2:
        try:
            return _digest_v2(_body(proof))
        except ProofError as error:
            raise ProofError(f"not a proof: {error}") from None
    raise ProofError(
        f"proof version {version!r} is not supported (this oracle reads versions 1 and 2)"
    )


def _sealed(body: dict[str, Any]) -> dict[str, Any]:
    """`body` (a version 2 proof without its derived fields) with checksum and proof_id."""
    checksum = _digest_v2(body)
    return {"proof_id": f"proof-{checksum[:16]}", **body, "checksum": checksum}


def build_proof(
    consensus_input: ConsensusInput,
    result: ConsensusResult,
    params: ConsensusParams,
    thresholds: SourceThresholds,
    *,
    debate: dict[str, Any] | None = None,
    majority: dict[str, Any] | None = None,
    timing: dict[str, Any] | None = None,
    hidden_characters: int = 0,
) -> dict[str, Any]:
    """The proof document for `result`, as JSON-ready data with its checksum;
    `hidden_characters`: how many invisible characters were removed from the market's text
    where it entered the daemon (`oracle.core.text`; in the market only when some were);
    `debate`:
    the record of the debate that led to `consensus_input` (`oracle.daemon.debate`);
    `majority`: the weighted plurality proposed for a conflict (`majority_record`);
    `timing`: how the market's answer window bore on the verdict
    (`oracle.core.decision.timing_record`).

    Each part is what `model_dump(mode="json")` of its model gives, floats rounded: the
    result's parts built from its fields (dumping then walking them cost a third of a small
    proof; `tests/core/test_proof.py` holds them equal), the market and the extras dumped
    and walked, the configuration kept from the proof before (`_config_record`)."""
    # The floats of the parts built from the models, by the name of the member each is the
    # value of (telling which parts orjson writes as RFC 8785 does as they are); those of
    # the market and the extras. All are checked for NaN and infinities below.
    numbers: dict[str, Numbers] = {}
    verdict, numbers["verdict"] = _verdict_record(result)
    votes, numbers["votes"] = _vote_records(result.votes, consensus_input.results)
    dissent, numbers["dissent"] = _dissent_records(result.dissent)
    overlap, numbers["overlap"] = _overlap_record(result.overlap)
    records, numbers["sources"] = _source_records(result.sources)
    floats: dict[str, list[float]] = {"market": []}
    market = consensus_input.market
    body: dict[str, Any] = {
        "version": PROOF_VERSION,
        # A market's window, research time and INVALID policy appear when it has them
        # (proofs before them keep their checksums).
        "market": _canonical_values(
            market.model_dump(
                mode="json",
                exclude={
                    k for k in ("window", "now", "invalid", "values") if getattr(market, k) is None
                },
            )
            | ({"hidden_characters": hidden_characters} if hidden_characters else {}),
            floats["market"],
        ),
        "verdict": verdict,
        "votes": votes,
        "excluded": [{"agent_id": e.agent_id, "reasons": list(e.reasons)} for e in result.excluded],
        "failures": [{"agent_id": f.agent_id, "error": f.error} for f in result.failures],
        "dissent": dissent,
        "tensions": [
            {
                "description": t.description,
                "agents_involved": list(t.agents_involved),
                "options": list(t.options),
                "impact": t.impact,
                "suggested_followup": t.suggested_followup,
            }
            for t in result.tensions
        ],
        "blind_spots": list(result.blind_spots),
        "overlap": overlap,
        "sources": records,
        "config": None,  # below
    }
    for name, extra in (("debate", debate), ("majority", majority), ("timing", timing)):
        if extra is not None:
            floats[name] = []
            body[name] = _canonical_values(extra, floats[name])
    body["config"], config_written = _config_record(params, thresholds)
    # NaN or an infinity makes a sum one (so does an overflow, which then takes the full
    # check, as does a configuration RFC 8785 cannot hold): the full check names the field.
    named = [number for part in numbers.values() for held in part.values() for number in held]
    if not math.isfinite(sum(named) + sum(map(sum, floats.values()))) or config_written is None:
        return _sealed(body)
    # Written part by part: the parts built from the models as they are, unless orjson
    # writes one of their floats otherwise than RFC 8785 (then mended where their names
    # are); the others (whose keys might sort otherwise, whose floats might be anywhere)
    # searched whole.
    parts = {**body, "config": config_written}
    try:
        if not canonical.written_alike(named):  # else all are written as they are
            for name, held in numbers.items():
                if not all(map(canonical.written_alike, held.values())):
                    parts[name] = canonical.named_fragment(body[name], held)
        for name in floats:
            parts[name] = canonical.fragment(body[name])
        encoded = canonical.object_bytes(parts)
    except (rfc8785.CanonicalizationError, ValueError, TypeError, AttributeError):
        return _sealed(body)  # which names the field
    checksum = hashlib.sha256(encoded).hexdigest()
    return {"proof_id": f"proof-{checksum[:16]}", **body, "checksum": checksum}


def _verdict_record(result: ConsensusResult) -> tuple[dict[str, Any], Numbers]:
    """The verdict as a proof holds it: the result's fields but its parts (votes, sources,
    ...), `market_id` and the float `required_agreement` (shown as a fraction); floats
    rounded."""
    confidence = round(result.confidence, _FLOAT_DECIMALS)
    agreement = round(result.agreement_ratio, _FLOAT_DECIMALS)
    weighted = round(result.weighted_ratio, _FLOAT_DECIMALS)
    score = round(result.strategy_score, _FLOAT_DECIMALS)
    numbers: Numbers = {
        "confidence": (confidence,),
        "agreement_ratio": (agreement,),
        "weighted_ratio": (weighted,),
        "strategy_score": (score,),
    }
    record: dict[str, Any] = {
        "strategy": result.strategy,
        "reached": result.reached,
        "outcome": result.outcome,
        "leading_outcome": result.leading_outcome,
        "confidence": confidence,
        "agreement_ratio": agreement,
        "weighted_ratio": weighted,
        "strategy_score": score,
        "required_agreement_fraction": result.required_agreement_fraction,
        "valid_agents": result.valid_agents,
        "fault_tolerance": result.fault_tolerance,
        "agreement_level": result.agreement_level,
        "requires_human_review": result.requires_human_review,
        "review_reasons": list(result.review_reasons),
        "review_codes": list(result.review_codes),
        "action": result.action,
        "explanation": result.explanation,
    }
    return record, numbers


def _vote_records(
    votes: Iterable[Vote], results: Iterable[AgentResult]
) -> tuple[list[dict[str, Any]], Numbers]:
    """The votes as a proof holds them, floats rounded, with each agent's reasoning."""
    reasoning = {r.agent_id: r.reasoning for r in results}
    confidences, weights, qualities = [], [], []
    records = []
    for vote in votes:
        confidence = round(vote.confidence, _FLOAT_DECIMALS)
        weight = round(vote.weight, _FLOAT_DECIMALS)
        quality = round(vote.source_quality, _FLOAT_DECIMALS)
        confidences.append(confidence)
        weights.append(weight)
        qualities.append(quality)
        record: dict[str, Any] = {
            "agent_id": vote.agent_id,
            "outcome": vote.outcome,
            "confidence": confidence,
            "weight": weight,
            "source_quality": quality,
            "source_count": vote.source_count,
            "counted": vote.counted,
            "excluded_reasons": list(vote.excluded_reasons),
        }
        # `seen_not_read` appears when the agent cited sources it did not read (proofs
        # before it keep their checksums).
        if vote.seen_not_read:
            record["seen_not_read"] = list(vote.seen_not_read)
        record["reasoning"] = reasoning[vote.agent_id]
        records.append(record)
    return records, {"confidence": confidences, "weight": weights, "source_quality": qualities}


def _dissent_records(dissent: Sequence[Dissent]) -> tuple[list[dict[str, Any]], Numbers]:
    """The dissent as a proof holds it, confidences rounded."""
    confidences = [round(d.confidence, _FLOAT_DECIMALS) for d in dissent]
    records = [
        {
            "agent_id": d.agent_id,
            "outcome": d.outcome,
            "confidence": confidence,
            "kind": d.kind,
            "reasoning": d.reasoning,
        }
        for d, confidence in zip(dissent, confidences, strict=True)
    ]
    return records, {"confidence": confidences}


def _overlap_record(overlap: SourceOverlap) -> tuple[dict[str, Any], Numbers]:
    """The overlap as a proof holds it, floats rounded."""
    # Pairs share few distinct values: each rounded once (a zero as it is, keeping its sign;
    # `.get(v, v)` then gives round(v, 6) for every float).
    distinct = {pair.jaccard for pair in overlap.pairs}
    rounded = {v: round(v, _FLOAT_DECIMALS) for v in distinct if v}
    average = round(overlap.average, _FLOAT_DECIMALS)
    highest = round(overlap.max, _FLOAT_DECIMALS)
    record = {
        "average": average,
        "max": highest,
        "pairs": [
            {"agents": [*pair.agents], "jaccard": rounded.get(pair.jaccard, pair.jaccard)}
            for pair in overlap.pairs
        ],
        "total_unique_sources": overlap.total_unique_sources,
        "band": overlap.band,
    }
    jaccards = {rounded.get(v, v) for v in distinct}
    return record, {"average": (average,), "max": (highest,), "jaccard": jaccards}


# The configuration's record, as orjson writes it (read back as a new copy each time) and
# as RFC 8785 does, by the ids of the models it was built from, which the entry holds (so
# that their ids are not reused): the same models serve every verdict of a daemon or a
# command, and they are immutable (frozen).
_CONFIG_RECORDS: dict[
    tuple[int, int], tuple[ConsensusParams, SourceThresholds, bytes, orjson.Fragment]
] = {}
_CONFIG_RECORDS_KEPT = 8


def _config_record(
    params: ConsensusParams, thresholds: SourceThresholds
) -> tuple[dict[str, Any], orjson.Fragment | None]:
    """The effective configuration as a proof holds it, floats rounded (a new copy each
    time, which its caller may change: `reseal`), and its RFC 8785 bytes (None when it
    holds what RFC 8785 cannot)."""
    key = (id(params), id(thresholds))
    entry = _CONFIG_RECORDS.get(key)
    if entry is not None and entry[0] is params and entry[1] is thresholds:
        # Read back exactly: orjson writes each float's shortest round-trip form.
        copy: dict[str, Any] = orjson.loads(entry[2])
        return copy, entry[3]
    record: dict[str, Any] = _canonical_values(
        {
            "consensus": params.model_dump(mode="json"),
            "sources": thresholds.model_dump(mode="json"),
        }
    )
    if _unrepresentable(record) is not None:
        return record, None
    if len(_CONFIG_RECORDS) >= _CONFIG_RECORDS_KEPT:
        _CONFIG_RECORDS.clear()
    written = canonical.fragment(record)
    _CONFIG_RECORDS[key] = (params, thresholds, orjson.dumps(record), written)
    return record, written


_CREDIBILITY = attrgetter("credibility_score")
_RELEVANCE = attrgetter("relevance_score")


@cache
def _datetime_adapter() -> TypeAdapter[datetime]:
    # pydantic's own JSON form of a datetime, as `model_dump(mode="json")` writes it; built
    # on first use (`oracle proof verify` builds no model).
    from pydantic import TypeAdapter  # noqa: PLC0415

    return TypeAdapter(datetime)


def _source_records(
    sources: tuple[MergedSource, ...],
) -> tuple[list[dict[str, Any]], Numbers]:
    """The merged sources as a proof holds them: each as `model_dump(mode="json")` gives it,
    its floats rounded as `_canonical_values` rounds them; and the distinct scores the
    records hold, by name. (Built here rather than dumped and walked: the one part of a
    proof that grows with the evidence.)"""
    when = _datetime_adapter().dump_python
    credibility = {*map(_CREDIBILITY, sources)}
    relevance = {*map(_RELEVANCE, sources)}
    # Sources share few distinct scores: each rounded once. Zero is left out, as -0.0 and
    # 0.0 would share an entry; `.get(v, v)` then gives round(v, 6) for every float.
    rounded = {v: round(v, _FLOAT_DECIMALS) for v in credibility | relevance if v}
    rows: Iterable[tuple[Any, ...]] = sources
    if any(rounded[v] != v for v in rounded):  # else each score is as rounded already
        rows = [
            (url, title, category, rounded.get(c, c), rounded.get(r, r), published, cited_by)
            for url, title, category, c, r, published, cited_by in sources
        ]
    records = [
        {
            "url": url,
            "title": title,
            "category": category,
            "credibility_score": c,
            "relevance_score": r,
            "published_at": None if published is None else when(published, mode="json"),
            "cited_by": [*cited_by],
        }
        for url, title, category, c, r, published, cited_by in rows
    ]
    return records, {
        "credibility_score": {rounded.get(v, v) for v in credibility},
        "relevance_score": {rounded.get(v, v) for v in relevance},
    }


def reseal(proof: dict[str, Any]) -> dict[str, Any]:
    """A version 2 `proof` whose fields were changed (a secret scrubbed from them: the
    daemon's proof writer), with its checksum and id computed again."""
    body = {k: v for k, v in proof.items() if k not in ("checksum", "proof_id")}
    return _sealed(body)


def verify_proof(document: Any) -> tuple[bool, str]:
    """Recompute a proof's checksum: (matches, the recomputed checksum).

    Accepts a proof, or a consensus output that carries one under `proof`.
    """
    if isinstance(document, dict) and isinstance(document.get("proof"), dict):
        document = document["proof"]
    if not isinstance(document, dict):
        raise ProofError("not a proof: expected a JSON object")
    for name, kind, described in _REQUIRED_FIELDS:
        if name not in document:
            raise ProofError(f"not a proof: no `{name}` field")
        value = document[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ProofError(f"not a proof: `{name}` must be {described}")
    recomputed = compute_checksum(document)
    matches = (
        document["checksum"] == recomputed and document["proof_id"] == f"proof-{recomputed[:16]}"
    )
    return matches, recomputed


def _pct(value: float) -> str:
    return f"{value:.1%}"


def _md(text: object) -> str:
    """Text from the proof as inline Markdown that shows it as written
    (`oracle.core.text.markdown_inline`)."""
    return markdown_inline(str(text))


def _code(text: object) -> str:
    """An identifier as inline code: backticks and controls cannot end it early."""
    return "`" + visible(str(text)).replace("`", "'") + "`"


def _url(url: str) -> str:
    """A link's target inside `<...>`: nothing in it can end the link or the line."""
    return visible(url).replace("<", "%3C").replace(">", "%3E").replace(" ", "%20")


def render_markdown(proof: dict[str, Any]) -> str:
    """A report for people: verdict, votes, dissent, tensions, blind spots, evidence.
    Display only (the JSON is the proof). Market text and what quotes it (the question,
    criteria, outcome labels, reasoning, reasons, titles) is escaped (`_md`: Markdown's
    special characters, line breaks and invisible characters), so none of it can start a
    heading, a section, a table row or a link of its own."""
    if proof.get("kind") == "human_decision":
        decision = proof["decision"]
        return "\n".join(
            [
                f"# Decision proof `{proof['proof_id']}`",
                "",
                f"**Market** {_code(proof['market']['id'])}: {_md(proof['market']['question'])}",
                "",
                f"Decided **{_md(decision['outcome'])}** by {_md(decision['decided_by'])}: "
                f"{_md(decision['reason'])}",
                "",
                f"SHA-256 checksum `{proof['checksum']}`; the consensus it overrides follows.",
                "",
                render_markdown(proof["consensus"]).replace("\n# ", "\n## ", 1),
            ]
        )
    market, verdict = proof["market"], proof["verdict"]
    lines = [
        f"# Consensus proof `{proof['proof_id']}`",
        "",
        f"**Market** {_code(market['id'])}: {_md(market['question'])}",
    ]
    if market.get("criteria"):
        lines.append(f"**Criteria**: {_md(market['criteria'])}")
    if hidden := market.get("hidden_characters"):
        lines.append(
            f"This question contained {hidden} invisible character{'' if hidden == 1 else 's'} "
            "(removed before any agent read it)."
        )
    headline = "Consensus reached" if verdict["reached"] else "No consensus"
    lines += [
        "",
        "## Verdict",
        "",
        f"- {headline}: **{_md(verdict['outcome'])}** ({verdict['agreement_level']}, "
        f"strategy `{verdict['strategy']}`)",
        f"- Confidence {_pct(verdict['confidence'])}; "
        f"agreement {_pct(verdict['agreement_ratio'])} of {verdict['valid_agents']} valid agents "
        f"(quorum {verdict['required_agreement_fraction']}); "
        f"weighted {_pct(verdict['weighted_ratio'])}; "
        f"tolerates {verdict['fault_tolerance']} faulty",
        f"- Action: **{verdict['action']}**",
        f"- {_md(verdict['explanation'])}",
    ]
    if verdict["review_reasons"]:
        lines += ["", "### Needs human review because", ""]
        lines += [f"- {_md(reason)}" for reason in verdict["review_reasons"]]
    lines += [
        "",
        "## Votes",
        "",
        "| Agent | Outcome | Confidence | Weight | Sources | Counted |",
        "|---|---|---|---|---|---|",
    ]
    for vote in proof["votes"]:
        counted = "yes" if vote["counted"] else "no: " + _md("; ".join(vote["excluded_reasons"]))
        lines.append(
            f"| {_md(vote['agent_id'])} | {_md(vote['outcome'])} | {vote['confidence']:.2f} | "
            f"{vote['weight']:.3f} | {vote['source_count']} | {counted} |"
        )
    seen_only = [
        (v["agent_id"], v["seen_not_read"]) for v in proof["votes"] if v.get("seen_not_read")
    ]
    if seen_only:
        lines += ["", "## Seen, not read (counted for nothing)", ""]
        for agent, urls in seen_only:
            lines += [f"- {_md(agent)}: {_url(url)}" for url in urls]
    if proof["failures"]:
        lines += ["", "## Failed agents", ""]
        lines += [f"- {_md(f['agent_id'])}: {_md(f['error'])}" for f in proof["failures"]]
    if proof["dissent"]:
        lines += ["", "## Dissent", ""]
        for d in proof["dissent"]:
            lines.append(
                f"- **{_md(d['agent_id'])}** ({d['kind']}) voted {_md(d['outcome'])} "
                f"with confidence {d['confidence']:.2f}: {_md(d['reasoning'])}"
            )
    if proof["tensions"]:
        lines += ["", "## Unresolved tensions", ""]
        for t in proof["tensions"]:
            lines.append(f"- {_md(t['description'])}; follow-up: {_md(t['suggested_followup'])}")
    if proof["blind_spots"]:
        lines += ["", "## Blind spots", ""]
        lines += [f"- {_md(spot)}" for spot in proof["blind_spots"]]
    overlap = proof["overlap"]
    lines += [
        "",
        "## Evidence",
        "",
        f"{len(proof['sources'])} merged sources; {overlap['total_unique_sources']} unique "
        f"across valid agents; overlap {overlap['band']} (average {overlap['average']:.2f}, "
        f"max {overlap['max']:.2f}).",
        "",
    ]
    shown = proof["sources"][:20]
    lines += [
        f"- [{_md(s['title'] or s['url'])}](<{_url(s['url'])}>) ({_md(s['category'])}, "
        f"credibility {s['credibility_score']:.2f}, cited by {_md(', '.join(s['cited_by']))})"
        for s in shown
    ]
    if len(proof["sources"]) > len(shown):
        lines.append(f"- ... and {len(proof['sources']) - len(shown)} more in the JSON proof")
    lines += [
        "",
        "## Integrity",
        "",
        f"SHA-256 checksum `{proof['checksum']}`; verify with `oracle proof verify FILE`.",
        "",
    ]
    return "\n".join(lines)


def build_decision_proof(
    consensus_proof: dict[str, Any],
    *,
    outcome: str,
    reason: str,
    decided_by: str,
    decided_at: float,
    approved_by: str | None = None,
    approved_at: float | None = None,
) -> dict[str, Any]:
    """The proof for an answer a person decided: their decision, with the consensus proof
    they decided on embedded whole, so both can be checked from one document. A decision
    that needed a second person (four-eyes) names them too (`approved_by`, `approved_at`)."""
    decision: dict[str, Any] = {
        "outcome": outcome,
        "reason": reason,
        "decided_by": decided_by,
        "decided_at": decided_at,
    }
    if approved_by is not None:
        decision |= {"approved_by": approved_by, "approved_at": approved_at}
    body: dict[str, Any] = _canonical_values(
        {
            "version": PROOF_VERSION,
            "kind": "human_decision",
            "market": consensus_proof["market"],
            "decision": decision,
            "consensus": consensus_proof,
        }
    )
    return _sealed(body)
