import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import Done, run_main

from aieval import Store

AIEVAL = [sys.executable, "-m", "aieval"]


def cli(*args: str, cwd: Path, env_db: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``aieval``; its default store is ``cwd/aieval.db`` unless ``env_db`` is given."""
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    if env_db is not None:
        env["AIEVAL_DB"] = str(env_db)
    return subprocess.run(
        [*AIEVAL, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture
def main(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``aieval`` in this process, as :func:`cli` runs it (an interpreter's start costs seconds
    on a busy machine): for what a command prints, stores or refuses."""

    def invoke(*args: str, cwd: Path, env_db: Path | None = None) -> Done:
        monkeypatch.delenv("AIEVAL_DB", raising=False)
        env = {} if env_db is None else {"AIEVAL_DB": str(env_db)}
        return run_main(capsys, monkeypatch, *args, cwd=cwd, env=env)

    return invoke


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "data.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "prompt": f"p{i}",
                    "expected": "yes",
                    "predictions": {"v1": "no", "v2": "yes"},
                }
            )
            + "\n"
            for i in range(25)
        )
    )
    (tmp_path / "checks.py").write_text(
        "from aieval import scorer\n\n\n@scorer\n"
        "def says_yes(prediction: str, _expected: str) -> float:\n"
        "    return 1.0 if 'yes' in prediction else 0.0\n"
    )
    (tmp_path / "eval.yaml").write_text(
        "name: cli-demo\ndataset: data.jsonl\nmodels: [v1, v2]\nimports: [checks.py]\n"
        "scorers:\n  - exact_match\n  - says_yes\n"
        "  - token_f1: {case_sensitive: true, name: f1cs}\n"
    )
    return tmp_path


def test_run_prints_tables_and_writes_the_store(project: Path) -> None:
    """The one ``aieval run`` in a real process of this file."""
    done = cli("run", "eval.yaml", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "cli-demo · v1" in done.stdout and "comparison" in done.stdout
    store = Store(project / "aieval.db")
    runs = store.list_runs(name="cli-demo")
    assert {r.model for r in runs} == {"v1", "v2"}
    v2 = next(r for r in runs if r.model == "v2")
    assert v2.metrics is not None and v2.metrics["scorers"]["exact_match"]["mean"] == 1.0
    assert v2.metrics["scorers"]["f1cs"]["mean"] == 1.0


def test_runs_and_show(project: Path, main: Any) -> None:
    assert main("run", "eval.yaml", "--model", "v1", cwd=project).returncode == 0
    listing = main("runs", cwd=project)
    assert listing.returncode == 0 and "cli-demo" in listing.stdout
    shown = main("show", "cli-demo", "--failed", "--samples", "3", cwd=project)
    assert shown.returncode == 0 and "samples (3 of 25)" in shown.stdout
    as_json = main("show", "cli-demo", "--json", "--samples", "2", cwd=project)
    payload = json.loads(as_json.stdout)
    assert payload["run"]["model"] == "v1" and len(payload["samples"]) == 2


def test_aieval_db_env_is_honoured(project: Path, tmp_path: Path, main: Any) -> None:
    db = tmp_path / "elsewhere" / "runs.db"
    assert main("run", "eval.yaml", "-m", "v2", cwd=project, env_db=db).returncode == 0
    assert Store(db).get_run("cli-demo").model == "v2"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("run", "missing.yaml"), "missing.yaml: eval file not found", id="no-file"),
        pytest.param(("show", "nope"), "no run with id or name 'nope'", id="unknown-run"),
    ],
)
def test_user_errors_are_one_line_without_traceback(
    project: Path, args: tuple[str, ...], message: str, main: Any
) -> None:
    main("run", "eval.yaml", "-m", "v1", cwd=project)
    done = main(*args, cwd=project)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 2


def test_invalid_eval_file_names_the_field(project: Path, main: Any) -> None:
    (project / "bad.yaml").write_text("name: x\ndataset: data.jsonl\nscorers: []\nsetings: {}\n")
    done = main("run", "bad.yaml", cwd=project)
    assert done.returncode == 2
    assert "bad.yaml" in done.stderr and "scorers" in done.stderr and "setings" in done.stderr


