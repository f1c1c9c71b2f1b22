"""Former home of :class:`Example` and :class:`Score`, now defined in :mod:`aieval.core`.

Kept so that existing imports, and objects pickled by reference to this module, still resolve.
"""

from aieval.core import Example, Score

__all__ = ["Example", "Score"]
