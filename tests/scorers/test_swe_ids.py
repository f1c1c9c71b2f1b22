"""SWE-bench test lists against real reports: whitespace-cut ids and non-strict XPASS.

SWE-bench's log parsers keep a test id up to its first whitespace, so its lists hold ids such as
``tests/test_fix.py::test_g[log(photon``; the JUnit XML here is written by pytest itself, the
pytest-json-report document follows that plugin's documented ``tests``/``nodeid``/``outcome``
shape.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aieval.scorers.swe import load_junit_xml, load_pytest_json, swe_rates

TESTS = textwrap.dedent(
    """
    import pytest

    @pytest.mark.parametrize("expr", ["log(photon count)", "exp(x)", "sqrt(two words)"])
    def test_g(expr):
        assert expr != "sqrt(two words)"

    @pytest.mark.xfail(reason="flaky upstream")
    def test_now_fixed():
        assert True

    @pytest.mark.xfail(strict=True, reason="must fail")
    def test_strict():
        assert True
    """
)

CUT_PASSING = "tests/test_fix.py::test_g[log(photon"
CUT_FAILING = "tests/test_fix.py::test_g[sqrt(two"


@pytest.fixture(scope="module")
def junit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("swe")
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_fix.py").write_text(TESTS)
    report = root / "junit.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"],
        cwd=root,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # pytest alone: much faster
        capture_output=True,
        check=False,
        timeout=120,
    )
    return load_junit_xml(report)


@pytest.fixture
def pytest_json(tmp_path: Path) -> dict[str, str]:
    tests = [
        {"nodeid": "tests/test_fix.py::test_g[log(photon count)]", "outcome": "passed"},
        {"nodeid": "tests/test_fix.py::test_g[exp(x)]", "outcome": "passed"},
        {"nodeid": "tests/test_fix.py::test_g[sqrt(two words)]", "outcome": "failed"},
        {"nodeid": "tests/test_fix.py::test_now_fixed", "outcome": "xpassed"},
        {"nodeid": "tests/test_fix.py::test_strict", "outcome": "failed"},
    ]
    file = tmp_path / "report.json"
    file.write_text(json.dumps({"created": 0, "exitcode": 1, "tests": tests}))
    return load_pytest_json(file)


@pytest.mark.parametrize("reader", ["junit", "pytest_json"])
def test_a_cut_parametrised_id_resolves_by_prefix(
    reader: str, request: pytest.FixtureRequest
) -> None:
    outcomes = request.getfixturevalue(reader)
    result = swe_rates(
        outcomes,
        fail_to_pass=[CUT_PASSING, "tests/test_fix.py::test_g[exp(x)]"],
        pass_to_pass=[CUT_FAILING],
    )
    assert (result.fail_to_pass, result.missing) == (1.0, [])
    assert result.pass_to_pass == 0.0 and result.p2p_failed == [CUT_FAILING]


@pytest.mark.parametrize("reader", ["junit", "pytest_json"])
def test_a_cut_that_names_no_test_stays_missing(
    reader: str, request: pytest.FixtureRequest
) -> None:
    outcomes = request.getfixturevalue(reader)
    ghost = "tests/test_fix.py::test_g[log(neutron"
    result = swe_rates(outcomes, fail_to_pass=[ghost], pass_to_pass=[])
    assert result.missing == [ghost] and result.fail_to_pass == 0.0


def test_cut_ids_sharing_a_prefix_all_have_to_pass() -> None:
    outcomes = {"t.py::test_a[x y]": "passed", "t.py::test_a[x z]": "failed"}
    result = swe_rates(outcomes, fail_to_pass=["t.py::test_a[x"], pass_to_pass=[])
    assert result.fail_to_pass == 0.0 and result.missing == []


def test_the_readers_agree_on_xpass(junit: dict[str, str], pytest_json: dict[str, str]) -> None:
    lists = {
        "fail_to_pass": ["tests/test_fix.py::test_now_fixed"],
        "pass_to_pass": ["tests/test_fix.py::test_strict"],
    }
    from_junit, from_json = swe_rates(junit, **lists), swe_rates(pytest_json, **lists)
    assert (from_junit.fail_to_pass, from_junit.pass_to_pass) == (1.0, 0.0)
    assert (from_json.fail_to_pass, from_json.pass_to_pass) == (1.0, 0.0)
