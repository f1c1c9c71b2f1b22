"""Reports: the reporting bundle of a run, paired comparison of two runs, promotion policy,
and their renderers for the terminal, JSON, Markdown, GitHub comments and HTML.

Renderers take a ``RunReport``, a ``Comparison`` or the ``to_dict()`` data of either, so stored
JSON renders the same way as a fresh report.

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
from aieval.report._epochs import invalid_answers_note
from aieval.report._github import COMMENT_LIMIT, ExampleTexts, example_texts, render_github
from aieval.report._header import run_header
from aieval.report._html import render_html
from aieval.report._intervals import IntervalMethod, IntervalPolicy
from aieval.report._json import comparison_schema, render_json, report_schema
from aieval.report._judge_figures import JudgeFigures, run_judge_figures
from aieval.report._markdown import render_markdown
from aieval.report._policy import PromotionDecision, PromotionPolicy, RuleResult, decide_promotion
from aieval.report._samples import CriterionValue, ExampleNumbers, example_numbers
from aieval.report._text import render_diff, render_judges, render_text
from aieval.report._tool_results import ToolFigures, ToolRow
from aieval.report._tool_section import ComparedTools, ToolChange

__all__ = [
    "COMMENT_LIMIT",
    "ComparedTools",
    "Comparison",
    "CriterionValue",
    "ExampleNumbers",
    "ExampleTexts",
    "IntervalMethod",
    "IntervalPolicy",
    "JudgeFigures",
    "PromotionDecision",
    "PromotionPolicy",
    "RuleResult",
    "RunReport",
    "ToolChange",
    "ToolFigures",
    "ToolRow",
    "build_report",
    "compare_runs",
    "comparison_schema",
    "decide_promotion",
    "describe_changes",
    "example_numbers",
    "example_texts",
    "invalid_answers_note",
    "render_diff",
    "render_github",
    "render_html",
    "render_json",
    "render_judges",
    "render_markdown",
    "render_text",
    "report_schema",
    "run_header",
    "run_judge_figures",
]
