import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import spearmanr
from tests.judges.helpers import provider_for, user_text
from tests.support.cli import run_main
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.oracles import cohen_kappa_score

from aieval import Store, run
from aieval.errors import DatasetError
from aieval.judges import calibrate, load_labels, padding_test
from aieval.scorers import llm_judge

# The judge's score is written in the candidate answer ("grade N"), so the test controls it.
JUDGE_SCORES = [8, 3, 5, 9, 2, 7, 6, 4, 10, 1, 5, 7]
HUMAN_SCORES = [8, 4, 5, 9, 2, 6, 6, 3, 10, 1, 7, 7]
_GRADE = re.compile(r"grade (\d+)")


def scripted(body: Any) -> Reply:
    found = _GRADE.search(user_text(body))
    return Reply(json.dumps({"score": int(found.group(1)) if found else 0, "reason": "r"}))


def judged_run(server: OpenAIServer, db: Path, name: str = "judge") -> str:
    server.responder = scripted
    judge = llm_judge("Be right.", provider=provider_for(server), model="judge-v1", name=name)
    rows = [
        {"id": f"s{i}", "prompt": "q", "prediction": f"grade {score}" + " pad" * i}
        for i, score in enumerate(JUDGE_SCORES)
    ]
    return run(name="cal", dataset=rows, scorers=[judge], store=db).id


def write_labels(path: Path, scores: list[int]) -> Path:
    path.write_text(
        "".join(json.dumps({"id": f"s{i}", "score": s}) + "\n" for i, s in enumerate(scores))
    )
    return path


def test_agreement_matches_oracles_and_is_stored_with_drift(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    run_id = judged_run(openai_server, db)
    labels = write_labels(tmp_path / "labels.jsonl", HUMAN_SCORES)
    with Store(db) as store:
        samples = list(store.iter_samples(run_id))
        first = calibrate(samples, labels, store=store, run_id=run_id)
        m = first.metrics
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert m["cohen_kappa"].estimate == pytest.approx(
                cohen_kappa_score(HUMAN_SCORES, JUDGE_SCORES)
            )
            assert m["quadratic_kappa"].estimate == pytest.approx(
                cohen_kappa_score(HUMAN_SCORES, JUDGE_SCORES, weights="quadratic")
            )
            assert m["linear_kappa"].estimate == pytest.approx(
                cohen_kappa_score(HUMAN_SCORES, JUDGE_SCORES, weights="linear")
            )
        assert m["spearman"].estimate == pytest.approx(
            spearmanr(HUMAN_SCORES, JUDGE_SCORES).statistic
        )
        exact = sum(h == j for h, j in zip(HUMAN_SCORES, JUDGE_SCORES, strict=True))
        assert m["exact_agreement"].estimate == pytest.approx(exact / len(JUDGE_SCORES))
        assert m["mae"].estimate == pytest.approx(
            sum(abs(h - j) for h, j in zip(HUMAN_SCORES, JUDGE_SCORES, strict=True)) / 12
        )
        for ci in m.values():
            assert ci.low <= ci.estimate + 1e-9 and ci.estimate <= ci.high + 1e-9
        assert first.model == "judge-v1" and first.prompt_version.startswith("pointwise-")
        assert first.previous is None and first.drift == {}

        second = calibrate(
            samples, write_labels(tmp_path / "l2.jsonl", JUDGE_SCORES), store=store, run_id=run_id
        )
        assert second.metrics["exact_agreement"].estimate == 1.0
        assert (
            second.previous is not None and second.previous.id == store.calibrations("judge")[1].id
        )
        assert second.drift["exact_agreement"] == pytest.approx(1.0 - exact / 12)
        assert len(store.calibrations("judge")) == 2


@pytest.mark.slow
def test_cli_calibrate_prints_agreement_and_drift(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "runs.db"
    judged_run(openai_server, db)
    labels = write_labels(tmp_path / "labels.jsonl", HUMAN_SCORES)
    args = ["calibrate", "cal", str(labels), "--db", str(db)]
    done = run_main(capsys, monkeypatch, *args)
    assert done.returncode == 0, done.stderr
    assert "cohen_kappa" in done.stdout and "quadratic_kappa" in done.stdout
    again = run_main(capsys, monkeypatch, *args, "--json", "--scorer", "judge")
    payload = json.loads(again.stdout)
    assert payload["drift"]["cohen_kappa"] == pytest.approx(0.0)
    assert payload["n"] == len(JUDGE_SCORES)
    missing = str(tmp_path / "missing.jsonl")
    bad = run_main(capsys, monkeypatch, "calibrate", "cal", missing, "--db", str(db))
    assert bad.returncode == 2 and "missing.jsonl" in bad.stderr


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        pytest.param("{not json", "not JSON", id="bad-json"),
        pytest.param('{"score": 3}', "'id'", id="no-id"),
        pytest.param('{"id": "a", "score": "3"}', "'score' must be a number", id="string"),
        pytest.param('{"id": "a", "preference": "c"}', "a, b or tie", id="bad-preference"),
    ],
)
def test_bad_label_lines_name_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "ok", "score": 1}\n' + line + "\n")
    with pytest.raises(DatasetError, match=problem) as info:
        load_labels(path)
    assert "labels.jsonl, line 2" in str(info.value)


def test_length_correlation_is_reported(openai_server: OpenAIServer, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = judged_run(openai_server, db)
    with Store(db) as store:
        report = calibrate(
            list(store.iter_samples(run_id)), write_labels(tmp_path / "l.jsonl", HUMAN_SCORES)
        )
    lengths = [len(f"grade {s}" + " pad" * i) for i, s in enumerate(JUDGE_SCORES)]
    assert report.metrics["length_spearman"].estimate == pytest.approx(
        spearmanr(JUDGE_SCORES, lengths).statistic
    )


async def test_padding_test_catches_a_verbosity_biased_judge(
    openai_server: OpenAIServer,
) -> None:
    def biased(body: Any) -> Reply:
        return Reply(
            json.dumps({"score": 9 if "elaborate" in user_text(body) else 5, "reason": ""})
        )

    openai_server.responder = biased
    judge = llm_judge("Be right.", provider=provider_for(openai_server), model="m", name="pad")
    report = await padding_test(judge, ["q1", "q2"], ["Paris", "Rome"])
    assert report.plain == [0.5, 0.5] and report.padded == [0.9, 0.9]
    assert report.mean_delta == pytest.approx(0.4) and report.inflated_rate == 1.0


def test_half_point_verdicts_round_up_for_kappa() -> None:
    """A median of two verdicts can land on x.5: it counts as the higher point, whatever
    the parity (Python's round would send 6.5 down and 7.5 up)."""
    from aieval._records import SampleRecord, ScoreRecord
    from aieval.judges import HumanLabel

    judge = [6.5, 7.5, 4.5, 8.0, 2.5, 9.5, 3.0, 5.5]
    human = [7, 8, 5, 8, 3, 10, 3, 6]
    samples = [
        SampleRecord(id=f"s{i}", index=i, input="q", prediction="a",
                     scores={"j": ScoreRecord(v / 10, raw=v, metadata={"prompt_version": "p"})})
        for i, v in enumerate(judge)
    ]  # fmt: skip
    labels = [HumanLabel(id=f"s{i}", score=h) for i, h in enumerate(human)]
    m = calibrate(samples, labels, scorer="j").metrics
    assert m["exact_agreement"].estimate == 1.0 and m["cohen_kappa"].estimate == 1.0
    half_even = [round(v) for v in judge]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cohen_kappa_score(human, half_even) < 0.6  # four of eight would disagree
