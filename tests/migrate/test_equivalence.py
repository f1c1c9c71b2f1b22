"""What the promptfoo import claims: ``similar`` embeds with promptfoo's default model, and
every mapped check that may judge an output otherwise than promptfoo is listed under "Not
equivalent" with what differs and what to do; such an import is never called complete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aieval.migrate import MAPPED_TYPES, import_promptfoo
from aieval.migrate._pfasserts import NOT_EQUIVALENT, PROMPTFOO_EMBEDDING_MODEL
from aieval.scorers._similar import DEFAULT_EMBEDDING_MODEL


def _import(tmp_path: Path, asserts: list[dict[str, Any]], **extra: Any) -> Any:
    folder = tmp_path / "pf"
    folder.mkdir(exist_ok=True)
    doc = {
        "prompts": ["Say {{word}}"],
        "providers": ["openai:gpt-4o-mini"],
        "tests": [{"vars": {"word": "hi"}, "assert": asserts}],
        **extra,
    }
    path = folder / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return import_promptfoo(path, tmp_path / "out")


def _checks(result: Any) -> list[Any]:
    (line,) = result.dataset.read_text(encoding="utf-8").splitlines()
    checks: list[Any] = json.loads(line)["checks"]
    return checks


def test_similar_embeds_with_promptfoos_default_model_written_out(tmp_path: Path) -> None:
    # promptfoo's DefaultEmbeddingProvider (src/providers/openai/defaults.ts)
    assert PROMPTFOO_EMBEDDING_MODEL == "text-embedding-3-large"
    # aieval's own default differs, so the model must be written on the check
    assert DEFAULT_EMBEDDING_MODEL != PROMPTFOO_EMBEDDING_MODEL
    result = _import(tmp_path, [{"type": "similar", "value": "hello", "threshold": 0.8}])
    assert _checks(result) == [
        {
            "similar": {
                "value": "hello",
                "threshold": 0.8,
                "embedding_model": "text-embedding-3-large",
            }
        }
    ]
    assert result.complete  # an OpenAI target: the same embeddings as promptfoo's


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ({"embedding": "openai:embedding:text-embedding-3-small"}, "text-embedding-3-small"),
        ("openai:embeddings:text-embedding-ada-002", "text-embedding-ada-002"),
        # a text provider (for the graded assertions): promptfoo embeds with its default
        ("openai:chat:gpt-4o", "text-embedding-3-large"),
    ],
)
def test_similar_takes_the_tests_embedding_provider(
    tmp_path: Path, provider: Any, model: str
) -> None:
    result = _import(
        tmp_path,
        [{"type": "similar", "value": "hello"}],
        defaultTest={"options": {"provider": provider}},
    )
    ((_, options),) = _checks(result)[0].items()
    assert options["embedding_model"] == model


def test_similar_is_not_equivalent_when_the_target_answers_elsewhere(tmp_path: Path) -> None:
    result = _import(
        tmp_path, [{"type": "similar", "value": "hello"}], providers=["ollama:chat:llama3"]
    )
    assert not result.complete
    (line,) = result.not_equivalent
    assert "ollama" in line.note and "base_url: https://api.openai.com/v1" in line.note


EXAMPLES: dict[str, dict[str, Any]] = {
    "cost": {"type": "cost", "threshold": 0.01},
    "latency": {"type": "latency", "threshold": 500},
    "finish-reason": {"type": "finish-reason", "value": "stop"},
    "is-json": {"type": "is-json"},
    "contains-json": {"type": "contains-json"},
    "is-sql": {"type": "is-sql"},
    "is-xml": {"type": "is-xml"},
    "is-html": {"type": "is-html"},
    "levenshtein": {"type": "levenshtein", "value": "hi"},
    "icontains": {"type": "icontains", "value": "hi"},
    "icontains-any": {"type": "icontains-any", "value": ["hi", "yo"]},
    "icontains-all": {"type": "not-icontains-all", "value": ["hi", "yo"]},
}


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_a_mapping_that_judges_otherwise_is_listed_and_the_import_is_not_complete(
    tmp_path: Path, kind: str
) -> None:
    result = _import(tmp_path, [EXAMPLES[kind]])
    assert not result.unmapped and len(result.mapped) == 3  # the check, the provider, the prompt
    (line,) = result.not_equivalent
    assert line.note == NOT_EQUIVALENT[kind]
    assert not result.complete
    report = (tmp_path / "out" / "import-report.md").read_text(encoding="utf-8")
    assert "## Not equivalent (1)" in report and f"{kind}` (1: " in report
    assert "The import is not complete: 0 part(s) not mapped, 1 check(s) not equivalent" in report
    assert "is complete" not in report


def test_cost_says_usage_carries_no_cost_and_what_to_do() -> None:
    note = NOT_EQUIVALENT["cost"]
    assert "reports tokens, not cost" in note and "scores nothing" in note
    assert "prices:" in note and "input_per_mtok" in note


def test_every_mapped_type_is_judged_equivalent_or_listed() -> None:
    exact = {  # promptfoo's verdicts held by tests/conformance/promptfoo
        "contains",
        "starts-with",
        "contains-any",
        "contains-all",
        "equals",
        "python",
        # conditional differences, tested above and below
        "regex",
        "similar",
    }
    assert set(MAPPED_TYPES) == exact | set(NOT_EQUIVALENT)


@pytest.mark.parametrize(
    ("pattern", "listed"),
    [("^Hi", False), (r"a\.b", False), (r"\d{3}", False), ("a.b", True), (r"^\S$", True)],
)
def test_a_regex_matching_one_javascript_unit_is_listed(
    tmp_path: Path, pattern: str, listed: bool
) -> None:
    result = _import(tmp_path, [{"type": "regex", "value": pattern}])
    assert bool(result.not_equivalent) is listed and result.complete is not listed


def test_an_import_of_equivalent_checks_is_complete(tmp_path: Path) -> None:
    result = _import(
        tmp_path, [{"type": "contains", "value": "hi"}, {"type": "regex", "value": "^hi"}]
    )
    assert result.complete and not result.not_equivalent
    report = (tmp_path / "out" / "import-report.md").read_text(encoding="utf-8")
    assert "## Not equivalent (0)" in report and report.rstrip().endswith("The import is complete.")


def test_a_finish_reason_is_compared_without_case_as_in_promptfoo(tmp_path: Path) -> None:
    result = _import(tmp_path, [{"type": "finish-reason", "value": "Stop"}])
    assert _checks(result) == [{"finish_reason": {"value": "stop"}}]
