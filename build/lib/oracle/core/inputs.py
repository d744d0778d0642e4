"""Reading a consensus input document, with errors that name the field."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from oracle._pydantic_errors import describe
from oracle.core.models import ConsensusInput
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
