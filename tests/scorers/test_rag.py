import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval.errors import ConfigError
from aieval.scorers.rag import (
    citation_requirements_met,
    citations_present_for_claims,
    context_precision,
    context_recall,
    extract_citations,
    rag_scorer,
    split_claims,
)
from aieval.scorers.retrieval import average_precision

RETRIEVED = [{"id": "kb-1", "text": "Refunds take 5 days."}, {"id": "kb-2", "text": "..."}]


@pytest.mark.parametrize(
    ("answer", "passed", "reason"),
    [
        pytest.param("Refunds take five business days [kb-1].", True, "cite", id="id-cited"),
        pytest.param("Refunds take five business days [2].", True, "cite", id="numbered"),
        pytest.param(
            "Refunds take five business days [kb-1]. You will get an email too.",
            False,
            "1 of 2 claim(s) carry no citation",
            id="uncited-claim",
        ),
        pytest.param(
            "Refunds take five business days [kb-9].", False, "kb-9 match", id="unresolved"
        ),
        pytest.param("Refunds take five business days [7].", False, "7 match", id="bad-number"),
        pytest.param("# Refunds\nNeed help? Sure.", True, "all 0", id="no-claims"),
    ],
)
def test_citations_gate(answer: str, passed: bool, reason: str) -> None:
    gate = citations_present_for_claims(answer, RETRIEVED)
    assert gate.name == "citations_present_for_claims"
    assert gate.passed is passed
    assert reason in gate.reason


def test_numbered_off_requires_ids() -> None:
    gate = citations_present_for_claims("Refunds take five days [1].", ["kb-1"], numbered=False)
    assert not gate.passed
    assert gate.evidence["unresolved_citations"] == ["1"]


def test_split_and_extract() -> None:
    text = "- First claim is here [1].\n- Second claim is here [2, 3]! Short one."
    assert split_claims(text) == ["First claim is here [1].", "Second claim is here [2, 3]!"]
    assert extract_citations(text) == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("kwargs", "answer", "passed"),
    [
        pytest.param({}, "See [1].", True, id="one-citation"),
        pytest.param({"min_citations": 2}, "See [1].", False, id="too-few"),
        pytest.param({"require_links": True}, "See [1].", False, id="link-missing"),
        pytest.param(
            {"require_links": True, "allowed_domains": ["example.com"]},
            "See [docs](https://docs.example.com/refunds).",
            True,
            id="allowed-subdomain",
        ),
        pytest.param(
            {"allowed_domains": ["example.com"]},
            "See https://evil.test/x and [1].",
            False,
            id="off-domain",
        ),
    ],
)
def test_citation_requirements(kwargs: dict[str, object], answer: str, passed: bool) -> None:
    gate = citation_requirements_met(answer, **kwargs)  # type: ignore[arg-type]
    assert gate.passed is passed, gate.reason


ids = st.lists(st.sampled_from([f"p{i}" for i in range(8)]), unique=True, max_size=8)


@given(ids, ids)
def test_context_metrics(retrieved: list[str], gold: list[str]) -> None:
    precision = context_precision(retrieved, gold)
    recall = context_recall(retrieved, gold)
    assert 0.0 <= precision <= 1.0 and 0.0 <= recall <= 1.0
    hits = [d for d in retrieved if d in gold]
    if hits:
        # Normalized by hits instead of all gold passages, it is average precision over hits.
        assert precision == pytest.approx(average_precision(retrieved, hits))
    if gold:
        assert recall == pytest.approx(len(hits) / len(gold))


def test_text_matching() -> None:
    retrieved = ["Intro.  Refunds TAKE 5 days. Contact us.", "Unrelated text."]
    assert context_recall(retrieved, ["refunds take 5 days"], match="text") == 1.0
    assert context_precision(retrieved[::-1], ["refunds take 5 days"], match="text") == 0.5
    with pytest.raises(ConfigError, match="match"):
        context_recall(retrieved, [], match="fuzzy")


async def test_rag_scorer() -> None:
    output = json.dumps({"answer": "Refunds take five days [kb-1].", "contexts": RETRIEVED})
    gold = {"gold_passages": ["kb-2", "kb-1"]}
    assert (await rag_scorer("context_recall").score(output, gold)).value == 1.0
    assert (await rag_scorer("context_precision").score(output, gold)).value == 1.0
    assert (await rag_scorer("citations").score(output, None)).value == 1.0
    with pytest.raises(ConfigError, match="unknown metric"):
        rag_scorer("bleu")
