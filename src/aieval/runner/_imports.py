"""Python files named by a run (an eval file's ``imports:``), imported so their scorers register."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from aieval._files import readable
from aieval.errors import ConfigError

__all__ = ["import_file", "is_imported_file"]

_PREFIX = "aieval_user_"


def import_file(file: str | Path) -> ModuleType:
    """Import a Python file as a module of its own (its ``@scorer`` functions register)."""
    path = readable(Path(file), "imports")
    if not path.is_file():
        raise ConfigError(f"{path}: scorer file not found")
    # the same name in every process (workers import the same files)
    digest = hashlib.blake2b(str(path.resolve()).encode(), digest_size=8).hexdigest()
    name = f"{_PREFIX}{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot import this file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def is_imported_file(module: str | None) -> bool:
    """Whether ``module`` is the name :func:`import_file` gave a file."""
    return module is not None and module.startswith(_PREFIX)
