"""Which of the candidate's names the tests see: never a builtin's, never the tests' own."""

import textwrap

import pytest

from aieval.sandbox import execute

# Each test passes only if its builtin is the real one; each wrong candidate defines it.
SHADOWED = {
    "len": (
        "def tail(xs):\n    return xs\n\ndef len(x):\n    return 2\n",
        "assert len(tail([1, 2, 3])) == 2",
    ),
    "sorted": (
        "def order(xs):\n    return [5]\n\ndef sorted(x):\n    return [1, 2, 3]\n",
        "assert sorted(order([3, 1, 2])) == [1, 2, 3]",
    ),
    "set": (
        "def unique(xs):\n    return xs + [3]\n\ndef set(x):\n    return 0\n",
        "assert set(unique([1, 1, 2])) == set([1, 2])",
    ),
    "abs": (
        "def half(x):\n    return 0.0\n\ndef abs(x):\n    return 0\n",
        "assert abs(half(3.0) - 1.5) < 1e-9",
    ),
    "range": (
        "def double(x):\n    return x\n\nrange = lambda *args: ()\n",
        "for i in range(10):\n    assert double(i) == 2 * i",
    ),
    "builtins-module": (
        "import builtins\nbuiltins.len = lambda x: 2\n\ndef tail(xs):\n    return xs\n",
        "assert len(tail([1, 2, 3])) == 2",
    ),
}


@pytest.mark.parametrize("name", SHADOWED)
def test_a_candidate_defining_a_builtin_does_not_pass(name: str) -> None:
    program, tests = SHADOWED[name]
    result = execute(program, tests, timeout=10.0)
    assert result.status == "failed", (result.status, result.detail)
    if name != "builtins-module":  # that one patches the worker's builtins, defining nothing
        assert result.detail.endswith(
            f"(the tests call the builtin {name}, not the program's own definition)"
        )


def test_honest_candidates_with_the_same_tests_pass() -> None:
    program = textwrap.dedent(
        """
        def tail(xs):
            return xs[1:]
        def order(xs):
            return sorted(xs)
        def unique(xs):
            return list(set(xs))
        def half(x):
            return x / 2
        def double(x):
            return 2 * x
        """
    )
    tests = [tests for _program, tests in SHADOWED.values()]
    result = execute(program, tests, timeout=10.0)
    assert result.status == "passed", result.detail
    assert (result.tests_passed, result.tests_total) == (len(tests), len(tests))


def test_a_check_style_test_sees_the_entry_point_but_not_the_candidates_builtins() -> None:
    program = "def tail(xs):\n    return xs\n\ndef len(x):\n    return 2\n"
    tests = "def check(candidate):\n    assert len(candidate([1, 2, 3])) == 2\n"
    assert execute(program, tests, entry_point="tail", timeout=10.0).status == "failed"
    honest = "def tail(xs):\n    return xs[1:]\n"
    assert execute(honest, tests, entry_point="tail", timeout=10.0).status == "passed"


def test_an_entry_point_named_like_a_builtin_reaches_check_only() -> None:
    program = "def sorted(xs):\n    return list(reversed(xs))\n"
    tests = (
        "def check(candidate):\n"
        "    assert candidate([1, 2]) == [2, 1]\n"
        "    assert sorted([2, 1]) == [1, 2]\n"
    )
    result = execute(program, tests, entry_point="sorted", timeout=10.0)
    assert result.status == "passed", result.detail


def test_a_name_the_tests_bind_is_never_the_candidates() -> None:
    # The tests' reference is bound only on a branch that is not taken; the old harness filled
    # the gap with the candidate's own "reference".
    program = "def inc(x):\n    return x\n\nreference = inc\n"
    tests = "if False:\n    def reference(x):\n        return x + 1\nassert inc(1) == reference(1)"
    result = execute(program, tests, timeout=10.0)
    assert result.status == "failed", result.detail
    assert "NameError" in result.detail and "reference" in result.detail


def test_a_forged_name_listing_from_the_worker_is_ignored() -> None:
    # The candidate rewrites how the worker lists its names, offering a builtin and a dunder.
    program = textwrap.dedent(
        """
        import sys
        worker = sys.modules["__main__"]
        def _describe(namespace):
            return {
                "len": {"kind": "callable"},
                "__builtins__": {"kind": "value", "value": ["dict", []]},
                "tail": {"kind": "callable"},
            }
        worker._describe = _describe
        def len(x):
            return 2
        def tail(xs):
            return xs
        """
    )
    result = execute(program, "assert len(tail([1, 2, 3])) == 2", timeout=10.0)
    assert result.status == "failed", result.detail
    assert "assertion failed" in result.detail


def test_mbpp_style_tests_still_see_the_functions_they_call() -> None:
    program = "def double(x):\n    return 2 * x\n\ndef abs(x):\n    return 0\n\nLIMIT = 3\n"
    tests = ["assert double(2) == 4", "assert double(LIMIT) == 6", "assert abs(-2) == 2"]
    result = execute(program, tests, timeout=10.0)
    assert result.status == "passed", result.detail
