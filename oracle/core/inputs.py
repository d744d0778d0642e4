"""Reading a consensus input document, with errors that name the field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from operator import itemgetter
from typing import Annotated, Any, NotRequired

from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from oracle._pydantic_errors import describe
from oracle.core.models import ConsensusInput, ResearchSource
from oracle.core.sources import SourceFields
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


def read_consensus_input(data: Any) -> ConsensusSources:
    """`parse_consensus_input(data)`, its sources held as fields rather than models: the
    same checks, the same values, in a fraction of the time on a large input.

    Every source is validated by pydantic-core in one call, against `ResearchSource`'s own
    fields (`_source_fields`); what its two Python validators check is then checked once
    per distinct value (a category, a URL) rather than once per source. Whatever is not
    plainly valid this way (a malformed document, a category not yet lower-case, ...) is
    read by `parse_consensus_input`, which gives the same answer or names the problem, so
    no input is read differently (`tests/core/test_inputs.py`)."""
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
    )


_URL = itemgetter("url")


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
    try:
        validated = _source_lists().validate_python(cited)
        answers = ConsensusInput.model_validate(
            {**data, "results": [{**r, "sources": ()} for r in results]}
        )
    except ValidationError:
        return None
    urls: set[str] = set().union(*[map(_URL, sources) for sources in validated])
    normalized: dict[str, str] | None = None
    if not in_normal_form(urls):
        try:
            normalized = normalize_urls(urls)
        except ValueError:
            return None
    return ConsensusSources(
        answers=answers,
        sources={
            r.agent_id: sources for r, sources in zip(answers.results, validated, strict=True)
        },
        normalized=normalized,
    )


# A category `ResearchSource` keeps as it is (`value.strip().lower() == value`, not empty):
# printable ASCII but upper-case letters, spaces only inside. Any other is read by the model.
# (Matched by pydantic-core's Rust engine, whose `$` is the very end: `news\n` does not match.)
_PLAIN_CATEGORY = r"^[!-@\[-~](?:[ -@\[-~]*[!-@\[-~])?$"


@cache
def _source_lists() -> TypeAdapter[list[list[dict[str, Any]]]]:
    """Lists of sources, each validated as `ResearchSource`'s fields are (the same types
    and constraints), to a dict: all but its two Python validators. A field the source
    leaves out stays out (its default is read where it is used: a third fewer keys to
    build and free). Its category must moreover be already as the model's validator leaves
    it (`_PLAIN_CATEGORY`); the URL is checked after, once per distinct URL."""
    fields: dict[str, Any] = {}
    for name, info in ResearchSource.model_fields.items():
        if info.is_required():
            annotated: Any = Annotated[info.annotation, info]
        else:  # its constraints without its default
            metadata = info.metadata
            annotated = Annotated[(info.annotation, *metadata)] if metadata else info.annotation
        if name == "category":
            annotated = Annotated[annotated, Field(pattern=_PLAIN_CATEGORY)]
        fields[name] = annotated if info.is_required() else NotRequired[annotated]
    source: Any = TypedDict("SourceFieldsDocument", fields)  # type: ignore[misc]
    lists: Any = list[list[source]]
    return TypeAdapter(lists)
