from __future__ import annotations

import pytest

from oracle.core import ConsensusParams, SourceThresholds


@pytest.fixture
def params() -> ConsensusParams:
    return ConsensusParams()


@pytest.fixture
def thresholds() -> SourceThresholds:
    return SourceThresholds()
