"""Reports: the reporting bundle of a run, paired comparison of two runs, promotion policy.

Example:
    >>> import os, tempfile
    >>> from aieval import run
    >>> from aieval.store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "runs.db"))
    >>> rows = [{"id": "a", "input": "2+2", "expected": "4", "prediction": "4"}]
    >>> result = run(name="math", dataset=rows, scorers=["exact_match"], store=store)
    >>> build_report(store, result.id).to_dict()["pass_rate"]["estimate"]
    1.0
"""

from aieval.report._bundle import RunReport, build_report
from aieval.report._compare import Comparison, compare_runs, describe_changes
from aieval.report._policy import PromotionDecision, PromotionPolicy, RuleResult, decide_promotion
from aieval.report._samples import CriterionValue, ExampleNumbers, example_numbers

__all__ = [
    "Comparison",
    "CriterionValue",
    "ExampleNumbers",
    "PromotionDecision",
    "PromotionPolicy",
    "RuleResult",
    "RunReport",
    "build_report",
    "compare_runs",
    "decide_promotion",
    "describe_changes",
    "example_numbers",
]
