"""A refused setting is named as the user gave it: ``run()``'s keyword, not its place in the
spec, and an eval file's mistakes, found while its runs are prepared, name the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli import run_main

from aieval import run
from aieval.errors import ConfigError
from aieval.scorers import exact_match

ROWS = [{"input": "a", "expected": "a"}]


@pytest.mark.parametrize(
    ("keyword", "value", "named"),
    [
        ("concurrency", 0, "concurrency"),
        ("timeout", -1, "timeout"),
        ("pass_threshold", 3, "pass_threshold"),
    ],
)
def test_run_names_the_keyword_given(keyword: str, value: float, named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        run(
            name="x", dataset=ROWS, scorers=[exact_match], provider="echo", model="m",
            store=False, **{keyword: value},
        )  # fmt: skip
    message = str(caught.value)
    assert message.startswith(f"run(): {named}: "), message
    assert "execution." not in message and "scoring." not in message


def _eval_file(tmp_path: Path, extra: str) -> Path:
    (tmp_path / "d.jsonl").write_text(
        '{"input": "a", "expected": "a", "predictions": {"m1": "a"}}\n', encoding="utf-8"
    )
    path = tmp_path / "my_eval.yaml"
    path.write_text(f"name: t\ndataset: d.jsonl\nmodels: [m1]\n{extra}", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ("scorers: [no_such_scorer]\n", "unknown scorer 'no_such_scorer'"),
        ("scorers: [exact_match]\ngrader: no_such_grader\n", "no grader named 'no_such_grader'"),
    ],
)
def test_an_eval_files_unknown_part_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    extra: str, said: str,
) -> None:  # fmt: skip
    path = _eval_file(tmp_path, extra)
    done = run_main(
        capsys,
        monkeypatch,
        "run",
        str(path),
        cwd=tmp_path,
        env={"AIEVAL_DB": str(tmp_path / "s.db")},
    )
    assert done.returncode != 0
    assert f"error: {path}: " in done.stderr and said in done.stderr, done.stderr


def test_a_bad_option_over_an_eval_file_says_it_is_an_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _eval_file(tmp_path, "scorers: [exact_match]\n")
    done = run_main(
        capsys, monkeypatch, "run", str(path), "--concurrency", "0", cwd=tmp_path,
        env={"AIEVAL_DB": str(tmp_path / "s.db")},
    )  # fmt: skip
    assert done.returncode != 0
    assert f"{path}: options over its settings: concurrency: " in done.stderr, done.stderr
