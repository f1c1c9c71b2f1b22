"""The inconclusive score rule's sample sizes, against the formula docs/reports.md states.

Two runs are stored in a real SQLite file and compared by ``aieval compare`` in a fresh
interpreter; the expected sizes are computed here from the raw values, with SciPy's normal
quantiles: n = ceil(((z(1 - alpha) + z(power)) * sd / (mean + margin))^2) at the observed
difference, and with the mean set to 0 for a candidate only as good as the baseline.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from aieval import run, scorer

MARGIN, ALPHA, POWER = 1.0, 0.05, 0.8


@scorer
def stated(prediction: str, _expected: str) -> float:
    """The score the answer states: the runs' per-example values are chosen by the test."""
    return float(prediction)


def _store_runs(db: Path, base: np.ndarray, cand: np.ndarray) -> tuple[str, str]:
    ids = []
    for name, values in (("base", base), ("cand", cand)):
        rows = [
            {"id": f"e{i}", "prompt": f"question {i}", "expected": "-", "prediction": repr(v)}
            for i, v in enumerate(values.tolist())
        ]
        ids.append(run(name=f"hint-{name}", dataset=rows, scorers=[stated], store=db).id)
    return ids[0], ids[1]


def _compare(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AIEVAL_DB": str(db), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "aieval", "compare", *args],
        capture_output=True, text=True, env=env, timeout=180, check=False,
    )  # fmt: skip


def test_the_sample_size_hint_follows_its_documented_formula(tmp_path: Path) -> None:
    # 60 examples, the candidate about 6 points better on average with a wide spread: too few
    # examples to show non-inferiority at a 1-point margin, enough for the paired-count rule.
    rng = np.random.default_rng(2024)
    base = np.round(rng.uniform(0.0, 1.0, size=60), 4)
    cand = np.round(np.clip(base + rng.normal(0.06, 0.6, size=60), 0.0, 1.0), 4)
    db = tmp_path / "runs.db"
    baseline, candidate = _store_runs(db, base, cand)

    done = _compare(db, baseline, candidate, "--format", "json")
    assert done.returncode == 3, done.stdout + done.stderr  # inconclusive
    rule = next(
        r for r in json.loads(done.stdout)["decision"]["rules"]
        if r["rule"] == "weighted_score_noninferior"
    )  # fmt: skip
    details, reason = rule["details"], rule["reason"]
    assert rule["outcome"] == "inconclusive", reason

    d = 100.0 * (cand - base)  # weighted score: 100 x the one scorer's value
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    assert mean > 0.0  # an observed improvement, not yet decisive
    z = norm.ppf(1.0 - ALPHA) + norm.ppf(POWER)
    at_observed = math.ceil((z * sd / (mean + MARGIN)) ** 2)
    if_equal = math.ceil((z * sd / MARGIN) ** 2)
    assert at_observed < if_equal

    assert details["examples_needed_at_observed_difference"] == at_observed
    assert details["examples_needed_if_equal"] == if_equal
    assert details["sd_delta"] == pytest.approx(sd)
    assert details["mean_delta"] == pytest.approx(mean)
    assert details["planning_power"] == POWER and details["alpha"] == ALPHA
    assert "n_needed" not in details  # no field whose meaning is left to guess

    assert (
        f"if the observed difference ({mean:+.2f}) and spread (sd {sd:.2f}) hold, about "
        f"{at_observed:,} paired examples in all would show non-inferiority at margin 1 "
        f"(80% power, one-sided alpha 0.05)"
    ) in reason
    assert f"a candidate only as good as the baseline would need about {if_equal:,}" in reason

    # the terminal report says the same
    text = _compare(db, baseline, candidate)
    assert text.returncode == 3, text.stderr
    assert f"about {at_observed:,} paired examples in all" in " ".join(text.stdout.split())
