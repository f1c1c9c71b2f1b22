import aieval.sandbox
import aieval.stats


def test_stats_exports() -> None:
    names = aieval.stats.__all__
    # ruff's order (RUF022): CONSTANTS, then Classes, then functions, each alphabetical
    assert names == sorted(names, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    assert {"mean_pass_at_k", "pass_at_k", "pass_at_k_from_outcomes"} <= set(names)
    assert {"bootstrap_ci", "cohen_kappa", "spearman", "wilson_interval"} <= set(names)
    assert {"noninferiority_test", "NoninferiorityResult", "NoninferiorityMethod"} <= set(names)
    assert all(hasattr(aieval.stats, name) for name in names)


def test_sandbox_exports_sorted_and_present() -> None:
    names = aieval.sandbox.__all__
    # ruff's order (RUF022): CONSTANTS, then Classes, then functions, each alphabetical
    assert names == sorted(names, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    assert {"execute", "ExecutionResult", "SandboxLimits", "run_command"} <= set(names)
    assert all(hasattr(aieval.sandbox, name) for name in names)
