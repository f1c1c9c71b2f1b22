"""The command line is a package of its own: it uses only the public API of the other aieval
packages, and ``aieval --help`` loads none of the heavy ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from tests.support.modules import imported_modules

import aieval.cli

CLI = Path(aieval.cli.__file__).parent

#: Private modules of the package root the CLI may use: its text helpers (control characters
#: escaped; token, cost and cache figures; tables fitted to the page), shared with the report
#: renderers. The CLI is part
#: of the root's layer; the sub-packages it drives are reached through their public names only.
ROOT_HELPERS = {"aieval._terminal", "aieval._usage_figures", "aieval._tables"}

#: Modules ``--help`` must not load: the runner stack, the statistics, the servers, telemetry.
HEAVY = [
    "aiohttp",
    "numpy",
    "scipy",
    "fastapi",
    "uvicorn",
    "opentelemetry",
    "aieval.runner",
    "aieval.scorers",
    "aieval.sandbox",
    "aieval.report",
    "aieval.server",
    "aieval.push",
    "aieval.telemetry",
    "aieval.judges",
    "aieval.store",
    "aieval.core",
]


def _private_imports(file: Path) -> set[str]:
    """Modules ``file`` imports that are private to an aieval package other than the CLI."""
    found = set()
    for name in imported_modules(file):
        parts = name.split(".")
        if parts[0] != "aieval" or len(parts) < 2 or parts[1] == "cli":
            continue
        if name in ROOT_HELPERS or any(name.startswith(f"{h}.") for h in ROOT_HELPERS):
            continue
        if any(part.startswith("_") and not part.startswith("__") for part in parts[1:]):
            found.add(name)
    return found


def test_the_cli_imports_no_private_module_of_another_package() -> None:
    files = sorted(CLI.glob("*.py"))
    assert len(files) > 5
    imported = set().union(*(imported_modules(f) for f in files))
    assert "aieval.store" in imported and "aieval.errors" in imported  # the check sees them
    private = {f.name: sorted(_private_imports(f)) for f in files if _private_imports(f)}
    assert private == {}


def test_the_check_catches_a_private_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from aieval.runner._ray import import_ray\nfrom aieval.code import _summary\n"
        "import aieval._records\nfrom aieval.cli._print import out\nfrom aieval import errors\n"
    )
    assert _private_imports(module) == {
        "aieval.runner._ray",
        "aieval.runner._ray.import_ray",
        "aieval.code._summary",
        "aieval._records",
    }


@pytest.mark.parametrize(
    "command", [[], ["run"], ["report"], ["compare"], ["show"], ["code"], ["serve"]], ids=str
)
def test_help_loads_no_heavy_module(command: list[str]) -> None:
    # typer itself loads pydantic to parse a command's options, not for the top-level help
    heavy = HEAVY if command else [*HEAVY, "pydantic"]
    code = (
        "import json, sys\nfrom aieval.cli import main\n"
        f"try:\n    main({[*command, '--help']!r})\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout  # the help was printed
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_every_command_is_registered_in_order() -> None:
    group = typer.main.get_command(aieval.cli.app)
    commands: dict[str, object] = getattr(group, "commands", {})
    expected = ["run", "export-otel", "runs", "show", "calibrate", "judges", "report", "compare"]
    expected += ["diff"]
    expected += ["github"]
    expected += ["serve", "push", "code", "code-report", "rubric", "review", "schema", "import"]
    expected += ["mcp", "online"]
    assert list(commands) == expected
