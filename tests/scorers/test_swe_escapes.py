"""Patches that cheat through pytest's configuration, test spellings or the report do not pass.

Each case is a real patch applied to a small repository and run in the sandbox.
"""

import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from tests.scorers.test_swe_pristine import CALC, F2P, P2P, REWRITE_RESULTS, TESTS, _patch
from tests.support.git_repo import committed_repo

from aieval.errors import ConfigError
from aieval.scorers._swe_pristine import restore_test_setup
from aieval.scorers.swe import run_tests_after_patch, swe_rates

FIX = {"calc.py": "def add(a, b):\n    return a + b\n"}
PLUGIN = {"evilplug.py": REWRITE_RESULTS}
ENTRY_POINT = {
    "evilplug-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evilplug\nVersion: 1.0\n",
    "evilplug-1.0.dist-info/entry_points.txt": "[pytest11]\nevilplug = evilplug\n",
}
EDITED = {"tests/test_calc.py": TESTS.replace("assert add(-1, -1) == -2", "assert True")}
# The report rewritten at exit, wherever the code can find it: the command line, the
# environment, any XML file under the working directory (after trying to open up the
# report directory).
FORGE_AT_EXIT = textwrap.dedent(
    """
    import atexit, os, re, sys

    def add(a, b):
        return a + b if a >= 0 else a - b

    FORGED = (
        '<testsuite><testcase classname="tests.test_calc" name="test_add"/>'
        '<testcase classname="tests.test_calc" name="test_negative"/></testsuite>'
    )

    def _forge():
        with open("/proc/self/cmdline", "rb") as fh:
            seen = " ".join(sys.argv) + fh.read().decode(errors="replace").replace("\\0", " ")
        seen += " ".join(os.environ.values())
        paths = re.findall(r"--junitxml=(\\S+)", seen)
        for name in os.listdir("."):
            try:
                os.chmod(name, 0o777)
            except OSError:
                pass
        for folder, _dirs, files in os.walk("."):
            paths += [os.path.join(folder, f) for f in files if f.endswith(".xml")]
        for path in paths:
            try:
                with open(path, "w") as fh:
                    fh.write(FORGED)
            except OSError:
                pass

    atexit.register(_forge)
    """
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo", CALC)


def _rates(repo: Path, files: dict[str, str], tests: list[str]) -> tuple[float, float]:
    outcomes = run_tests_after_patch(repo, _patch(repo, files), tests, allow_code_execution=True)
    result = swe_rates(outcomes, fail_to_pass=F2P, pass_to_pass=P2P)
    return result.fail_to_pass, result.pass_to_pass


CHEATS = {
    "dot-pytest-ini": {".pytest.ini": "[pytest]\naddopts = -p evilplug\n", **PLUGIN},
    "pytest-toml": {"pytest.toml": '[pytest]\naddopts = ["-p", "evilplug"]\n', **PLUGIN},
    "dot-pytest-toml": {".pytest.toml": '[pytest]\naddopts = ["-p", "evilplug"]\n', **PLUGIN},
    "nested-pytest-ini": {"tests/pytest.ini": "[pytest]\naddopts = -p evilplug\n", **PLUGIN},
    "nested-conftest": {"tests/sub/conftest.py": REWRITE_RESULTS, "tests/sub/__init__.py": ""},
    "entry-point-plugin": {**ENTRY_POINT, **PLUGIN},
    "junit-rewritten-at-exit": {"calc.py": FORGE_AT_EXIT},
}


@pytest.mark.parametrize("files", CHEATS.values(), ids=CHEATS.keys())
def test_a_patch_that_cheats_does_not_pass(repo: Path, files: dict[str, str]) -> None:
    assert _rates(repo, files, F2P + P2P) == (0.0, 1.0)


SPELLINGS = {
    "directory": ["tests"],
    "dot-slash": ["./" + test for test in F2P + P2P],
    "double-slash": [test.replace("/", "//") for test in F2P + P2P],
    "file": ["tests/test_calc.py"],
}


@pytest.mark.parametrize("tests", SPELLINGS.values(), ids=SPELLINGS.keys())
@pytest.mark.slow
def test_a_named_test_is_restored_however_it_is_spelled(repo: Path, tests: list[str]) -> None:
    assert _rates(repo, EDITED, tests) == (0.0, 1.0)
    assert _rates(repo, FIX, tests) == (1.0, 1.0)  # an honest fix still passes


def test_a_named_directory_is_restored_whole(repo: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    subprocess.run(["cp", "-a", str(repo), str(checkout)], check=True)
    (checkout / "tests" / "test_calc.py").unlink()
    (checkout / "tests" / "test_new.py").write_text("def test_x():\n    pass\n")
    (checkout / "tests" / "helper").mkdir()
    (checkout / "calc.py").write_text("changed = True\n")
    touched = restore_test_setup(repo, checkout, ["./tests/"])
    assert sorted(touched) == ["tests/helper", "tests/test_calc.py", "tests/test_new.py"]
    assert sorted(os.listdir(checkout / "tests")) == ["test_calc.py"]
    assert (checkout / "tests" / "test_calc.py").read_text() == TESTS
    assert (checkout / "calc.py").read_text() == "changed = True\n"  # the patch's own change


def test_a_deleted_configuration_file_is_restored(repo: Path, tmp_path: Path) -> None:
    (repo / "tests" / "pytest.ini").write_text("[pytest]\nxfail_strict = true\n")
    checkout = tmp_path / "checkout"
    subprocess.run(["cp", "-a", str(repo), str(checkout)], check=True)
    (checkout / "tests" / "pytest.ini").unlink()
    (checkout / "tests" / "conftest.py").symlink_to("../calc.py")
    touched = restore_test_setup(repo, checkout, F2P)
    assert sorted(touched) == ["tests/conftest.py", "tests/pytest.ini"]
    assert (checkout / "tests" / "pytest.ini").read_text() == "[pytest]\nxfail_strict = true\n"
    assert not os.path.lexists(checkout / "tests" / "conftest.py")


@pytest.mark.parametrize("test", [".", "./", "", "/etc/x.py::t", "../other/test_x.py::t"])
def test_a_test_outside_the_repository_or_the_whole_of_it_is_refused(repo: Path, test: str) -> None:
    with pytest.raises(ConfigError, match="inside the repository"):
        run_tests_after_patch(repo, _patch(repo, FIX), [test], allow_code_execution=True)
