"""What a run records about where it came from, beside its spec: the eval file (path and
digest), the aieval version and the git branch. Reports show it side by side in comparisons."""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._version import __version__

__all__ = ["EvalFileRef", "git_branch", "run_provenance"]


@dataclass(frozen=True, slots=True)
class EvalFileRef:
    """The eval file a run was made from: its path as given and the SHA-256 of its bytes."""

    path: str
    sha256: str

    @classmethod
    def of(cls, path: Path, data: bytes) -> EvalFileRef:
        """The reference of the file at ``path`` whose content is ``data``."""
        return cls(str(path), hashlib.sha256(data).hexdigest())


def run_provenance(eval_file: EvalFileRef | None) -> dict[str, Any]:
    """The run config's provenance keys: ``aieval_version``, ``git_branch`` and ``eval_file``."""
    out: dict[str, Any] = {"aieval_version": __version__, "git_branch": git_branch()}
    if eval_file is not None:
        out["eval_file"] = {"path": eval_file.path, "sha256": eval_file.sha256}
    return out


def git_branch() -> str | None:
    """The branch being evaluated: the pull request's head branch or the pushed branch in
    GitHub Actions (whose checkout is a detached commit), else the checked-out git branch."""
    if os.environ.get("GITHUB_ACTIONS") == "true":
        head = os.environ.get("GITHUB_HEAD_REF")
        if head:
            return head
        if os.environ.get("GITHUB_REF_TYPE") == "branch" and os.environ.get("GITHUB_REF_NAME"):
            return os.environ["GITHUB_REF_NAME"]
    try:
        out = subprocess.run(
            ["git", "symbolic-ref", "--quiet", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    branch = out.stdout.strip()
    return branch if out.returncode == 0 and branch else None
