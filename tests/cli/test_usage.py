"""Usage mistakes print one clear line (plus a --help hint) and exit 2; ``--version`` works.

The commands run in-process (``run_main``); ``python -m aieval --version`` keeps one real
process, and the import checks need a new interpreter's ``sys.modules``.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.cli import Cli

import aieval

AIEVAL = [sys.executable, "-m", "aieval"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param((), "missing command; one of: run,", id="no-command"),
        pytest.param(("rubric",), "missing command; one of: validate", id="no-subcommand"),
        pytest.param(("run",), "Missing argument", id="run-without-file"),
        pytest.param(
            ("run", "e.yaml", "--concurency", "3"),
            "No such option: --concurency",
            id="misspelt-option",
        ),
        pytest.param(("report", "r1", "--format", "pdf"), "'pdf' is not one of", id="bad-format"),
        pytest.param(("runs", "--limit", "many"), "--limit", id="bad-integer"),
        pytest.param(("bogus",), "No such command 'bogus'", id="unknown-command"),
    ],
)
def test_usage_mistake_is_one_line_and_exit_2(
    tmp_path: Path, in_process: Cli, args: tuple[str, ...], message: str
) -> None:
    done = in_process(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) <= 2, done.stderr
    assert lines[0].startswith("error: ") and message in lines[0]
    assert lines[1:] == [] or "--help" in lines[1]
    assert done.stdout == ""


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    # the one real process: ``python -m aieval`` itself
    done = subprocess.run(
        [*AIEVAL, "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"aieval {aieval.__version__}\n"


def test_help_still_lists_the_commands(tmp_path: Path, in_process: Cli) -> None:
    done = in_process("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "run" in done.stdout and "--version" in done.stdout


@pytest.mark.parametrize("command", ["run", "code"])
def test_help_shows_the_ray_extra_in_full(tmp_path: Path, in_process: Cli, command: str) -> None:
    # help text is Rich markup: an unescaped "[ray]" would be read as a tag and vanish
    done = in_process(command, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    compact = re.sub(r"[\s│]", "", done.stdout)  # the help may wrap inside its box
    assert "pipinstall'aieval[ray]'" in compact
    assert "pipinstall'aieval')" not in compact


def test_import_does_not_load_heavy_modules(tmp_path: Path) -> None:
    heavy = ["aiohttp", "numpy", "scipy", "rich", "pydantic", "yaml"]
    code = f"import sys, aieval; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_public_names_still_resolve_lazily() -> None:
    code = (
        "import aieval; from aieval import run, Store, scorer, Example; "
        "print(sorted(set(aieval.__all__) - set(dir(aieval))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_cli_module_does_not_load_the_runner_stack() -> None:
    heavy = ["aiohttp", "numpy", "scipy", "aieval.runner", "aieval.scorers", "aieval.sandbox"]
    code = f"import sys, aieval.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_runner_import_defers_aiohttp_to_the_first_request() -> None:
    code = "import sys; from aieval import run; print('aiohttp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
