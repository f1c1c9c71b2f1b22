"""Scorers: per-sample metrics returning a float in 0..1.

Built-ins: :func:`exact_match`, :func:`json_valid`, :func:`rouge_l`, :func:`token_f1`,
:func:`bleu` and :func:`chrf` (through sacrebleu, extra ``metrics``) and the
judges :func:`llm_judge`, :func:`rubric_judge`, :func:`pairwise_judge` and
:func:`multi_judge` (calibration lives in :mod:`aieval.judges`). Deterministic checks
(``contains``, ``regex``, ``equals``, ``json_schema``, ``is_sql``, ``latency``, ``cost``,
``python``...; see ``docs/checks.md``) score 1.0 or 0.0 with a reason, ``negate=True``
inverting them, and :func:`similar` compares embeddings. Write your own with
:func:`scorer`. Objective metrics live in the submodules :mod:`~aieval.scorers.retrieval`,
:mod:`~aieval.scorers.tools`, :mod:`~aieval.scorers.state` (final state),
:mod:`~aieval.scorers.rag`, :mod:`~aieval.scorers.swe` and :mod:`~aieval.scorers.code`
(``passes_tests``, which runs generated code in the sandbox); importing this package registers
their gate checks. :func:`trajectory_match` pairs a sample's tool calls with the expected ones,
with partial credit (``docs/tools.md``).
"""

from aieval.scorers import (
    _text_batch,  # noqa: F401  (registers the batch functions)
    code,
    rag,
    retrieval,
    state,
    swe,
    tools,
)
from aieval.scorers._check import Check
from aieval.scorers._check_python import PYTHON_FUNCTIONS, python
from aieval.scorers._checks_calls import cost, finish_reason, latency
from aieval.scorers._checks_format import is_html, is_sql, is_xml, json_schema
from aieval.scorers._checks_text import (
    contains,
    contains_all,
    contains_any,
    equals,
    icontains,
    icontains_all,
    icontains_any,
    levenshtein,
    regex,
    starts_with,
    word_count,
)
from aieval.scorers._expressions import sample_budget
from aieval.scorers._judge import (
    DEFAULT_JUDGE_RUBRIC,
    JUDGE_PROMPT_VERSION,
    VERDICT_SCHEMA,
    llm_judge,
)
from aieval.scorers._judge_call import JudgeClient, delimit, judge_secrets, neutralize
from aieval.scorers._multi_judge import multi_judge
from aieval.scorers._pairwise import (
    INCONSISTENCY_WARNING_RATE,
    PAIRWISE_PROMPT_VERSION,
    PairwiseOutcome,
    PairwiseReport,
    compare_pairwise,
    compare_pairwise_async,
    pairwise_judge,
)
from aieval.scorers._row_options import check_row_check
from aieval.scorers._rubric_judge import RUBRIC_PROMPT_VERSION, rubric_judge
from aieval.scorers._sacrebleu import bleu, chrf
from aieval.scorers._scorer import (
    CONTEXT_PARAMETERS,
    GRADING_KEYS,
    OFF_LOOP_CHARS,
    Scorer,
    get_scorer,
    registered_scorers,
    scorer,
    to_score,
)
from aieval.scorers._similar import similar
from aieval.scorers._text import exact_match, json_valid, rouge_l, token_f1
from aieval.scorers._trajectory import match_trajectory, trajectory_match
from aieval.scorers._verdict import JudgeAnswer, parse_verdict

__all__ = [
    "CONTEXT_PARAMETERS",
    "DEFAULT_JUDGE_RUBRIC",
    "GRADING_KEYS",
    "INCONSISTENCY_WARNING_RATE",
    "JUDGE_PROMPT_VERSION",
    "OFF_LOOP_CHARS",
    "PAIRWISE_PROMPT_VERSION",
    "PYTHON_FUNCTIONS",
    "RUBRIC_PROMPT_VERSION",
    "VERDICT_SCHEMA",
    "Check",
    "JudgeAnswer",
    "JudgeClient",
    "PairwiseOutcome",
    "PairwiseReport",
    "Scorer",
    "bleu",
    "check_row_check",
    "chrf",
    "code",
    "compare_pairwise",
    "compare_pairwise_async",
    "contains",
    "contains_all",
    "contains_any",
    "cost",
    "delimit",
    "equals",
    "exact_match",
    "finish_reason",
    "get_scorer",
    "icontains",
    "icontains_all",
    "icontains_any",
    "is_html",
    "is_sql",
    "is_xml",
    "json_schema",
    "json_valid",
    "judge_secrets",
    "latency",
    "levenshtein",
    "llm_judge",
    "match_trajectory",
    "multi_judge",
    "neutralize",
    "pairwise_judge",
    "parse_verdict",
    "python",
    "rag",
    "regex",
    "registered_scorers",
    "retrieval",
    "rouge_l",
    "rubric_judge",
    "sample_budget",
    "scorer",
    "similar",
    "starts_with",
    "state",
    "swe",
    "to_score",
    "token_f1",
    "tools",
    "trajectory_match",
    "word_count",
]


def __getattr__(name: str) -> object:
    # the judge's parsed answer was also named ``Verdict``, beside the sample's
    # ``aieval.core.Verdict``: the old name still works, with a warning naming the new one
    if name == "Verdict":
        import warnings

        warnings.warn(
            "aieval.scorers.Verdict (a judge's parsed answer) is now aieval.scorers.JudgeAnswer;"
            " aieval.core.Verdict is a sample's verdict",
            DeprecationWarning,
            stacklevel=2,
        )
        return JudgeAnswer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
