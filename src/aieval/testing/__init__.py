"""Evals as tests: pass policies for runs, helpers, and the pytest plugin.

Inside any test, :func:`assert_run` fails the test when a run misses its policy, with the run's
summary and every reason. With the plugin (registered as the ``pytest11`` entry point ``aieval``),
``eval_*.yaml`` files are collected as tests and ``@pytest.mark.aieval(...)`` checks the run a test
returns; ``pytest -k`` selects them and pytest's exit code (1 on a failed eval) gates CI.

Example:
    >>> from aieval import run
    >>> from aieval.scorers import exact_match
    >>> result = run(name="doc", dataset=[{"prompt": "2+2?", "expected": "4",
    ...              "prediction": "4"}], scorers=[exact_match], store=False)
    >>> assert_run(result, min_pass_rate=1.0)
"""

from aieval.testing._policy import (
    EvalFailed,
    EvalPolicy,
    EvalVerdict,
    assert_run,
    check_run,
    run_eval_file,
)

__all__ = ["EvalFailed", "EvalPolicy", "EvalVerdict", "assert_run", "check_run", "run_eval_file"]
