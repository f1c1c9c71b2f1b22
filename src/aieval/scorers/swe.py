"""SWE-style metrics (profile A): FAIL_TO_PASS / PASS_TO_PASS from test reports, patch gates.

Test reports are read from the SWE-bench harness ``report.json``, JUnit XML (``pytest
--junitxml``) and pytest-json-report files. Test ids are matched loosely, so
``tests/test_x.py::TestA::test_b[1]`` (pytest node id) and JUnit's ``classname="tests.test_x.TestA"
name="test_b[1]"`` name the same test.

SWE-bench's log parsers cut a test id at its first whitespace, so its ``FAIL_TO_PASS`` and
``PASS_TO_PASS`` lists hold ids such as ``tests/test_fix.py::test_g[log(photon`` for the test
``test_g[log(photon count)]``. A listed id that no report test carries exactly is resolved the
way the harness matches it: against the report's ids cut at their first whitespace. When several
report tests share that cut id, all of them must pass (the harness keeps whichever it parsed
last; aieval does not let a failing one hide behind a passing one).

A non-strict XPASS (an ``xfail``-marked test that passed) counts as passed in every reader:
pytest's JUnit XML writes it as a plain pass, and the pytest-json reader's ``xpassed`` outcome is
read the same way. A strict XPASS is a failure in both.

Example:
    >>> result = swe_rates({"t::a": "passed", "t::b": "failed"},
    ...                    fail_to_pass=["t::a"], pass_to_pass=["t::b"])
    >>> result.fail_to_pass, result.pass_to_pass
    (1.0, 0.0)
"""

from __future__ import annotations

import json
import posixpath
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval import grading as grading_gates
from aieval.errors import ConfigError, DatasetError
from aieval.grading import GateResult, register_gate
from aieval.sandbox import SandboxLimits, require_code_execution, run_command
from aieval.scorers._swe_pristine import named_test_paths, pytest_argv, restore_test_setup

__all__ = [
    "SweResult",
    "load_junit_xml",
    "load_pytest_json",
    "load_swebench_report",
    "patch_applies",
    "run_tests_after_patch",
    "swe_rates",
    "tests_fail_to_pass_all_green",
    "tests_pass_to_pass_threshold_met",
]

_PASSING = frozenset({"passed", "xfailed", "xpassed"})


@dataclass(slots=True, frozen=True)
class SweResult:
    """FAIL_TO_PASS and PASS_TO_PASS outcomes of one instance.

    Attributes:
        fail_to_pass: passed FAIL_TO_PASS tests / all of them (1.0 when there are none).
        pass_to_pass: passed PASS_TO_PASS tests / all of them (1.0 when there are none).
        f2p_failed: FAIL_TO_PASS tests that did not pass (missing from the report included).
        p2p_failed: PASS_TO_PASS tests that did not pass (missing included).
        missing: listed tests the report does not mention.
        f2p_total: FAIL_TO_PASS tests listed.
        p2p_total: PASS_TO_PASS tests listed.
    """

    fail_to_pass: float
    pass_to_pass: float
    f2p_failed: list[str] = field(default_factory=list)
    p2p_failed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    f2p_total: int = 0
    p2p_total: int = 0


def _normalize_id(test_id: str) -> str:
    """One spelling for pytest node ids and JUnit ``classname.name`` pairs."""
    head, bracket, params = test_id.partition("[")
    path, sep, rest = head.partition("::")
    if "/" in path or "\\" in path:  # one spelling of a path: no ./, no //
        path = posixpath.normpath(path.replace("\\", "/"))
    head = (path + sep + rest).replace("::", ".").replace("/", ".").replace("\\", ".")
    head = head.replace(".py.", ".")
    return head + bracket + params


def _cut_at_whitespace(test_id: str) -> str:
    """The id as SWE-bench's log parsers record it: up to its first whitespace."""
    parts = test_id.split(maxsplit=1)
    return parts[0] if parts else test_id


def swe_rates(
    outcomes: Mapping[str, str], *, fail_to_pass: Sequence[str], pass_to_pass: Sequence[str]
) -> SweResult:
    """Compute the two rates of seed 4.1 from per-test outcomes.

    Args:
        outcomes: test id -> ``passed``/``failed``/``error``/``skipped``/``xfailed``/...
        fail_to_pass: tests the patch must fix.
        pass_to_pass: tests the patch must not break.
    """
    normalized = {_normalize_id(k): v for k, v in outcomes.items()}
    truncated: dict[str, list[str]] = {}
    for key, outcome in normalized.items():
        cut = _cut_at_whitespace(key)
        if cut != key:
            truncated.setdefault(cut, []).append(outcome)

    def resolve(test: str) -> list[str] | None:
        """The outcomes a listed id names: its own, or those of the tests it is a cut of."""
        key = _normalize_id(test)
        if key in normalized:
            return [normalized[key]]
        return truncated.get(key)

    missing = [t for t in [*fail_to_pass, *pass_to_pass] if resolve(t) is None]

    def failed(tests: Sequence[str]) -> list[str]:
        return [t for t in tests if not all(o in _PASSING for o in resolve(t) or ["missing"])]

    f2p_failed, p2p_failed = failed(fail_to_pass), failed(pass_to_pass)
    return SweResult(
        fail_to_pass=_rate(len(fail_to_pass) - len(f2p_failed), len(fail_to_pass)),
        pass_to_pass=_rate(len(pass_to_pass) - len(p2p_failed), len(pass_to_pass)),
        f2p_failed=f2p_failed,
        p2p_failed=p2p_failed,
        missing=missing,
        f2p_total=len(fail_to_pass),
        p2p_total=len(pass_to_pass),
    )


