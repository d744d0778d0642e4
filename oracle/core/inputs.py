"""Reading a consensus input document, with errors that name the field."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from itertools import accumulate, chain, pairwise, repeat
from operator import itemgetter
from types import NoneType
from typing import Annotated, Any, NamedTuple

from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypedDict

from oracle._pydantic_errors import describe
from oracle.core.models import QUOTE_MAX_CHARS, ConsensusInput, ResearchSource
from oracle.core.sources import SourceColumns, SourceFields
from oracle.core.urls import in_normal_form, normalize_urls
from oracle.errors import InputError


def parse_consensus_input(data: Any) -> ConsensusInput:
    """`{"market": ..., "results": [...], "failures": [...]}` -> ConsensusInput.

    Raises InputError whose message is the first problem, as `field.path: reason`.
    """
    if not isinstance(data, dict):
        raise InputError("(document): expected a JSON object with `market` and `results`")
    try:
        return ConsensusInput.model_validate(data)
    except ValidationError as error:
        problems = describe(error)
        # A model-level check already names its own field: drop pydantic's empty location.
        first = problems[0].removeprefix("(document): ")
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise InputError(first + more) from None


class ConsensusSources(TypedDict):
    """A consensus input read for its verdict (`read_consensus_input`)."""

    # The input, its agents' `sources` left out (each result's is empty).
    answers: ConsensusInput
    # Each agent's sources by its id, as `ResearchSource`'s fields (those absent at their
    # defaults).
    sources: Mapping[str, Sequence[SourceFields]]
    # Each URL cited, normalized (`normalize_url`); None when each is its own normal form.
    normalized: dict[str, str] | None
    # Each agent's sources' URLs, categories and credibility scores by its id, in order,
    # when the read has them (read by column) and no source is unread; else None.
    columns: Mapping[str, SourceColumns] | None


def read_consensus_input(data: Any) -> ConsensusSources:
    """`parse_consensus_input(data)`, its sources held as fields rather than models: the
    same checks, the same values, in a fraction of the time on a large input.

    Every source field is checked column by column over all the sources (`_plain_sources`):
    each value's type, then each distinct value once, against what `ResearchSource` keeps
    as it is; the document's own dicts are then the sources' fields, not copies. A value
    the model would convert (a score written `1`, a date as text) is converted by that
    field's own type, once per distinct value, and only the sources holding one are copied.
    Whatever is not plainly valid this way (a malformed document, a category not yet
    lower-case, ...) is read by `parse_consensus_input`, which gives the same answer or
    names the problem, so no input is read differently (`tests/core/test_inputs.py`)."""
    quick = _quick_read(data)
    if quick is not None:
        return quick
    consensus_input = parse_consensus_input(data)
    sources = {r.agent_id: [vars(s) for s in r.sources] for r in consensus_input.results}
    return ConsensusSources(
        answers=consensus_input.model_copy(
            update={
                "results": tuple(
                    r.model_copy(update={"sources": ()}) for r in consensus_input.results
                )
            }
        ),
        sources=sources,
        normalized=normalize_urls({s["url"] for agent in sources.values() for s in agent}),
        columns=None,
    )


def _quick_read(data: Any) -> ConsensusSources | None:
    """`read_consensus_input(data)` when every part of it is plainly valid; else None."""
    if type(data) is not dict:
        return None
    results = data.get("results")
    if type(results) is not list or any(type(r) is not dict for r in results):
        return None
    cited = [r.get("sources") for r in results]
    if any(type(sources) is not list for sources in cited):
        return None
    plain = _plain_sources(cited)
    if plain is None:
        return None
    sources, urls, columns = plain
    try:
        answers = ConsensusInput.model_validate(
            {**data, "results": [{**r, "sources": ()} for r in results]}
        )
    except ValidationError:
        return None
    normalized: dict[str, str] | None = None
    if not in_normal_form(urls):
        # (In normal form, each is a URL: not empty, no lone surrogate.)
        if "" in urls or not _is_unicode("".join(urls)):
            return None
        try:
            normalized = normalize_urls(urls)
        except ValueError:
            return None
    agents = [r.agent_id for r in answers.results]
    return ConsensusSources(
        answers=answers,
        sources=dict(zip(agents, sources, strict=True)),
        normalized=normalized,
        columns=None if columns is None else dict(zip(agents, columns, strict=True)),
    )


class _Absent:
    """Where a source leaves a field out (no document holds one)."""


_ABSENT = _Absent()
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_unicode(text: str) -> bool:
    """Whether `text` holds no lone surrogate: pydantic-core refuses one in a string it must
    read (one with a length or a pattern to check), and keeps it in any other."""
    return text.isascii() or _LONE_SURROGATE.search(text) is None


def _kept_categories(categories: set[str]) -> bool:
    # The model's validator keeps a category that is its own `strip().lower()`, not empty.
    return all(c and c.strip().lower() == c for c in categories) and _is_unicode(
        "".join(categories)
    )


def _kept_scores(scores: set[float]) -> bool:
    return all(0.0 <= score <= 1.0 for score in scores)  # NaN is not


def _kept_quotes(quotes: set[str]) -> bool:
    return max(map(len, quotes), default=0) <= QUOTE_MAX_CHARS and _is_unicode("".join(quotes))


# By `ResearchSource` field: the type of a value the model keeps as it is, and whether it
# keeps each of a set of distinct values of that type (None: every one). (URLs are checked
# as a set: `_quick_read`. A title is any string: the model does not read it, a lone
# surrogate included.)
_Kept = Callable[[set[Any]], bool] | None
_KEPT: dict[str, tuple[type, _Kept]] = {
    # Those every source holds first (`_REQUIRED`).
    "url": (str, None),
    "category": (str, _kept_categories),
    "credibility_score": (float, _kept_scores),
    "relevance_score": (float, _kept_scores),
    "title": (str, None),
    "published_at": (NoneType, None),
    "quote": (str, _kept_quotes),
    "read": (bool, None),
}
# Fields with a Python validator of their own: a value not kept as it is goes to the model.
_VALIDATED = frozenset({"url", "category"})
_REQUIRED = frozenset(n for n, f in ResearchSource.model_fields.items() if f.is_required())
# String fields whose distinct values are wanted anyway: their values' types are read from
# those (no value of another type, as a document holds it, equals a string, so none is
# hidden by the set).
_TYPED_DISTINCT = frozenset({"url", "category"})
# The columns the read hands on (`ConsensusSources.columns`), and `read`, which says when.
_HANDED_ON = frozenset({"url", "category", "credibility_score", "read"})


class _PlainSources(NamedTuple):
    sources: list[list[SourceFields]]  # each agent's
    urls: set[str]  # every URL cited
    columns: list[SourceColumns] | None  # each agent's; None when a source is unread


def _plain_sources(cited: list[list[Any]]) -> _PlainSources | None:
    """Each agent's sources (`cited`) as `ResearchSource`'s fields (those left out absent),
    with every URL they cite and their columns (`ConsensusSources`), when each source is a
    dict the model reads plainly; else None.

    By column over all the sources (C calls over each: a loop over the sources costs more):
    every value's type, then each distinct value checked once (`_KEPT`). The document's own
    dicts are kept, unknown keys and all (the model ignores those; no reader of the fields
    looks at them). A value of another type (a score written `1`, a date as text, ...) is
    converted as the model converts it, by the field's own type (`_field_values`), once per
    distinct value, and only the sources holding one are copied.

    (Validating every source with pydantic-core instead, as a TypedDict of
    `ResearchSource`'s fields, copied every one: a plain document's read took 1.1 times as
    long at 7 x 50, 1.4 at 7 x 2,000. It is no middle step between this and the models: on
    a document giving every source an int score or a date as text, that read is up to a
    tenth faster than this one, yet the command as a whole takes as long either way (this
    read hands the evidence its columns), and it would be a third way to read a source.)"""
    flat: list[Any] = list(chain.from_iterable(cited))
    if not set(map(type, flat)) <= {dict}:
        return None
    # Once as many keys as the sources hold are read, no source holds another field.
    keys: int | None = sum(map(len, flat))
    read_keys = 0
    urls: set[str] = set()
    held: dict[str, list[Any]] = {}  # the columns handed on, as the model reads them
    copied = False
    for name, (kind, kept) in _KEPT.items():
        if name in _REQUIRED:
            try:
                column = list(map(itemgetter(name), flat))
            except KeyError:
                return None
        elif read_keys == keys:
            break
        else:
            column = list(map(dict.get, flat, repeat(name), repeat(_ABSENT)))
        typed = _column_types(name, column)
        if typed is None:
            return None
        types, distinct = typed
        if _Absent in types:  # in some sources only: how many keys are left is not known
            keys = None
        read_keys += len(column)
        if name in _HANDED_ON:
            held[name] = column
        if types <= {kind, _Absent}:
            if name == "url" and distinct is not None:
                urls = distinct
            if kept is None:
                continue
            if distinct is None:
                distinct = set(column)
            distinct.discard(_ABSENT)
            if kept(distinct):
                continue
        if name in _VALIDATED:
            return None
        converted = _converted(name, column, types, kind, kept)
        if converted is None:
            return None
        flat = list(map(_with_value, flat, repeat(name), converted))
        if name in held:  # handed on: as the model reads it
            held[name] = list(map(_value_or, converted, column))
        copied = True
    spans = list(pairwise(accumulate(map(len, cited), initial=0)))  # each agent's in `flat`
    columns = None
    if False not in held.get("read", ()):
        url, category, credibility = held["url"], held["category"], held["credibility_score"]
        columns = [(url[a:b], category[a:b], credibility[a:b]) for a, b in spans]
    if not copied:
        return _PlainSources(cited, urls, columns)
    return _PlainSources([flat[a:b] for a, b in spans], urls, columns)


def _column_types(name: str, column: list[Any]) -> tuple[set[type], set[Any] | None] | None:
    """The types of the values in `column` (field `name`), and the distinct values where
    they were read from those (`_TYPED_DISTINCT`); None when a value is unhashable (a list,
    ...: invalid)."""
    if name not in _TYPED_DISTINCT:
        return set(map(type, column)), None
    try:
        distinct = set(column)
    except TypeError:
        return None
    return set(map(type, distinct)), distinct


def _with_value(source: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """`source`, or a copy with field `name` set to `value` (`_ABSENT`: as it is)."""
    if value is _ABSENT:
        return source
    copy = source.copy()  # (faster than `{**source, name: value}`, and than C calls of
    copy[name] = value  # `dict.copy` and `dict.__setitem__` mapped over the sources)
    return copy


def _value_or(value: Any, given: Any) -> Any:
    """`value`, or `given` where it is `_ABSENT`."""
    return given if value is _ABSENT else value


# Types of values a document holds (`_ABSENT` aside) that equal no value of another
# type but among the numbers (1 == 1.0 == True), which the model reads differently.
_DOCUMENT_TYPES = frozenset({str, NoneType, bool, int, float, _Absent})
_NUMBERS = frozenset({bool, int, float})


def _converted(
    name: str, column: list[Any], types: set[type], kind: type, kept: _Kept
) -> list[Any] | None:
    """Each value in `column` (field `name`, of `types`) as the model converts it,
    `_ABSENT` for those it keeps as they are; None when one is invalid."""
    # Keyed by value, or by (type, value) where two equal values could differ in type.
    keys: list[Any] = column
    if not (types <= _DOCUMENT_TYPES and len(types & _NUMBERS) <= 1):
        keys = list(zip(map(type, column), column, strict=True))
    try:
        distinct = set(keys)
    except TypeError:  # an unhashable value (a list, ...): invalid
        return None
    odd = [
        key
        for key in distinct
        if (value := key if keys is column else key[1]) is not _ABSENT
        and not (type(value) is kind and (kept is None or kept({value})))
    ]
    try:
        values = _field_values(name).validate_python(
            odd if keys is column else [value for _, value in odd]
        )
    except ValidationError:
        return None
    return list(map(dict(zip(odd, values, strict=True)).get, keys, repeat(_ABSENT)))


@cache
def _field_values(name: str) -> TypeAdapter[list[Any]]:
    """A list of values of `ResearchSource`'s field `name`, validated as the model
    validates it (its type and constraints: every check, for a field without a validator
    of its own)."""
    info = ResearchSource.model_fields[name]
    annotated: Any = (
        Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    )
    return TypeAdapter(list[annotated])
