"""The explicit opt-in every code-running scorer requires."""

from __future__ import annotations

import os

from aieval.errors import ConfigError

__all__ = ["ALLOW_CODE_EXECUTION_ENV", "require_code_execution"]

#: Environment variable that allows code execution for a whole process when set to ``1``.
ALLOW_CODE_EXECUTION_ENV = "AIEVAL_ALLOW_CODE_EXECUTION"


def require_code_execution(allow: bool, *, what: str) -> None:
    """Raise :class:`ConfigError` unless running generated code was allowed.

    Args:
        allow: the caller's ``allow_code_execution`` argument.
        what: what would run, for the message (e.g. ``"pass_at_k_scorer"``).
    """
    if allow or os.environ.get(ALLOW_CODE_EXECUTION_ENV) == "1":
        return
    raise ConfigError(
        f"{what} runs model-generated code; pass allow_code_execution=True or set "
        f"{ALLOW_CODE_EXECUTION_ENV}=1 after reading docs/sandbox.md (what the bubblewrap "
        "sandbox contains, and what needs a VM)"
    )