def _rate(passed: int, total: int) -> float:
    return 1.0 if total == 0 else passed / total


def tests_fail_to_pass_all_green(result: SweResult, *, threshold: float = 1.0) -> GateResult:
    """Gate: the FAIL_TO_PASS rate reaches ``threshold`` (1.0: every one passes).

    Delegates to :func:`aieval.grading.tests_fail_to_pass_all_green` and adds the names of the
    tests still failing.
    """
    total = result.f2p_total
    gate = grading_gates.tests_fail_to_pass_all_green(
        passed=total - len(result.f2p_failed), total=total, threshold=threshold
    )
    return _with_failures(gate, result.f2p_failed, "still failing")


def tests_pass_to_pass_threshold_met(result: SweResult, *, threshold: float = 0.95) -> GateResult:
    """Gate: the PASS_TO_PASS rate reaches ``threshold`` (0.95 by default).

    Delegates to :func:`aieval.grading.tests_pass_to_pass_threshold_met` and adds the names of
    the tests that broke.
    """
    total = result.p2p_total
    gate = grading_gates.tests_pass_to_pass_threshold_met(
        passed=total - len(result.p2p_failed), total=total, threshold=threshold
    )
    return _with_failures(gate, result.p2p_failed, "broken")


def _with_failures(gate: GateResult, failed: list[str], label: str) -> GateResult:
    reason = gate.reason
    if failed and not gate.passed:
        reason += f"; {label}: " + ", ".join(failed[:5]) + (" ..." if len(failed) > 5 else "")
    return GateResult(gate.name, gate.passed, reason, {**gate.evidence, "failed": failed})


def load_swebench_report(path: str | Path, instance_id: str | None = None) -> SweResult:
    """Read a SWE-bench harness ``report.json`` (``{instance_id: {"tests_status": ...}}``).

    Raises:
        DatasetError: the file is unreadable, or lacks the instance or its ``tests_status``.
    """
    data = _read_json(path)
    if not isinstance(data, dict) or not data:
        raise DatasetError("expected an object keyed by instance id", source=str(path))
    if instance_id is None:
        if len(data) != 1:
            raise DatasetError(
                f"holds {len(data)} instances; pass instance_id= one of {sorted(data)[:5]}",
                source=str(path),
            )
        instance_id = next(iter(data))
    entry = data.get(instance_id)
    status = entry.get("tests_status") if isinstance(entry, dict) else None
    if not isinstance(status, dict):
        raise DatasetError(f"instance {instance_id!r} has no tests_status", source=str(path))
    outcomes: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        block = status.get(key, {})
        success, failure = list(block.get("success", [])), list(block.get("failure", []))
        outcomes.update({t: "passed" for t in success})
        outcomes.update({t: "failed" for t in failure})
        lists[key] = success + failure
    return swe_rates(
        outcomes, fail_to_pass=lists["FAIL_TO_PASS"], pass_to_pass=lists["PASS_TO_PASS"]
    )


def load_junit_xml(path: str | Path) -> dict[str, str]:
    """Per-test outcomes from a JUnit XML report, keyed ``classname::name``.

    Raises:
        DatasetError: the file is unreadable or not XML.
    """
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise DatasetError(f"not a readable JUnit XML report: {exc}", source=str(path)) from exc
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname", "")
        test_id = f"{classname}::{name}" if classname else name
        outcomes[test_id] = _junit_outcome(case)
    return outcomes


def _junit_outcome(case: ET.Element) -> str:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    if "skipped" in tags:
        skipped = case.find("skipped")
        kind = skipped.get("type", "") if skipped is not None else ""
        return "xfailed" if kind == "pytest.xfail" else "skipped"
    return "passed"


def load_pytest_json(path: str | Path) -> dict[str, str]:
    """Per-test outcomes from a pytest-json-report file (``{"tests": [{"nodeid", "outcome"}]}``).

    Outcomes are kept as written (``passed``, ``failed``, ``xfailed``, ``xpassed``...); a
    non-strict ``xpassed`` counts as passed, as in JUnit XML, where pytest writes it as a pass.

    Raises:
        DatasetError: the file is unreadable or lacks the ``tests`` list.
    """
    data = _read_json(path)
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, list):
        raise DatasetError(
            'expected a pytest-json-report object with a "tests" list', source=str(path)
        )
    outcomes: dict[str, str] = {}
    for index, test in enumerate(tests):
        if not isinstance(test, dict) or "nodeid" not in test or "outcome" not in test:
            raise DatasetError(f'tests[{index}] needs "nodeid" and "outcome"', source=str(path))
        outcomes[str(test["nodeid"])] = str(test["outcome"])
    return outcomes


