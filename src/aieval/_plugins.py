"""Former home of the built-in plug-in table, now :data:`aieval.core.BUILTIN`."""

from aieval.core._plugins import BUILTIN

__all__ = ["BUILTIN"]
