from collections import defaultdict
from typing import Any

import pytest

from aieval import run
from aieval.scorers import get_scorer
from aieval.scorers.code import extract_code, passes_tests
from aieval.stats import pass_at_k, pass_at_k_from_outcomes

ADD_OK = "```python\ndef add(a, b):\n    return a + b\n```"
ADD_BAD = "def add(a, b):\n    return a - b\n"
MBPP_TESTS = ["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(-1, 1) == 0"]
HUMANEVAL_CHECK = "def check(candidate):\n    assert candidate(2, 3) == 5\n"

allowed = passes_tests.with_options(allow_code_execution=True)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param("```python\nx = 1\n```", "x = 1\n", id="python-fence"),
        pytest.param("```\ny = 2\n```", "y = 2\n", id="untagged-fence"),
        pytest.param("```bash\nls\n```\n```py\nz = 3\n```", "z = 3\n", id="skips-other-lang"),
        pytest.param("def f(): pass", "def f(): pass", id="no-fence"),
    ],
)
def test_extract_code(text: str, code: str) -> None:
    assert extract_code(text) == code


def test_mbpp_asserts_and_humaneval_check_through_run() -> None:
    rows: list[dict[str, Any]] = [
        {"id": "ok", "prompt": "add", "prediction": ADD_OK, "tests": MBPP_TESTS},
        {"id": "bad", "prompt": "add", "prediction": ADD_BAD, "tests": MBPP_TESTS},
        {
            "id": "he",
            "prompt": "add",
            "prediction": ADD_OK,
            "metadata": {"tests": HUMANEVAL_CHECK, "entry_point": "add"},
        },
        {"id": "expected", "prompt": "add", "prediction": ADD_OK, "expected": MBPP_TESTS[0]},
    ]
    result = run(name="code", dataset=rows, scorers=[allowed], store=False)
    scores = {s.id: s.scores["passes_tests"] for s in result.samples}
    assert scores["ok"].value == 1.0 and scores["ok"].raw == 1.0
    assert scores["bad"].value == 0.0 and scores["bad"].raw == pytest.approx(1 / 3)
    assert scores["bad"].metadata["status"] == "failed" and scores["bad"].reason
    assert scores["he"].value == 1.0 and scores["expected"].value == 1.0


def test_timeouts_score_zero_with_the_limit_as_reason() -> None:
    rows = [
        {
            "prompt": "p",
            "prediction": "def add(a, b):\n    while True: pass",
            "tests": ["assert add(1, 2) == 3"],
        }
    ]
    scorer = passes_tests.with_options(allow_code_execution=True, timeout=1.0)
    score = (
        run(name="code", dataset=rows, scorers=[scorer], store=False)
        .samples[0]
        .scores["passes_tests"]
    )
    assert score.value == 0.0 and score.metadata["status"] == "timeout"


def test_without_opt_in_every_sample_records_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AIEVAL_ALLOW_CODE_EXECUTION", raising=False)
    rows = [{"prompt": "p", "prediction": ADD_OK, "tests": MBPP_TESTS}]
    score = (
        run(name="code", dataset=rows, scorers=[get_scorer("passes_tests")], store=False)
        .samples[0]
        .scores["passes_tests"]
    )
    assert score.value is None and "allow_code_execution=True" in (score.error or "")


def test_row_without_tests_is_an_error_on_that_sample_only() -> None:
    rows = [
        {"id": "none", "prompt": "p", "prediction": ADD_OK},
        {"id": "fine", "prompt": "p", "prediction": ADD_OK, "tests": MBPP_TESTS},
    ]
    samples = run(name="code", dataset=rows, scorers=[allowed], store=False).samples
    by_id = {s.id: s.scores["passes_tests"] for s in samples}
    assert "has no tests" in (by_id["none"].error or "") and by_id["fine"].value == 1.0


def test_several_generations_give_pass_at_k() -> None:
    generations = {"p1": [ADD_OK, ADD_BAD, ADD_BAD], "p2": [ADD_BAD, ADD_BAD, ADD_BAD]}
    rows = [
        {
            "id": f"{problem}-{i}",
            "prompt": problem,
            "prediction": text,
            "tests": MBPP_TESTS,
            "metadata": {"problem": problem},
        }
        for problem, texts in generations.items()
        for i, text in enumerate(texts)
    ]
    samples = run(name="code", dataset=rows, scorers=[allowed], store=False).samples
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for sample in samples:
        outcomes[sample.metadata["problem"]].append(sample.scores["passes_tests"].value == 1.0)
    k2 = pass_at_k_from_outcomes(list(outcomes.values()), k=2)
    assert k2 == pytest.approx((pass_at_k(3, 1, 2) + pass_at_k(3, 0, 2)) / 2)
