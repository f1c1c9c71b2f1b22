"""A throwaway git repository for tests that patch a checkout (SWE-style scoring)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

_GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


def committed_repo(path: Path, files: Mapping[str, str]) -> Path:
    """A git repository at ``path`` whose one commit holds ``files`` (relative path: text)."""
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run([*_GIT, "add", "."], cwd=path, check=True)
    subprocess.run([*_GIT, "commit", "-qm", "init"], cwd=path, check=True)
    return path