def _read_json(path: str | Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(f"cannot read: {exc.strerror}", source=str(path)) from exc
    except ValueError as exc:
        raise DatasetError(f"not valid JSON: {exc}", source=str(path)) from exc


def _patch_text(patch: str | Path) -> str:
    if isinstance(patch, Path):
        try:
            return patch.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read patch file {patch}: {exc.strerror}") from exc
    return patch


def _git_apply(repo: Path, patch: str, *, check: bool) -> subprocess.CompletedProcess[str]:
    if shutil.which("git") is None:
        raise ConfigError("patch_applies needs git on PATH")
    args = ["git", "apply", "--check"] if check else ["git", "apply"]
    return subprocess.run(
        [*args, "-"], cwd=repo, input=patch, capture_output=True, text=True, timeout=60
    )


def patch_applies(patch: str | Path, repo: str | Path) -> GateResult:
    """Gate: ``git apply --check`` accepts the patch in the repository checkout ``repo``.

    Args:
        patch: the unified diff text, or a :class:`~pathlib.Path` to it.
        repo: the checkout to apply it to (left unchanged).
    """
    text = _patch_text(patch)
    if not text.strip():
        return GateResult("patch_applies", False, "the patch is empty", {"repo": str(repo)})
    done = _git_apply(Path(repo), text, check=True)
    if done.returncode == 0:
        return GateResult("patch_applies", True, "git apply --check succeeded", {"repo": str(repo)})
    message = done.stderr.strip().splitlines()
    return GateResult(
        "patch_applies",
        False,
        f"git apply --check failed: {message[0] if message else done.returncode}",
        {"repo": str(repo), "stderr": done.stderr[-4000:]},
    )


def run_tests_after_patch(
    repo: str | Path,
    patch: str | Path,
    tests: Sequence[str],
    *,
    allow_code_execution: bool = False,
    limits: SandboxLimits | None = None,
    python: str | None = None,
) -> dict[str, str]:
    """Copy ``repo``, apply ``patch``, run the named pytest tests in the sandbox; return outcomes.

    The outcomes (test id -> status, from a JUnit report) feed :func:`swe_rates`. The tests and
    their configuration come from the pristine ``repo``, not from the patch: after applying it,
    every file pytest reads configuration from (``pytest.toml``, ``.pytest.toml``,
    ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``, ``tox.ini``, ``setup.cfg``) and every
    ``conftest.py``, at any depth, the test files and directories named in ``tests``, package
    metadata (``*.dist-info``, ``*.egg-info``) and top-level modules that would shadow pytest
    are put back as they were (or removed when the patch added them). The JUnit report's path
    is on neither the command line nor in the environment. The patched code itself runs
    isolated with the sandbox's limits and no network, inside pytest's process; see
    ``docs/sandbox.md`` for what remains.

    Raises:
        ConfigError: code execution was not allowed, the patch does not apply, or a test names
            the repository root or a path outside it.
        SandboxError: the sandbox failed before pytest ran (see ``run_command``).
    """
    require_code_execution(allow_code_execution, what="run_tests_after_patch")
    if not tests:
        raise ConfigError("run_tests_after_patch: name at least one test to run")
    named_test_paths(tests)  # refuses a test that names the repository root or leaves it
    limits = limits or SandboxLimits(timeout=120.0, memory_mb=2048, max_processes=64)
    with tempfile.TemporaryDirectory(prefix="aieval-swe-") as scratch:
        checkout = Path(scratch) / "repo"
        shutil.copytree(repo, checkout, symlinks=True)
        applied = _git_apply(checkout, _patch_text(patch), check=False)
        if applied.returncode != 0:
            raise ConfigError(f"the patch does not apply to {repo}: {applied.stderr.strip()}")
        restore_test_setup(Path(repo), checkout, tests)
        argv, report = pytest_argv(python or sys.executable, checkout, tests)
        run = run_command(argv, cwd=checkout, limits=limits)
        if not report.exists():
            status = "timeout" if run.timed_out else "error"
            return {test: status for test in tests}
        outcomes = load_junit_xml(report)
    found = {_normalize_id(k) for k in outcomes}
    outcomes.update({t: "missing" for t in tests if not _reported(t, found)})
    return outcomes


def _reported(test: str, found: set[str]) -> bool:
    """Whether the report holds ``test``, or for a file or directory, any test inside it."""
    key = _normalize_id(test)
    if key in found or "::" in test:
        return key in found
    key = key.removesuffix(".py")
    return any(name.startswith(key + ".") for name in found)


# The gate names start with "test"; keep pytest from collecting them when run over the sources.
for _gate in (tests_fail_to_pass_all_green, tests_pass_to_pass_threshold_met):
    _gate.__test__ = False  # type: ignore[attr-defined]


register_gate("patch_applies", patch_applies)
