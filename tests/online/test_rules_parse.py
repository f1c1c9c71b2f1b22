"""Rules files and API bodies read into OnlineRules: every field validated, errors naming the
file, the rule and the field; scoring checked by the eval file's own code; an API rule never
imports Python nor reads files outside the dataset roots."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from aieval.errors import ConfigError
from aieval.online import AlertPolicy, AttributeMatch, Budget, OnlineRule, RuleScoring
from aieval.online._rules import (
    RuleOrigin,
    load_rules,
    parse_rule,
    parse_rules,
    rule_from_json,
    rule_to_json,
)

RULES = """\
rules:
  - name: checkout-quality
    filter:
      service_name: shop
      span_name: llm.call
      attributes:
        - {key: tier, equals: gold}
        - {key: retries, equals: 2}
        - {key: cached, equals: false}
        - {key: route, regex: "/api/v[0-9]+/.*"}
        - {key: debug, exists: false}
    sampling_rate: 0.25
    scoring:
      scorers: [json_valid, {contains: {value: ok}}, {llm_judge: {rubric: "Correct?"}}]
      default_checks: [{starts_with: {value: "{"}}]
      pass_threshold: 0.7
    budget: {calls_per_hour: 100, cost_per_day: 2.5}
    window: day
    settle_s: 10
    incomplete_after_s: 300
    alert: {floor: 0.8, consecutive: 2, webhook: "https://hooks.example/x"}
    review: triage
  - name: all-traces
    scoring: {profile: agent}
    paused: true
