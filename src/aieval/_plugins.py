"""Former home of the built-in plug-in table, now :data:`aieval.core.BUILTIN`."""

from aieval.core import BUILTIN

__all__ = ["BUILTIN"]
