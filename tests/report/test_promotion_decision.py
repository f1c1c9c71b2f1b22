"""The promotion decision has one home: both comparison paths build ``DecisionInputs`` and call
``_policy.decide``, which alone lists the policy's rules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tests.report.golden.fixture import PAIRS, build_store
from tests.report.test_promotion_policy import RULES as RULE_NAMES

import aieval.report
from aieval.report import _policy, compare_runs
from aieval.report._evidence import PassValues, RuleResult
from aieval.report._policy import RULES, DecisionInputs, PromotionPolicy
from aieval.store import Store


@pytest.fixture
def golden(tmp_path: Path) -> Iterator[Store]:
    built = build_store(tmp_path / "runs.db")
    try:
        yield built
    finally:
        built.close()


def _decided(
    store: Store, monkeypatch: pytest.MonkeyPatch, base: str, cand: str, *, columns: bool
) -> tuple[DecisionInputs, list[str]]:
    """The inputs the comparison of ``base`` and ``cand`` decided on (from columns or record by
    record), and its decision's rule names, with a probe rule added to the one list."""
    seen: list[DecisionInputs] = []

    def probe(inputs: DecisionInputs, policy: PromotionPolicy) -> RuleResult:
        seen.append(inputs)
        return RuleResult("probe", True, "seen")

    with monkeypatch.context() as patch:
        patch.setattr(_policy, "RULES", (*RULES, probe))
        if not columns:
            patch.setattr(Store, "plain_run", lambda self, run: False)
        elif not (store.plain_run(base) and store.plain_run(cand)):
            raise AssertionError(f"{base} and {cand} are not plain runs")
        comparison = compare_runs(store, base, cand, n_resamples=200)
    assert len(seen) == 1
    return seen[0], [r.rule for r in comparison.decision.rules]


def test_both_comparison_paths_decide_through_the_one_rule_list(
    golden: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for base, cand in (PAIRS["ungraded"], PAIRS["epochs"]):
        fast, fast_rules = _decided(golden, monkeypatch, base, cand, columns=True)
        slow, slow_rules = _decided(golden, monkeypatch, base, cand, columns=False)
        assert fast_rules == slow_rules == [*RULE_NAMES, "probe"]
        # the two paths hand the rules the same evidence
        np.testing.assert_array_equal(fast.baseline_scores, slow.baseline_scores)
        np.testing.assert_array_equal(fast.candidate_scores, slow.candidate_scores)
        assert fast.coverage == slow.coverage
        # the column path hands its pass values over as arrays, the record path as lists
        fast_pass, slow_pass = fast.pass_values, slow.pass_values
        assert isinstance(fast_pass, PassValues) and isinstance(slow_pass, PassValues)
        assert list(fast_pass.baseline) == list(slow_pass.baseline)
        assert list(fast_pass.candidate) == list(slow_pass.candidate)
        assert (fast_pass.lost, fast_pass.gained, fast_pass.shares) == (
            slow_pass.lost, slow_pass.gained, slow_pass.shares
        )  # fmt: skip
        assert (fast.scored_paired, fast.unpaired) == (slow.scored_paired, slow.unpaired)
        assert list(fast.changed_inputs) == list(slow.changed_inputs)
        assert list(fast.changed_expected) == list(slow.changed_expected)
        assert (fast.judges, fast.baseline_judges) == (slow.judges, slow.baseline_judges)
        assert not fast.graded_pairs and not slow.graded_pairs  # plain verdicts: no gates
    graded, rules = _decided(golden, monkeypatch, *PAIRS["graded"], columns=False)
    assert rules == [*RULE_NAMES, "probe"]
    assert graded.graded_pairs
    assert all(b.gates or b.criteria or c.gates or c.criteria for b, c in graded.graded_pairs)


def test_only_the_policy_module_applies_the_rules() -> None:
    """No comparison path calls a rule itself: a rule is applied where ``RULES`` lists it."""
    rules = {
        "coverage_rule", "comparable_rule", "paired_rule", "gate_rule", "score_rule",
        "pass_rate_rule", "floor_rule", "severe_rule", "judge_rule",
    }  # fmt: skip
    callers: dict[str, set[str]] = {}
    for path in Path(aieval.report.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id in rules:
                callers.setdefault(node.func.id, set()).add(path.name)
    assert callers == {name: {"_policy.py"} for name in rules}