"""


def _file(tmp_path: Path, text: str = RULES) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    return path


def _api(tmp_path: Path) -> RuleOrigin:
    return RuleOrigin("api", "request body", roots=(tmp_path,))


def test_a_rules_file_reads_every_field_and_round_trips_through_json(tmp_path: Path) -> None:
    first, second = load_rules(_file(tmp_path))
    assert first.filter.attributes == (
        AttributeMatch("tier", equals="gold"),
        AttributeMatch("retries", equals=2),
        AttributeMatch("cached", equals=False),
        AttributeMatch("route", regex="/api/v[0-9]+/.*"),
        AttributeMatch("debug", exists=False),
    )
    assert type(first.filter.attributes[1].equals) is int
    assert first.sampling_rate == 0.25 and first.window == "day" and first.review == "triage"
    assert first.budget == Budget(calls_per_hour=100, cost_per_day=2.5)
    assert first.alert == AlertPolicy(floor=0.8, consecutive=2, webhook="https://hooks.example/x")
    assert first.scoring.scorers == (
        "json_valid",
        {"contains": {"value": "ok"}},
        {"llm_judge": {"rubric": "Correct?"}},
    )
    assert (
        second == OnlineRule(name="all-traces", scoring=second.scoring, paused=True)
        and second.scoring.profile == "agent"
    )
    for rule in (first, second):
        assert rule_from_json(rule_to_json(rule)) == rule


def _error(data: Any, tmp_path: Path, origin: RuleOrigin | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_rules(data, origin or RuleOrigin("file", "rules.yaml", base_dir=tmp_path))
    return str(caught.value)


SCORED = {"scorers": ["json_valid"]}


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        (
            {"name": "a/b", "scoring": SCORED},
            "rules[0] (rule 'a/b'): name: 'a/b': a rule name holds only the letters",
        ),
        ({"name": "a\nb", "scoring": SCORED}, "'a\\nb': a rule name holds only"),
        ({"name": "x" * 101, "scoring": SCORED}, "name: a rule name has 1 to 100"),
        ({"name": "r", "scoring": SCORED, "bogus": 1}, "(rule 'r'): bogus: unknown key"),
        (
            {"name": "r", "scoring": SCORED, "sampling_rate": 0},
            "sampling_rate: Input should be greater than 0",
        ),
        (
            {"name": "r", "scoring": SCORED, "sampling_rate": 1.5},
            "sampling_rate: Input should be less than or equal to 1",
        ),
        ({"name": "r", "scoring": SCORED, "budget": {"calls_per_day": -1}}, "budget.calls_per_day"),
        ({"name": "r", "scoring": SCORED, "budget": {"calls": 5}}, "budget.calls: unknown key"),
        ({"name": "r", "scoring": SCORED, "window": "week"}, "window: "),
        (
            {"name": "r", "scoring": SCORED, "filter": {"attributes": [{"key": "k"}]}},
            "filter.attributes[0]: attribute 'k': give exactly one of equals, regex, exists",
        ),
        (
            {"name": "r", "scoring": SCORED, "alert": {"floor": 0.5, "webhook": "file:///x"}},
            "alert.webhook: 'file:///x' is not an http",
        ),
        ({"name": "r", "scoring": SCORED, "alert": {"consecutive": 2}}, "alert: give a floor"),
        (
            {"name": "r", "scoring": SCORED, "alert": {"metric": "mean", "floor": 0.5}},
            "alert: metric: mean needs the scorer",
        ),
        (
            {"name": "r", "scoring": SCORED, "settle_s": 60, "incomplete_after_s": 30},
            "incomplete_after_s (30) is shorter than settle_s (60)",
        ),
        ({"name": "r", "scoring": {}}, "(rule 'r'): scoring: scorers: give at least one scorer"),
        (
            {"name": "r", "scoring": {"scorers": ["nope"]}},
            "(rule 'r'): scoring: unknown scorer 'nope'",
        ),
        (
            {"name": "r", "scoring": {"scorers": [{"a": {}, "b": {}}]}},
            "scorers[0] must be a name or a one-key mapping",
        ),
        ({"name": "r", "scoring": {"profile": "agent", "grader": "nope"}}, "scoring: grader"),
        (
            {"name": "r", "scoring": {"workflow": "missing.yaml"}},
            "missing.yaml: workflow definition not found",
        ),
        (
            {"name": "r", "scoring": SCORED, "filter": {"attributes": [{"key": "k"}] * 101}},
            "filter.attributes: List should have at most 100 items",
        ),
        (
            {
                "name": "r",
                "scoring": SCORED,
                "filter": {"attributes": [{"key": "k", "equals": "x" * 5000}]},
            },
            "filter.attributes[0].equals: a value of 5,000 characters",
        ),
    ],
)
def test_a_bad_rule_is_refused_naming_file_rule_and_field(
    rule: dict[str, Any], said: str, tmp_path: Path
) -> None:
    message = _error({"rules": [rule]}, tmp_path)
    assert message.startswith("rules.yaml: ")
    assert said in message, message


def test_a_rules_file_needs_rules_and_unique_names(tmp_path: Path) -> None:
    assert "rules: Field required" in _error({"rule": []}, tmp_path)
    twice = {"rules": [{"name": "q", "scoring": SCORED}, {"name": "q", "scoring": SCORED}]}
    assert "rules[1] (rule 'q'): name: the name of rules[0] too" in _error(twice, tmp_path)
    with pytest.raises(ConfigError, match="rules file not found"):
        load_rules(tmp_path / "absent.yaml")


def test_a_file_rule_reads_its_files_from_the_rules_file_folder(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text(
        "from aieval.scorers import scorer\n\n"
        "@scorer(name='rules_test_always')\n"
        "def always(prediction, expected=None):\n    return 1.0\n"
    )
    rules = (
        "rules:\n  - name: own\n    scoring: {imports: [checks.py], scorers: [rules_test_always]}\n"
    )
    (rule,) = load_rules(_file(tmp_path, rules))
    assert rule.scoring.imports == (str((tmp_path / "checks.py").resolve()),)


def test_an_api_rule_imports_no_python(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text("raise SystemExit('imported')\n")
    for scoring, said in [
        ({"imports": ["checks.py"], "scorers": ["json_valid"]}, "scoring.imports: .*may not"),
        ({"scorers": ["os.path:join"]}, r"scoring.scorers\[0\]: 'os.path:join' names Python"),
        (
            {"scorers": ["json_valid"], "default_checks": [{"x.py:f": {}}]},
            r"scoring.default_checks\[0\]: 'x.py:f' names Python",
        ),
    ]:
        with pytest.raises(ConfigError, match=f"request body: rule 'r': {said}"):
            parse_rule({"name": "r", "scoring": scoring}, _api(tmp_path))


def test_an_api_rule_reads_files_only_inside_the_dataset_roots(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "wf.yaml").write_text("name: wf\n")
    origin = RuleOrigin("api", "request body", roots=(root,))
    for path in (str(outside / "wf.yaml"), "../outside/wf.yaml"):
        with pytest.raises(ConfigError, match=r"scoring\.workflow: "):
            parse_rule({"name": "r", "scoring": {"workflow": path}}, origin)
    with pytest.raises(ConfigError, match=r"scoring\.profile: .*not a file this server may"):
        parse_rule({"name": "r", "scoring": {"profile": str(outside / "p.yaml")}}, origin)


def test_a_value_that_is_not_json_is_refused_never_a_crash() -> None:
    odd = OnlineRule(name="r", scoring=RuleScoring(scorers=({"x": {"when": date(2026, 1, 2)}},)))
    with pytest.raises(ConfigError, match="rule 'r': scoring: holds a value that is not JSON"):
        rule_to_json(odd)


def test_a_stored_spec_is_validated_again(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="stored rule: rule 'r': sampling_rate"):
        rule_from_json('{"name": "r", "scoring": {}, "sampling_rate": 3}')
    with pytest.raises(ConfigError, match="stored rule: not JSON"):
        rule_from_json("{")


@pytest.mark.parametrize(
    ("scoring", "field"),
    [
        (
            {"scorers": [{"llm_judge": {"rubric": "r", "api_key_env": "HOME"}}]},
            "scoring.scorers[0].llm_judge.api_key_env",
        ),
        (
            {"scorers": [{"llm_judge": {"rubric": "r", "api_key": "sk-1"}}]},
            "scoring.scorers[0].llm_judge.api_key",
        ),
        (
            {"scorers": [{"llm_judge": {"rubric": "r", "headers": {"X-Key": "k"}}}]},
            "scoring.scorers[0].llm_judge.headers",
        ),
        (
            {"scorers": [{"similar": {"value": "v", "api_key_env": "AIEVAL_TOKEN"}}]},
            "scoring.scorers[0].similar.api_key_env",
        ),
        (
            {
                "scorers": ["json_valid"],
                "default_checks": [{"llm_judge": {"judges": [{"x": {"token_env": "PGPASSWORD"}}]}}],
            },
            "scoring.default_checks[0].llm_judge.judges[0].x.token_env",
        ),
        (
            {"profile": "agent", "workflow": {"name": "w", "grader": {"api_key_env": "HOME"}}},
            "scoring.workflow.grader.api_key_env",
        ),
    ],
)
def test_an_api_rule_names_no_key_variable_or_header(
    scoring: dict[str, Any], field: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as error:
        parse_rule({"name": "r", "scoring": scoring}, _api(tmp_path))
    message = str(error.value)
    assert message.startswith(f"request body: rule 'r': {field}: ")
    assert "may not name a key, an environment variable or headers" in message


def test_a_rules_file_may_name_the_judge_s_key_variable(tmp_path: Path) -> None:
    judge = {"llm_judge": {"rubric": "r", "base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    judge["llm_judge"]["api_key_env"] = "HOME"
    origin = RuleOrigin("file", "rules.yaml", base_dir=tmp_path)
    (rule,) = parse_rules({"rules": [{"name": "r", "scoring": {"scorers": [judge]}}]}, origin)
    assert rule.scoring.scorers == (judge,)


@pytest.mark.parametrize(
    ("scoring", "said"),
    [
        ({"scorers": ["exact_match"]}, r"scoring\.scorers\[0\]: 'exact_match' compares"),
        ({"scorers": [{"rouge_l": {}}]}, r"scoring\.scorers\[0\]: 'rouge_l' compares"),
        (
            {"scorers": ["json_valid"], "default_checks": ["token_f1"]},
            r"scoring\.default_checks\[0\]: 'token_f1' compares",
        ),
        (
            {"scorers": [{"contains": {"case_sensitive": True}}]},
            r"scoring\.scorers\[0\]: 'contains' without 'value' compares",
        ),
    ],
)
def test_a_scorer_needing_an_expected_answer_is_refused_when_the_rule_is_read(
    scoring: dict[str, Any], said: str, tmp_path: Path
) -> None:
    for origin in (_api(tmp_path), RuleOrigin("file", "rules.yaml", base_dir=tmp_path)):
        with pytest.raises(ConfigError, match=f"rule 'r': {said}.*a trace has none"):
            parse_rule({"name": "r", "scoring": scoring}, origin)
    # the same checks with a value of their own need no reference
    parse_rule(
        {"name": "r", "scoring": {"scorers": [{"contains": {"value": "x"}}]}}, _api(tmp_path)
    )


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"name": "质量"}, "name: '质量': a rule name holds only the letters A-Z"),
        ({"name": "a b"}, "name: 'a b': a rule name holds only"),
        ({"name": "-x"}, "name: '-x': a rule name holds only"),
        ({"name": "x" * 101}, "name: a rule name has 1 to 100 characters, not 101"),
        (
            {"review": "../../x\n<b>"},
            "review: '../../x\\n<b>': a review queue name holds only",
        ),
        ({"review": "q" * 101}, "review: a review queue name has 1 to 100 characters"),
        ({"review": "triage"}, "review: the queue 'triage' checks a judge, and the rule's"),
    ],
)
def test_rule_and_queue_names_are_plain_ascii_and_review_needs_a_judge(
    change: dict[str, Any], said: str, tmp_path: Path
) -> None:
    for origin in (_api(tmp_path), RuleOrigin("file", "rules.yaml", base_dir=tmp_path)):
        with pytest.raises(ConfigError) as error:
            parse_rule({"name": "r", "scoring": SCORED, **change}, origin)
        assert said in str(error.value), str(error.value)
    judged = {"scorers": [{"llm_judge": {"rubric": "Correct?"}}]}
    rule = parse_rule({"name": "A-1.b_c", "scoring": judged, "review": "q.1"}, _api(tmp_path))
    assert (rule.name, rule.review) == ("A-1.b_c", "q.1")
