"""Exit codes of the ``aieval`` commands beyond 0 (ok)."""

__all__ = [
    "EXIT_BELOW_MINIMUM",
    "EXIT_ERRORS",
    "EXIT_FAILED",
    "EXIT_GITHUB",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
]

#: A run failed (the store could not be written), or ``compare`` blocked a candidate.
EXIT_FAILED = 1
#: A usage or configuration error (as click and the ``compare`` contract use).
EXIT_USAGE = 2
#: More samples errored than allowed, a scorer scored nothing, or ``compare`` is inconclusive.
EXIT_ERRORS = 3
#: ``run``: the run missed a minimum (``min_pass_rate``, ``min``); 3 wins when both apply.
EXIT_BELOW_MINIMUM = 4
#: ``github``: the GitHub API refused a call (the evaluation ran and its summary is written).
EXIT_GITHUB = 5
#: Interrupted (Ctrl-C).
EXIT_INTERRUPTED = 130
#: Stopped by SIGTERM (128 + 15, as a shell reports it), handled as an interruption.
EXIT_TERMINATED = 143
