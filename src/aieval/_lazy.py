"""Lazy re-exports: a package names its public objects without importing heavy modules up front.

``import aieval`` must stay fast (a CLI ``--help`` or a notebook cell should not pay for aiohttp,
numpy or scipy); a name is imported from its module the first time it is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return a module ``__getattr__`` and ``__dir__`` serving ``exports`` on first use.

    Args:
        package: the package's ``__name__`` (for error messages).
        exports: public name -> the module that defines it (a name equal to its module's last
            component, such as a subpackage, is the module itself).
        namespace: the package's ``globals()``; a resolved name is cached there.
    """

    def __getattr__(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(module_name)
        value = module if module_name.rsplit(".", 1)[-1] == name else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
