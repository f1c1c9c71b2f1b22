"""Code evaluation eval files: YAML with ``task: code``.

Example file::

    task: code
    name: humaneval-mini
    problems: problems.jsonl        # relative to the eval file
    n: 10
    k: [1, 5]
    provider: openai
    model: gpt-4o-mini
    temperature: 0.8
    workers: 4
    limits: {timeout: 5, memory_mb: 512, max_disk_mb: 64}
    allow_code_execution: true
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aieval._yaml import load_yaml_file
from aieval.errors import ConfigError
from aieval.sandbox import SandboxLimits

__all__ = ["load_code_eval"]

_OPTIONS = frozenset(
    {
        "name", "n", "k", "provider", "model", "base_url", "temperature", "completions",
        "canonical", "allow_code_execution", "workers", "prompt_template", "system_prompt",
        "limit",
    }
)  # fmt: skip
_PATHS = ("problems", "completions")


def load_code_eval(path: str | Path) -> dict[str, Any]:
    """Read a ``task: code`` eval file into :func:`aieval.code.evaluate_code` keyword options.

    Raises:
        ConfigError: the file is unreadable, not ``task: code``, or has an unknown or bad key
            (named).
    """
    file = Path(path)
    data = load_yaml_file(file, error=ConfigError)
    if not isinstance(data, dict) or data.get("task") != "code":
        raise ConfigError(f"{file}: a code eval file is a mapping with 'task: code'")
    unknown = sorted(set(data) - _OPTIONS - set(_PATHS) - {"task", "limits"})
    if unknown:
        raise ConfigError(
            f"{file}: unknown key(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(_OPTIONS | set(_PATHS) | {'task', 'limits'}))}"
        )
    if "problems" not in data:
        raise ConfigError(f"{file}: 'problems' (the problems JSONL) is required")
    options = {key: data[key] for key in _OPTIONS | set(_PATHS) if key in data}
    for key in _PATHS:
        if isinstance(options.get(key), str):
            options[key] = file.parent / options[key]
    limits = data.get("limits")
    if limits is not None:
        if not isinstance(limits, dict):
            raise ConfigError(f"{file}: 'limits' must be a mapping of sandbox limits")
        try:
            options["limits"] = SandboxLimits(**limits)
        except TypeError as exc:
            raise ConfigError(f"{file}: limits: {exc}") from None
    options.setdefault("name", file.stem)
    return options
