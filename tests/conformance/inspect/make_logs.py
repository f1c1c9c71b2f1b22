"""Write the inspect_ai logs of this folder with inspect_ai itself, offline.

Run ``python make_logs.py`` (inspect_ai installed) to write them again. The model is inspect_ai's
``mockllm/model`` with fixed answers; each answer's usage is set (otherwise mockllm counts tokens
with a tokenizer it downloads), so the logs hold real ``stats.model_usage``, per-sample
``model_usage``, ``total_time`` and ``working_time`` as inspect_ai records them.

* ``qa_baseline.eval``: one right answer of three (``.eval`` format).
* ``qa_baseline.json``: the same log, converted to the ``.json`` format by inspect_ai.
* ``qa_candidate.json``: three right answers (``.json`` format).
* ``qa_partial.eval``: q1 answered, q2 with no output (its solver never asks the model), q3
  errored (its solver raises).

Before a log is kept, this machine's folders are taken out of it: the error tracebacks name files
relative to ``site-packages`` and this folder, and the git revision of the checkout is dropped.
"""

from __future__ import annotations

import json
import re
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import inspect_ai
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import includes, match
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

HERE = Path(__file__).resolve().parent

SAMPLES = [
    Sample(input="What is 2+2?", target="4", id="q1", metadata={"topic": "math"}),
    Sample(input="Capital of France?", target=["Paris", "paris"], id="q2"),
    Sample(input="Largest planet?", target="Jupiter", id="q3", metadata={"topic": "space"}),
]
RIGHT = {"2+2": "4", "France": "Paris", "planet": "Jupiter"}


def _answers(good: set[str]) -> Any:
    """A mockllm output function: right answers for the questions in ``good``."""

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        question = messages[-1].text
        key = next(k for k in RIGHT if k in question)
        text = RIGHT[key] if key in good else "no idea"
        output = ModelOutput.from_content("mockllm", text)
        output.usage = ModelUsage(
            input_tokens=len(question), output_tokens=len(text), total_tokens=len(question + text)
        )
        return output

    return answer


@solver
def _partial() -> Solver:
    """q2 is left without output (the model is never asked); q3 raises, so it is errored."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == "q2":
            return state
        if state.sample_id == "q3":
            raise RuntimeError("tool crashed")
        return await generate(state)

    return solve


def _run(name: str, good: set[str], log_format: str, *, partial: bool = False) -> Path:
    solvers = [_partial()] if partial else [generate()]
    task = Task(dataset=SAMPLES, solver=solvers, scorer=[match(), includes()], name="qa")
    with tempfile.TemporaryDirectory() as tmp:
        (log,) = inspect_eval(
            task,
            model="mockllm/model",
            model_args={"custom_outputs": _answers(good)},
            log_dir=tmp,
            log_format=log_format,  # type: ignore[arg-type]
            display="none",
            fail_on_error=False,
        )
        assert log.status == "success", log.status
        target = HERE / f"{name}.{log_format}"
        write_eval_log(_scrubbed(read_eval_log(log.location)), str(target), format=log_format)  # type: ignore[arg-type]
    return target


def _scrubbed(log: EvalLog) -> EvalLog:
    """``log`` without this machine's folders: tracebacks name files from ``site-packages`` on."""
    data = log.model_dump(mode="json")
    data["eval"]["revision"] = None
    folders = [sysconfig.get_paths()["purelib"], str(HERE), sys.prefix, str(Path.home())]
    pattern = re.compile("|".join(re.escape(f.rstrip("/") + "/") for f in folders))

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            if "traceback_ansi" in value:  # rich wraps long paths: keep the plain text only
                value["traceback_ansi"] = value.get("traceback")
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return pattern.sub("", value) if isinstance(value, str) else value

    text = json.dumps(clean(data))
    for folder in folders:
        assert folder not in text, f"{folder} is still in the log"
    return EvalLog.model_validate_json(text)


def main() -> None:
    baseline = _run("qa_baseline", {"2+2"}, "eval")
    write_eval_log(read_eval_log(str(baseline)), str(HERE / "qa_baseline.json"), format="json")
    _run("qa_candidate", set(RIGHT), "json")
    _run("qa_partial", set(RIGHT), "eval", partial=True)
    sys.stdout.write(f"wrote the logs with inspect_ai {inspect_ai.__version__}\n")


if __name__ == "__main__":
    main()
