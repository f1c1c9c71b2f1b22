"""run(executor="ray") on a real local Ray (the session's 2-CPU cluster): the same stored
results as the local executor, resume after a killed driver, failures per sample, the CLI."""

from __future__ import annotations

import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import Done, run_main
from tests.support.foreground import foreground
from tests.support.held import held_eval
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.ray_fns import (
    base_on_base,
    base_on_base_async,
    dies_on_die,
    echo_or_base,
    echo_with,
    explodes_on_boom,
    keeps_a_lock,
    shout,
)
from tests.support.stored import stored_samples, wait_for_samples
from tests.support.workflows import DEFINITION, make_run

from aieval import Store, run
from aieval.errors import ConfigError
from aieval.runner import RayExecutor, RunSpec, run_spec
from aieval.scorers import exact_match, rouge_l, token_f1

ROOT = Path(__file__).parents[2]


def rows(count: int) -> list[dict[str, Any]]:
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    return [
        {
            "id": f"s{i}",
            "prompt": " ".join(words[: 1 + i % 5]),
            "expected": " ".join(words[i % 3 :]).upper(),
            "prediction": " ".join(words[: 1 + i % 4]),
        }
        for i in range(count)
    ]


def stored(db: Path, run_id: str) -> dict[str, Any]:
    """Each stored sample's outcome: prediction, pass, error and every score."""
    return {
        s.id: (s.prediction, s.passed, s.error, {k: v.value for k, v in s.scores.items()})
        for s in Store(db).iter_samples(run_id)
    }


