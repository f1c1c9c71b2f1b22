"""Code evaluation: HumanEval/MBPP-style problems, sandboxed executions, pass@k.

Example:
    >>> from aieval.code import evaluate_code
    >>> result = evaluate_code("problems.jsonl", provider="openai", model="gpt-4o-mini",
    ...                        n=10, k=[1, 5], temperature=0.8,
    ...                        allow_code_execution=True)  # doctest: +SKIP
    >>> result.summary.pass_at_k[1]["value"]  # doctest: +SKIP
"""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports

if TYPE_CHECKING:
    from aieval.code._evalfile import load_code_eval
    from aieval.code._evaluate import (
        CodeEvalResult,
        evaluate_code,
        evaluate_code_async,
        load_completions,
    )
    from aieval.code._problems import CodeProblem, build_program, load_problems
    from aieval.code._scorer import code_passes
    from aieval.code._summary import (
        CodeEvalSummary,
        ProblemResult,
        code_report,
        summarize_samples,
    )

__all__ = [
    "CodeEvalResult",
    "CodeEvalSummary",
    "CodeProblem",
    "ProblemResult",
    "build_program",
    "code_passes",
    "code_report",
    "evaluate_code",
    "evaluate_code_async",
    "load_code_eval",
    "load_completions",
    "load_problems",
    "summarize_samples",
]

# imported on first use, so ``aieval --help`` does not load the runner for ``aieval code``
_EXPORTS = {
    "load_code_eval": "aieval.code._evalfile",
    "CodeEvalResult": "aieval.code._evaluate",
    "evaluate_code": "aieval.code._evaluate",
    "evaluate_code_async": "aieval.code._evaluate",
    "load_completions": "aieval.code._evaluate",
    "CodeProblem": "aieval.code._problems",
    "build_program": "aieval.code._problems",
    "load_problems": "aieval.code._problems",
    "code_passes": "aieval.code._scorer",
    "CodeEvalSummary": "aieval.code._summary",
    "ProblemResult": "aieval.code._summary",
    "code_report": "aieval.code._summary",
    "summarize_samples": "aieval.code._summary",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
