import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.git_repo import committed_repo

from aieval.errors import ConfigError, DatasetError
from aieval.scorers import swe
from aieval.scorers.swe import (
    load_junit_xml,
    load_pytest_json,
    load_swebench_report,
    patch_applies,
    run_tests_after_patch,
    swe_rates,
)

# Imported under other names: pytest would collect names starting with "test".
f2p_gate = swe.tests_fail_to_pass_all_green
p2p_gate = swe.tests_pass_to_pass_threshold_met

PROJECT_TESTS = textwrap.dedent(
    """
    import pytest
    from calc import add

    def test_add():
        assert add(2, 2) == 4

    class TestEdge:
        @pytest.mark.parametrize("x", [0, 1])
        def test_identity(self, x):
            assert add(x, 0) == x

        def test_negative(self):
            assert add(-1, -1) == -2

    @pytest.mark.skip(reason="not today")
    def test_skipped():
        pass

    @pytest.mark.xfail
    def test_known_bug():
        assert False
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    calc = "def add(a, b):\n    return a + b if a >= 0 else a - b\n"
    return committed_repo(tmp_path / "repo", {"calc.py": calc, "tests/test_calc.py": PROJECT_TESTS})


GOOD_PATCH = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a + b if a >= 0 else a - b
+    return a + b
"""
BAD_PATCH = GOOD_PATCH.replace("-    return a + b if a >= 0", "-    return a * b if a >= 0")
F2P = ["tests/test_calc.py::TestEdge::test_negative"]
P2P = [
    "tests/test_calc.py::test_add",
    "tests/test_calc.py::TestEdge::test_identity[0]",
    "tests/test_calc.py::TestEdge::test_identity[1]",
]


def test_junit_from_real_pytest_run(project: Path, tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    # the project's tests need only pytest itself: loading every installed plugin (hypothesis,
    # schemathesis, aieval's own...) would cost the run most of its time
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"],
        cwd=project,
        env=env,
        capture_output=True,
    )
    outcomes = load_junit_xml(report)
    assert outcomes["tests.test_calc::test_add"] == "passed"
    assert outcomes["tests.test_calc::test_skipped"] == "skipped"
    assert outcomes["tests.test_calc::test_known_bug"] == "xfailed"
    result = swe_rates(outcomes, fail_to_pass=F2P, pass_to_pass=P2P)
    assert (result.fail_to_pass, result.pass_to_pass, result.missing) == (0.0, 1.0, [])
    gate = f2p_gate(result)
    assert not gate.passed and "test_negative" in gate.reason
    assert p2p_gate(result).passed


def test_swebench_report(tmp_path: Path) -> None:
    report = {
        "astropy__astropy-12907": {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": True,
            "resolved": False,
            "tests_status": {
                "FAIL_TO_PASS": {"success": ["t.py::test_a"], "failure": []},
                "PASS_TO_PASS": {
                    "success": [f"t.py::test_p{i}" for i in range(19)],
                    "failure": ["t.py::test_broken"],
                },
                "FAIL_TO_FAIL": {"success": [], "failure": []},
                "PASS_TO_FAIL": {"success": [], "failure": []},
            },
        }
    }
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    result = load_swebench_report(path)
    assert result.fail_to_pass == 1.0 and result.pass_to_pass == pytest.approx(19 / 20)
    assert f2p_gate(result).passed
    assert p2p_gate(result).passed
    strict = p2p_gate(result, threshold=0.99)
    assert not strict.passed and "t.py::test_broken" in strict.reason
    with pytest.raises(DatasetError, match="no tests_status"):
        load_swebench_report(path, instance_id="django__django-1")


def test_pytest_json_report(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    tests = [
        {"nodeid": "tests/test_calc.py::TestEdge::test_negative", "outcome": "passed"},
        {"nodeid": "tests/test_calc.py::test_add", "outcome": "failed"},
        {"nodeid": "tests/test_calc.py::TestEdge::test_identity[0]", "outcome": "passed"},
    ]
    path.write_text(json.dumps({"created": 1.0, "exitcode": 1, "tests": tests}))
    result = swe_rates(load_pytest_json(path), fail_to_pass=F2P, pass_to_pass=P2P)
    assert result.fail_to_pass == 1.0
    assert result.pass_to_pass == pytest.approx(1 / 3)
    assert result.missing == [P2P[2]]
    assert set(result.p2p_failed) == {P2P[0], P2P[2]}


@pytest.mark.parametrize(
    ("content", "loader", "match"),
    [
        pytest.param("{", load_pytest_json, "not valid JSON", id="json-broken"),
        pytest.param("{}", load_pytest_json, "tests", id="json-no-tests"),
        pytest.param("<testsuite>", load_junit_xml, "JUnit", id="xml-broken"),
        pytest.param('{"a": {}, "b": {}}', load_swebench_report, "instance_id", id="ambiguous"),
    ],
)
def test_bad_reports_name_the_file(tmp_path: Path, content: str, loader, match: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad_report"
    path.write_text(content)
    with pytest.raises(DatasetError, match=match) as info:
        loader(path)
    assert "bad_report" in str(info.value)


@given(st.lists(st.sampled_from(["passed", "failed", "error", "skipped"]), max_size=12))
def test_rates_count_passes(statuses: list[str]) -> None:
    ids = [f"t.py::test_{i}" for i in range(len(statuses))]
    result = swe_rates(dict(zip(ids, statuses, strict=True)), fail_to_pass=ids, pass_to_pass=[])
    want = statuses.count("passed") / len(ids) if ids else 1.0
    assert result.fail_to_pass == pytest.approx(want)
    assert result.pass_to_pass == 1.0


def test_patch_applies(project: Path) -> None:
    good = patch_applies(GOOD_PATCH, project)
    bad = patch_applies(BAD_PATCH, project)
    assert good.passed and good.name == "patch_applies"
    assert not bad.passed and "git apply --check failed" in bad.reason
    assert not patch_applies("", project).passed
    assert "return a + b if a >= 0" in (project / "calc.py").read_text()


def test_run_tests_after_patch(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIEVAL_ALLOW_CODE_EXECUTION", raising=False)
    with pytest.raises(ConfigError, match="allow_code_execution"):
        run_tests_after_patch(project, GOOD_PATCH, F2P)
    outcomes = run_tests_after_patch(project, GOOD_PATCH, F2P + P2P, allow_code_execution=True)
    result = swe_rates(outcomes, fail_to_pass=F2P, pass_to_pass=P2P)
    assert (result.fail_to_pass, result.pass_to_pass) == (1.0, 1.0)
    with pytest.raises(ConfigError, match="does not apply"):
        run_tests_after_patch(project, BAD_PATCH, F2P, allow_code_execution=True)
