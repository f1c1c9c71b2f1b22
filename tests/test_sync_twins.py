"""The sync/async twins of a function: one signature, the other flavour derived from it."""

from __future__ import annotations

import asyncio
import inspect
import threading

from aieval._sync import blocking_twin, thread_twin
from aieval.sandbox import execute, execute_async
from aieval.scorers import compare_pairwise, compare_pairwise_async


async def _add(a: int, b: int = 1, *, scale: int = 1) -> int:
    return (a + b) * scale


def _thread_name(tag: str) -> str:
    return f"{tag}:{threading.current_thread().name}"


def test_blocking_twin_runs_the_coroutine_with_its_signature() -> None:
    add = blocking_twin(_add, name="add", doc="Add.")
    assert add(2, scale=3) == 9
    assert (add.__name__, add.__doc__) == ("add", "Add.")
    assert inspect.signature(add) == inspect.signature(_add)
    assert not inspect.iscoroutinefunction(add)


def test_blocking_twin_inside_a_running_loop_uses_a_named_thread() -> None:
    async def where() -> str:
        return threading.current_thread().name

    named = blocking_twin(where, name="named", doc="", thread_name="aieval-test")

    async def caller() -> str:
        return named()

    assert asyncio.run(caller()) == "aieval-test"


def test_thread_twin_runs_the_function_off_the_loop_thread() -> None:
    tagged = thread_twin(_thread_name, name="tagged", doc="Tagged.")
    assert inspect.iscoroutinefunction(tagged)
    assert inspect.signature(tagged) == inspect.signature(_thread_name)
    result = asyncio.run(tagged("x"))
    assert result.startswith("x:") and result != f"x:{threading.current_thread().name}"


def test_public_twins_keep_their_names_signatures_and_docs() -> None:
    assert inspect.signature(execute_async) == inspect.signature(execute)
    assert execute_async.__name__ == "execute_async" and execute_async.__doc__
    assert inspect.iscoroutinefunction(execute_async)
    assert inspect.signature(compare_pairwise) == inspect.signature(compare_pairwise_async)
    assert compare_pairwise.__name__ == "compare_pairwise"
    assert "both orders" in (compare_pairwise.__doc__ or "")
    assert not inspect.iscoroutinefunction(compare_pairwise)


def test_run_and_run_spec_take_their_async_twins_keywords() -> None:
    from aieval import run, run_async
    from aieval.runner import RunSpec, run_spec, run_spec_async

    assert inspect.signature(run) == inspect.signature(run_async)
    assert inspect.signature(run_spec) == inspect.signature(run_spec_async)
    rows = [{"prompt": "2+2?", "expected": "4", "prediction": "4"}]
    result = run(name="twin", dataset=rows, scorers=["exact_match"], store=False)
    assert result.metrics == {"exact_match": 1.0}
    spec = RunSpec(name="twin", dataset=rows, scorers=["exact_match"], store=False)
    assert run_spec(spec).metrics == {"exact_match": 1.0}
