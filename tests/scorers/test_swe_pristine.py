"""A patch cannot rewrite the tests or the test configuration that judge it."""

import subprocess
import textwrap
from pathlib import Path

import pytest
from tests.support.git_repo import committed_repo

from aieval.scorers.swe import run_tests_after_patch, swe_rates

F2P = ["tests/test_calc.py::test_negative"]
P2P = ["tests/test_calc.py::test_add"]
TESTS = "from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n\n" + (
    "def test_negative():\n    assert add(-1, -1) == -2\n"
)
REWRITE_RESULTS = textwrap.dedent(
    """
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome = "passed"
        report.longrepr = None
    """
)


#: The project the patches are judged on (``add`` is wrong for negative numbers).
CALC = {
    "calc.py": "def add(a, b):\n    return a + b if a >= 0 else a - b\n",
    "tests/test_calc.py": TESTS,
    "pyproject.toml": "[project]\nname = 'calc'\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo", CALC)


def _patch(repo: Path, files: dict[str, str]) -> str:
    """The diff that writes ``files`` into ``repo``; the repository is left as it was."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    diff = subprocess.run(
        ["git", "diff", "--cached"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=repo, check=True)
    subprocess.run(["git", "clean", "-qfd"], cwd=repo, check=True)
    return diff


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"conftest.py": REWRITE_RESULTS}, id="root-conftest"),
        pytest.param({"tests/conftest.py": REWRITE_RESULTS}, id="tests-conftest"),
        pytest.param(
            {"tests/test_calc.py": TESTS.replace("assert add(-1, -1) == -2", "assert True")},
            id="edited-test-file",
        ),
        pytest.param(
            {
                "cheat.py": REWRITE_RESULTS,
                "pyproject.toml": "[project]\nname = 'calc'\n"
                "[tool.pytest.ini_options]\naddopts = '-p cheat'\n",
            },
            id="pyproject-plugin",
        ),
        pytest.param(
            {"pytest.ini": "[pytest]\naddopts = -p cheat\n", "cheat.py": REWRITE_RESULTS},
            id="pytest-ini-plugin",
        ),
    ],
)
def test_a_patch_that_rewrites_the_tests_does_not_pass(repo: Path, files: dict[str, str]) -> None:
    outcomes = run_tests_after_patch(
        repo, _patch(repo, files), F2P + P2P, allow_code_execution=True
    )
    result = swe_rates(outcomes, fail_to_pass=F2P, pass_to_pass=P2P)
    assert (result.fail_to_pass, result.pass_to_pass) == (0.0, 1.0), outcomes


def test_an_honest_fix_next_to_the_same_setup_passes(repo: Path) -> None:
    fix = {"calc.py": "def add(a, b):\n    return a + b\n"}
    outcomes = run_tests_after_patch(repo, _patch(repo, fix), F2P + P2P, allow_code_execution=True)
    result = swe_rates(outcomes, fail_to_pass=F2P, pass_to_pass=P2P)
    assert (result.fail_to_pass, result.pass_to_pass) == (1.0, 1.0), outcomes
    assert not list(repo.glob(".aieval-junit-*"))