def test_both_executors_store_the_same_results(ray_cluster: Any, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    options: dict[str, Any] = dict(
        dataset=rows(90), scorers=[exact_match, token_f1, rouge_l], target=shout, store=db
    )
    local = run(name="local", **options)
    remote = run(name="remote", executor="ray", **options)
    assert remote.status == "completed" and remote.summary.samples == 90
    assert stored(db, remote.id) == stored(db, local.id)
    # the means sum in completion order: equal up to the last bit
    assert remote.metrics == pytest.approx(local.metrics, rel=1e-12)
    assert len({v["token_f1"] for *_, v in stored(db, local.id).values()}) > 3
    spec = Store(db).get_run(remote.id).config["spec"]
    assert spec["execution"]["executor"] == "ray"
    assert spec["target"]["function"] == "tests.support.ray_fns:shout"


def test_thresholds_weights_and_row_checks_grade_the_same_on_ray(
    ray_cluster: Any, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    data = rows(24)
    for i, row in enumerate(data):
        if i % 3 == 0:
            row["checks"] = [{"icontains": {"value": "ALPHA", "weight": 2}}, "is_xml"]
    options: dict[str, Any] = dict(
        dataset=data,
        scorers=[token_f1.with_options(threshold=0.2, weight=3), exact_match],
        target=shout,
        store=db,
    )
    local = run(name="local", **options)
    remote = run(name="remote", executor="ray", **options)
    assert remote.status == "completed" and remote.summary.samples == 24
    assert stored(db, remote.id) == stored(db, local.id)
    verdicts = {
        r: {s.id: s.verdict for s in Store(db).iter_samples(r)} for r in (local.id, remote.id)
    }
    assert verdicts[remote.id] == verdicts[local.id]
    assert verdicts[local.id]["s0"].weights == {"token_f1": 3.0, "row:icontains": 2.0}
    assert remote.summary.scorers["row:is_xml"].count == 8


def test_one_spec_runs_the_same_on_ray_as_locally(ray_cluster: Any, tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(60)))
    db = tmp_path / "runs.db"
    spec = RunSpec(
        name="one-spec",
        dataset=str(data),
        scorers=["exact_match", {"token_f1": {"name": "f1"}}, "aieval.scorers:rouge_l"],
        target="tests.support.ray_fns:shout",
        store=str(db),
        concurrency=4,
    )
    local = run_spec(spec)
    remote = run_spec(spec.replace(executor="ray"))
    assert remote.status == "completed" and remote.summary.samples == 60
    assert stored(db, remote.id) == stored(db, local.id)
    assert remote.metrics == pytest.approx(local.metrics, rel=1e-12)
    # what each run stored is the spec it was given, but for where it ran
    by_id = {r: RunSpec.parse(Store(db).get_run(r).config["spec"]) for r in (local.id, remote.id)}
    assert by_id[local.id] == spec
    assert by_id[remote.id] == spec.replace(executor="ray")


def test_a_raising_and_a_dying_scorer_cost_only_their_samples(ray_cluster: Any) -> None:
    data = [
        {"id": f"s{i}", "prompt": "p", "prediction": {3: "boom", 5: "die"}.get(i, "fine")}
        for i in range(12)
    ]
    result = run(
        name="crashy",
        dataset=data,
        scorers=[explodes_on_boom, dies_on_die],
        executor="ray",
        store=False,
    )
    samples = {s.id: s for s in result.samples}
    assert result.status == "completed" and len(samples) == 12
    boom = samples["s3"].scores["explodes_on_boom"]
    assert boom.value is None and "ValueError: the scorer blew up" in (boom.error or "")
    died = samples["s5"]
    # the scorer killed its worker: a crash of the sample's processing, not the target's error
    crash = "sample processing crashed (worker died, 2 attempts): "
    assert died.error is not None and died.error.startswith(crash), died.error
    assert not died.passed and died.scores == {}
    fine = [s for i, s in samples.items() if i not in ("s3", "s5")]
    assert all(s.error is None and s.passed for s in fine)
    assert all(v.value == 1.0 for s in fine for v in s.scores.values())
    assert result.error_count == 2


def test_one_unpicklable_score_costs_only_its_sample(ray_cluster: Any, tmp_path: Path) -> None:
    # 40 samples in one batch (the first holds 64); one score's metadata holds a lock
    data = [
        {"id": f"s{i}", "prompt": "p", "expected": "x", "prediction": "lock" if i == 13 else "x"}
        for i in range(40)
    ]
    db = tmp_path / "runs.db"
    options: dict[str, Any] = dict(dataset=data, scorers=[keeps_a_lock], store=db)
    local = run(name="local", **options)
    remote = run(name="remote", executor="ray", **options)
    assert local.summary.samples == remote.summary.samples == 40
    on_ray, here = stored(db, remote.id), stored(db, local.id)
    assert all(error is None for _, _, error, _ in here.values()), "locally all 40 are scored"
    _, passed, error, scores = on_ray.pop("s13")
    assert error is not None and not passed and scores == {}
    assert error.startswith("the result cannot be sent back from its Ray worker: ")
    assert ".scores['keeps_a_lock'].metadata['lock'] is _thread.lock" in error, error
    here.pop("s13")
    assert on_ray == here, "the 39 other samples are stored with the local executor's values"
    assert remote.error_count == 1


def test_a_base_exception_in_a_scorer_costs_only_its_sample(
    ray_cluster: Any, tmp_path: Path
) -> None:
    # a user's own BaseException subclass in a sync scorer, an async one and the target
    data = [
        {"id": f"s{i}", "prompt": {4: "base", 11: "abase", 16: "tbase"}.get(i, "fine")}
        for i in range(20)
    ]
    result = run(
        name="base",
        dataset=data,
        scorers=[base_on_base, base_on_base_async],
        target=echo_or_base,
        executor="ray",  # 20 samples: one batch (the first holds 64), shared with the failing
        store=tmp_path / "runs.db",
    )
    assert result.status == "completed" and len(result.samples) == 20
    assert {s.id: s.errors for s in result.samples if s.errors} == {
        "s4": {"base_on_base": "scorer 'base_on_base' raised Boom: base"},
        "s11": {"base_on_base_async": "scorer 'base_on_base_async' raised Boom: async base"},
        "s16": {"target": "target raised Boom: target base"},
    }
    scored = [s for s in result.samples if s.id not in ("s4", "s11", "s16")]
    assert len(scored) == 17 and all(s.error is None and s.passed for s in scored)
    assert all(v.value == 1.0 for s in scored for v in s.scores.values())
    assert result.summary.target_errors == 1 and result.error_count == 3


@pytest.mark.slow
def test_a_killed_driver_resumes_with_no_sample_lost_or_twice(
    ray_cluster: Any, tmp_path: Path
) -> None:
    db, n, gate = tmp_path / "runs.db", 200, tmp_path / "gate"
    # the second half waits for the gate, opened only after the kill: the driver cannot finish
    # first, however slowly this test gets to poll on a busy machine
    data = [
        {"id": f"s{i}", "prompt": "p", "expected": "x", "prediction": "x"}
        | ({"hold_until": str(gate)} if i >= n // 2 else {})
        for i in range(n)
    ]
    address = ray_cluster.get_runtime_context().gcs_address
    child = textwrap.dedent(
        f"""
        from aieval import run
        run(name="killme", dataset={data!r}, scorers=["tests.support.ray_fns:held_match"],
            executor="ray", ray_address={address!r}, store={str(db)!r})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=ROOT)
    wait_for_samples(db, 1, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    gate.touch()
    before = stored_samples(db)
    assert 0 < before <= n // 2, "the driver must be killed mid-run"
    resumed = run(
        name="killme",
        dataset=data,
        scorers=["tests.support.ray_fns:held_match"],
        executor="ray",
        store=db,
        resume=True,
    )
    assert resumed.status == "completed" and resumed.summary.samples == n
    ids = [r[0] for r in sqlite3.connect(db).execute("SELECT sample_id FROM samples")]
    assert sorted(ids) == sorted(f"s{i}" for i in range(n)), "a sample was lost or stored twice"
    assert resumed.metrics == {"held_match": 1.0}


SCRIPT = """
import json, sys
from aieval import run, scorer
from aieval.scorers import exact_match


def starts_alike(prediction, expected):
    return float(prediction[:3] == expected[:3])


@scorer
def length_ratio(prediction: str, expected: str) -> float:
    return min(len(prediction), len(expected)) / max(len(prediction), len(expected), 1)


def known_words():
    words = [f"{i:08d}" for i in range(120_000)]  # about 1.3 MB pickled

    def in_list(prediction, expected):
        return 1.0 if prediction.split()[-1] in words else 0.0

    return in_list


def answer(example):
    return " ".join(reversed(str(example.prompt).split()))


rows = [
    {"id": f"s{i}", "prompt": f"{i * 7919 % 150_000:08d} w{i % 5}",
     "expected": f"w{i % 3}" + "x" * (i % 4)}
    for i in range(60)
]
ids = {}
for executor in ("local", "ray"):
    result = run(
        name=executor,
        dataset=rows,
        scorers=[exact_match, starts_alike, length_ratio, lambda p, e: float(p[-1] in "13579"),
                 known_words()],
        target=answer,
        executor=executor,
        ray_address=sys.argv[2] if executor == "ray" else None,
        store=sys.argv[1],
    )
    ids[executor] = result.id
print(json.dumps(ids))
"""


@pytest.mark.slow
def test_script_scorers_lambdas_and_closures_score_on_ray_as_locally(
    ray_cluster: Any, tmp_path: Path
) -> None:
    # a real script: its scorers and target live in __main__, which no worker can import
    (tmp_path / "script.py").write_text(SCRIPT)
    db, address = tmp_path / "runs.db", ray_cluster.get_runtime_context().gcs_address
    done = subprocess.run(
        [sys.executable, "script.py", str(db), address],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ids = json.loads(done.stdout.strip().splitlines()[-1])
    local, remote = stored(db, ids["local"]), stored(db, ids["ray"])
    assert len(remote) == 60 and remote == local
    names = {"exact_match", "starts_alike", "length_ratio", "<lambda>", "in_list"}
    assert all(set(scores) == names and error is None for *_, error, scores in local.values())
    for name in ("in_list", "<lambda>", "length_ratio"):
        assert len({scores[name] for *_, scores in local.values()}) > 1, f"{name} never varies"
    spec = Store(db).get_run(ids["ray"]).config["spec"]
    assert spec["execution"]["executor"] == "ray" and spec["target"]["function"] is None


def _locked_scorer() -> Any:
    lock = threading.Lock()

    def guarded(prediction: str, expected: str) -> float:
        with lock:
            return 1.0

    return guarded


def _locked_target() -> Any:
    lock = threading.Lock()

    def guarded(example: Any) -> str:
        with lock:
            return "x"

    return guarded


@pytest.mark.parametrize(
    ("options", "field", "culprit"),
    [
        pytest.param(
            {"scorers": [_locked_scorer()]},
            r"scorers\[0\]",
            r"\.fn \(captures lock\) is _thread\.lock",
            id="scorer-with-a-lock",
        ),
        pytest.param(
            {"target": _locked_target()},
            "target",
            r"\(captures lock\) is _thread\.lock",
            id="target-with-a-lock",
        ),
    ],
)
def test_what_cannot_be_pickled_is_refused_by_field_and_part(
    options: dict[str, Any], field: str, culprit: str, tmp_path: Path
) -> None:
    kwargs: dict[str, Any] = {"scorers": [exact_match], **options}
    pattern = rf"^{field}: .* cannot be sent to the Ray workers, it cannot be pickled: {culprit}"
    with pytest.raises(ConfigError, match=pattern):
        run(name="refused", dataset=rows(3), executor="ray", store=tmp_path / "r.db", **kwargs)
    assert not Store(tmp_path / "r.db").list_runs(), "a refused run stores nothing"


def test_a_huge_unpicklable_object_is_refused_in_a_short_message(tmp_path: Path) -> None:
    # bound to 50 MiB whose repr alone would be 200 MiB long, and to a lock
    bound = functools.partial(echo_with, bytes(50 * 2**20), threading.Lock())
    with pytest.raises(ConfigError) as refused:
        run(name="huge", dataset=rows(2), scorers=[exact_match], target=bound, executor="ray",
            store=tmp_path / "r.db")  # fmt: skip
    message = str(refused.value)
    assert len(message) < 2000, message[:3000]
    assert message.startswith("target: functools.partial(tests.support.ray_fns.echo_with, ...)")
    assert ".args[1] is _thread.lock" in message
    # locally it runs; what the store keeps about the target it cannot reference is short too
    local = run(name="huge", dataset=rows(2), scorers=[exact_match], target=bound,
                store=tmp_path / "r.db")  # fmt: skip
    why = Store(tmp_path / "r.db").get_run(local.id).config["spec_incomplete"]["target"]
    assert len(why) < 2000 and "functools.partial" in why


def test_a_scorer_too_large_to_send_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aieval.runner import _remote

    monkeypatch.setattr(_remote, "MAX_BY_VALUE_BYTES", 2**20)
    words = [f"{i:08d}" for i in range(200_000)]  # about 2 MB pickled

    def in_words(prediction: str, expected: str) -> float:
        return float(prediction in words)

    with pytest.raises(
        ConfigError, match=r"^scorers\[1\]: .*in_words\) pickles to more than 1 MiB"
    ):
        run(name="big", dataset=rows(2), scorers=[exact_match, in_words], executor="ray",
            store=False)  # fmt: skip


def test_unknown_executors_and_stray_addresses_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"^executor: unknown executor 'dask'; use one of"):
        run(name="x", dataset=rows(2), scorers=[exact_match], executor="dask", store=False)
    with pytest.raises(ConfigError, match=r"^ray_address: applies to executor='ray' only"):
        run(name="x", dataset=rows(2), scorers=[exact_match], ray_address="auto", store=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows(40)))
    (tmp_path / "checks.py").write_text(
        "from aieval import scorer\n\n\n@scorer\n"
        "def has_alpha(prediction: str, _expected: str) -> float:\n"
        "    return 1.0 if 'alpha' in prediction else 0.0\n"
    )
    (tmp_path / "eval.yaml").write_text(
        "name: cli-ray\ndataset: data.jsonl\nimports: [checks.py]\n"
        "scorers:\n  - exact_match\n  - has_alpha\n  - token_f1: {name: f1}\n"
    )
    return tmp_path


def aieval(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    environment = {**os.environ, "AIEVAL_DB": str(cwd / "runs.db"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "aieval", "run", "eval.yaml", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


@pytest.mark.slow
def test_the_cli_runs_an_eval_file_on_ray(ray_cluster: Any, project: Path) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    local = aieval("--quiet", cwd=project)
    remote = aieval("--executor", "ray", "--ray-address", address, "--quiet", cwd=project)
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr[-2000:]
    store = Store(project / "runs.db")
    by_executor = {
        r.config["spec"]["execution"]["executor"]: r for r in store.list_runs(name="cli-ray")
    }
    assert set(by_executor) == {"local", "ray"}
    db = project / "runs.db"
    assert stored(db, by_executor["ray"].id) == stored(db, by_executor["local"].id)
    means = {
        name: {k: v["mean"] for k, v in row.metrics["scorers"].items()}
        for name, row in by_executor.items()
    }
    assert means["ray"] == pytest.approx(means["local"], rel=1e-12)
    assert means["local"]["has_alpha"] == 1.0, "the imported file's scorer ran on the workers"


@pytest.mark.parametrize("joined", [False, True], ids=["own-ray", "joined-cluster"])
@pytest.mark.slow
def test_ctrl_c_on_the_cli_prints_the_hint_and_no_stray_errors(
    ray_cluster: Any, tmp_path: Path, joined: bool
) -> None:
    # the second half waits for a gate opened only after the interrupt: the run cannot finish
    gate = held_eval(tmp_path, name="rk", rows=400, held_from=200)
    # the own-Ray case starts a private Ray, as a plain `--executor ray` on a laptop does
    address = ["--ray-address", ray_cluster.get_runtime_context().gcs_address] if joined else []
    environment = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    command = ["run", "rk.yaml", "--executor", "ray", *address, "--db", "r.db", "-q"]
    child = subprocess.Popen(
        foreground([sys.executable, "-m", "aieval", *command]),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        wait_for_samples(tmp_path / "r.db", 1, child)
        os.killpg(child.pid, signal.SIGINT)  # Ctrl-C: the driver and the Ray it started
        _, err = child.communicate(timeout=180)
    finally:
        gate.touch()  # lets batches still on the shared cluster's workers end
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == 130, err[-3000:]
    assert "interrupted; resume with aieval run rk.yaml --resume --db r.db" in err
    assert 0 < stored_samples(tmp_path / "r.db") <= 200, "the run was stopped midway"
    for noise in ("exception was never retrieved", "TaskCancelledError", "Traceback"):
        assert noise not in err, err[-3000:]


def test_the_cli_refuses_an_unknown_executor_and_a_stray_address(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def aieval_run(*args: str) -> Done:
        env = {"AIEVAL_DB": str(project / "runs.db")}
        return run_main(capsys, monkeypatch, "run", "eval.yaml", *args, cwd=project, env=env)

    unknown = aieval_run("--executor", "dask")
    assert unknown.returncode == 2
    assert "unknown executor 'dask'; use local or ray" in unknown.stderr
    stray = aieval_run("--ray-address", "auto")
    assert stray.returncode == 2 and "add --executor ray" in stray.stderr
    assert not (project / "runs.db").exists(), "nothing ran"


def test_without_the_extra_the_cli_prints_the_install_hint(project: Path) -> None:
    # a sitecustomize that hides ray, as if the extra were not installed
    hide = project / "no_ray"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['ray'] = None\n")
    path = os.pathsep.join(filter(None, [str(hide), os.environ.get("PYTHONPATH")]))
    done = aieval("--executor", "ray", cwd=project, env={"PYTHONPATH": path})
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == ["error: the Ray executor needs the ray extra: pip install 'aieval[ray]'"]
    assert not (project / "runs.db").exists(), "a refused run stores nothing"


@pytest.mark.slow
def test_model_calls_from_workers_share_the_runs_concurrency(
    ray_cluster: Any, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    # held until two calls overlap: a worker slowed by a busy machine could otherwise send its
    # second call only after the first one's 50 ms reply
    openai_server.hold_until_in_flight(2)
    openai_server.responder = lambda body: Reply(body["messages"][-1]["content"], delay=0.05)
    data = [{"id": f"q{i}", "prompt": f"say {i}", "expected": f"say {i}"} for i in range(48)]
    result = run(
        name="calls",
        dataset=data,
        scorers=[exact_match],
        provider="openai-compatible",
        base_url=openai_server.base_url,
        model="m",
        concurrency=4,
        executor=RayExecutor(batch_size=8, max_in_flight=2),
        store=tmp_path / "runs.db",
    )
    assert result.metrics == {"exact_match": 1.0} and result.error_count == 0
    # two batches in flight, each worker gets 4 // 2 calls: never more than 4 at the server
    assert 2 <= openai_server.max_in_flight <= 4
    spec = Store(tmp_path / "runs.db").get_run(result.id).config["spec"]
    assert spec["execution"] == {
        "executor": "ray",
        "ray_address": None,
        "concurrency": 4,
        "telemetry": None,
    }
    calls = [c for s in result.samples for c in s.calls]
    assert len(calls) == 48 and all(c.purpose == "target" and c.model == "m" for c in calls)


@pytest.mark.slow
def test_workflow_grading_runs_on_the_workers(ray_cluster: Any, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(6):
        status = "failed" if i % 3 == 0 else "success"
        (runs / f"r{i}.json").write_text(json.dumps(make_run(overall_status=status)))
    db = tmp_path / "runs.db"
    local = run(name="wf", dataset=runs, scorers=[], workflow=DEFINITION, store=db)
    remote = run(name="wf", dataset=runs, scorers=[], workflow=DEFINITION, store=db, executor="ray")
    extras = {
        name: {s.id: (s.passed, s.extra, s.verdict) for s in Store(db).iter_samples(result.id)}
        for name, result in (("local", local), ("remote", remote))
    }
    assert extras["remote"] == extras["local"]
    assert {v.grade for _, _, v in extras["remote"].values()} == {"A", "F"}
    assert remote.summary.evaluation == local.summary.evaluation


def test_code_evaluation_runs_its_sandboxes_on_the_workers(
    ray_cluster: Any, tmp_path: Path
) -> None:
    from aieval.code import evaluate_code

    problems = [
        {"task_id": f"add/{i}", "prompt": "def add(a, b):\n", "entry_point": "add",
         "test": "def check(f):\n    assert f(1, 2) == 3\n"}
        for i in range(6)
    ]  # fmt: skip
    completions = {f"add/{i}": ["    return a + b\n", "    return a - b\n"] for i in range(6)}
    results = {
        executor: evaluate_code(
            problems,
            n=2,
            k=[1, 2],
            completions=completions,
            allow_code_execution=True,
            store=tmp_path / f"{executor}.db",
            executor=executor,
        )
        for executor in ("local", "ray")
    }
    local, remote = results["local"], results["ray"]
    assert remote.summary.pass_at_k == local.summary.pass_at_k
    assert remote.summary.pass_at_k[1]["value"] == pytest.approx(0.5)
    assert remote.summary.pass_at_k[2]["value"] == pytest.approx(1.0)
    statuses = {s.id: s.scores["code_passes"].value for s in remote.run.samples}
    assert statuses == {s.id: s.scores["code_passes"].value for s in local.run.samples}


def test_aieval_code_takes_the_executor_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps({"task_id": "t/0", "prompt": "def f():\n", "entry_point": "f",
                                    "test": "def check(f):\n    assert f() == 1\n",
                                    "canonical_solution": "    return 1\n"}) + "\n")  # fmt: skip
    base = ["code", str(problems), "--canonical", "--allow-code-execution",
            "--db", str(tmp_path / "c.db")]  # fmt: skip
    bad = run_main(capsys, monkeypatch, *base, "--executor", "dask")
    assert bad.returncode == 2 and "unknown executor 'dask'" in bad.stderr
    stray = run_main(capsys, monkeypatch, *base, "--ray-address", "auto")
    assert stray.returncode == 2 and "add --executor ray" in stray.stderr
    assert not (tmp_path / "c.db").exists(), "nothing ran"