def test_llm_judge_without_options_says_how_to_configure_it(project: Path, main: Any) -> None:
    (project / "judge.yaml").write_text("name: x\ndataset: data.jsonl\nscorers: [llm_judge]\n")
    done = main("run", "judge.yaml", cwd=project)
    assert done.returncode == 2
    assert "llm_judge needs its options" in done.stderr and "rubric" in done.stderr


def test_bad_dataset_line_is_reported(project: Path, main: Any) -> None:
    with (project / "data.jsonl").open("a") as handle:
        handle.write("{not json}\n")
    done = main("run", "eval.yaml", cwd=project)
    assert done.returncode == 2
    assert "data.jsonl, line 26: invalid JSON" in done.stderr


def test_python_eval_file(project: Path, main: Any) -> None:
    (project / "eval_py.py").write_text(
        "EVAL = {'name': 'py-eval', 'dataset': 'data.jsonl', 'model': 'v2',"
        " 'scorers': ['exact_match']}\n"
    )
    done = main("run", "eval_py.py", cwd=project)
    assert done.returncode == 0, done.stderr
    assert Store(project / "aieval.db").get_run("py-eval").metrics is not None


def test_runs_without_store_is_clear(tmp_path: Path, main: Any) -> None:
    done = main("runs", cwd=tmp_path)
    assert done.returncode == 2 and "no store at aieval.db" in done.stderr
    assert shutil.which("git") is not None


def test_rubric_validate(tmp_path: Path, main: Any) -> None:
    good = Path(__file__).parents[2] / "examples" / "rubrics" / "fullstack_generation_v1.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "rubric_id: r\nversion: 1\ncriteria:\n  - name: correctness\n    scale: [1, 5]\n"
        "    wieght: 0.3\n"
    )
    ok = main("rubric", "validate", str(good), cwd=tmp_path)
    assert ok.returncode == 0 and "ok" in ok.stdout
    done = main("rubric", "validate", str(good), str(bad), cwd=tmp_path)
    assert done.returncode == 1
    assert "bad.yaml" in done.stdout and "correctness" in done.stdout and "wieght" in done.stdout


def test_resume_finishes_an_interrupted_run(project: Path, main: Any) -> None:
    from aieval import SampleRecord, ScoreRecord
    from aieval.datasets import load_dataset

    store = Store(project / "aieval.db")
    version = load_dataset(project / "data.jsonl", model="v2").scan().version
    run_id = store.create_run(name="cli-demo", model="v2", dataset_hash=version)
    # ... by a process that died (a row owned by this live test process is still running and
    # is not resumed)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    with sqlite3.connect(project / "aieval.db") as db:
        db.execute("UPDATE runs SET pid = ? WHERE id = ?", (int(gone.stdout), run_id))
    assert store.get_run(run_id).status == "interrupted"
    for i in range(5):  # five samples were stored before the process died
        store.record_sample(
            run_id,
            SampleRecord(
                id=f"q{i}",
                index=i,
                input=f"p{i}",
                prediction="yes",
                scores={"exact_match": ScoreRecord(1.0)},
            ),
        )
    done = main("run", "eval.yaml", "-m", "v2", "--resume", cwd=project)
    assert done.returncode == 0, done.stderr
    assert run_id in done.stdout
    assert store.count_samples(run_id) == 25
    assert store.get_run(run_id).status == "completed"


MARKUP = "[bold]loud[/bold] [/] [link=http://x]y[/link]"


def test_names_answers_and_errors_print_literally_never_as_markup(
    tmp_path: Path, main: Any
) -> None:
    from aieval import run
    from aieval.scorers import exact_match

    rows = [{"id": "s[1]", "prompt": "?", "expected": "yes", "prediction": MARKUP}]
    run(name=f"qa {MARKUP}", dataset=rows, scorers=[exact_match], store=tmp_path / "aieval.db")
    listed = main("runs", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "[bold]loud" in listed.stdout
    shown = main("show", f"qa {MARKUP}", "--samples", "5", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr  # a stray "[/]" used to crash the printer
    assert "s[1]" in shown.stdout and "[bold]loud[/bold] [/]" in shown.stdout
    missing = main("report", "no[such]run", cwd=tmp_path)
    assert missing.returncode == 2
    assert "no[such]run" in missing.stderr and missing.stderr.startswith("error: ")
