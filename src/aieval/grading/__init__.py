"""Grading: hard gates, the formula registry, deterministic grading, rubrics and profiles."""

from aieval.grading._gate_result import GateResult

__all__ = ["GateResult"]
