"""Trace files made once per session by the instrumented app (see ``_produce``)."""

from __future__ import annotations

import pytest
from tests.traces._produce import Produced, produce

SCENARIOS = ["ok", "forbidden", "bad_args", "unexecuted", "bad_handoff", "llm_error"]


@pytest.fixture(scope="session")
def genai(tmp_path_factory: pytest.TempPathFactory) -> Produced:
    """Traces of the GenAI-conventions app (openai-v2 instrumentation)."""
    return produce(tmp_path_factory.mktemp("genai"), "genai", SCENARIOS)


@pytest.fixture(scope="session")
def openinference(tmp_path_factory: pytest.TempPathFactory) -> Produced:
    """Traces of the OpenInference app (openinference-instrumentation-openai)."""
    return produce(tmp_path_factory.mktemp("openinference"), "openinference", SCENARIOS)


@pytest.fixture
def traces(request: pytest.FixtureRequest) -> Produced:
    """``genai`` or ``openinference``, by the test's parameter."""
    produced: Produced = request.getfixturevalue(request.param)
    return produced
