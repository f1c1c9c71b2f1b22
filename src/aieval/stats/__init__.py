"""Statistics: pass@k estimators (aggregation and intervals live here too)."""

from aieval.stats._passk import mean_pass_at_k, pass_at_k, pass_at_k_from_outcomes

__all__ = ["mean_pass_at_k", "pass_at_k", "pass_at_k_from_outcomes"]
