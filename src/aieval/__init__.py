"""aieval: evaluate LLM applications and agent workflows, and decide whether a version ships."""

from aieval._types import Example, Score
from aieval.scorers import scorer

__all__ = ["Example", "Score", "scorer"]
__version__ = "0.1.0"
