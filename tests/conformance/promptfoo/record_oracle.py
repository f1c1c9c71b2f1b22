"""Record promptfoo's own verdicts on the fixed outputs (``oracle.json``), with promptfoo itself.

Run from anywhere with Node.js 22+ and network access to the npm registry:

    python tests/conformance/promptfoo/record_oracle.py [--promptfoo "npx --yes promptfoo@0.123.1"]

For each example the script writes, in a temporary folder, a copy of the configuration whose
prompt is ``{{aieval_fixed_output}}`` and whose provider is promptfoo's ``echo`` (it answers
with the rendered prompt), and one test per test x fixed output (``fixed_outputs.yaml``): promptfoo
grades exactly those outputs with its own assertions. LLM-graded assertions are left out (they
need a grading model; aieval's side leaves them out the same way). A second run with the real
prompts and the ``echo`` provider records how promptfoo renders each prompt for each test. The
standalone example runs as its README says (``--assertions``, ``--model-outputs``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
CONFIGS = ("getting-started", "json-output", "self-grading", "assert-types")
LLM_GRADED = {"llm-rubric", "model-graded-closedqa", "model-graded-factuality", "factuality"}
FIXED = "aieval_fixed_output"


def _deterministic(asserts: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [a for a in asserts or [] if a["type"] not in LLM_GRADED]


def _run(promptfoo: list[str], folder: Path, args: list[str]) -> list[dict[str, Any]]:
    out = folder / "out.json"
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo"),
    }
    command = [*promptfoo, "eval", *args, "-o", str(out), "--no-cache", "--no-table"]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    if not out.is_file():
        raise SystemExit(f"promptfoo failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return list(json.loads(out.read_text(encoding="utf-8"))["results"]["results"])


def _outcomes(promptfoo: list[str], name: str, fixed: dict[int, list[str]]) -> dict[str, bool]:
    config = yaml.safe_load((HERE / name / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    default = dict(config.get("defaultTest") or {})
    default["assert"] = _deterministic(default.get("assert"))
    tests = []
    for number, test in enumerate(config["tests"], 1):
        for k, output in enumerate(fixed[number], 1):
            tests.append(
                {
                    **test,
                    "description": f"{number}/{k}",
                    "vars": {**(test.get("vars") or {}), FIXED: output},
                    "assert": _deterministic(test.get("assert")),
                }
            )
    oracle = {
        "prompts": ["{{" + FIXED + "}}"],
        "providers": ["echo"],
        "defaultTest": default,
        "tests": tests,
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "promptfooconfig.yaml").write_text(yaml.safe_dump(oracle), encoding="utf-8")
        results = _run(promptfoo, folder, ["-c", "promptfooconfig.yaml"])
    found = {}
    for result in results:
        key = result["testCase"]["description"]
        number, k = (int(part) for part in key.split("/"))
        transformed = "transform" in (result["testCase"].get("options") or {})
        if not transformed and result["response"]["output"] != fixed[number][k - 1]:
            raise SystemExit(
                f"{name} {key}: the echo provider changed the output: "
                f"{result['response']['output']!r} for {fixed[number][k - 1]!r}"
            )
        found[key] = bool(result["success"])
    return dict(sorted(found.items(), key=lambda kv: [int(p) for p in kv[0].split("/")]))


def _prompts(promptfoo: list[str], name: str) -> dict[str, str]:
    source = HERE / name
    config = yaml.safe_load((source / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    tests = [
        {"description": str(n), "vars": t.get("vars") or {}}
        for n, t in enumerate(config["tests"], 1)
    ]
    rendered = {"prompts": config["prompts"], "providers": ["echo"], "tests": tests}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for extra in source.iterdir():
            if extra.name != "promptfooconfig.yaml":
                shutil.copy(extra, folder / extra.name)
        (folder / "promptfooconfig.yaml").write_text(yaml.safe_dump(rendered), encoding="utf-8")
        results = _run(promptfoo, folder, ["-c", "promptfooconfig.yaml"])
    return {
        f"{r['promptIdx'] + 1}/{r['testCase']['description']}": r["response"]["output"]
        for r in sorted(results, key=lambda r: (r["promptIdx"], int(r["testCase"]["description"])))
    }


def _standalone(promptfoo: list[str]) -> dict[str, bool]:
    source = HERE / "standalone-assertions"
    asserts = yaml.safe_load((source / "asserts.yaml").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "asserts.yaml").write_text(
            yaml.safe_dump(_deterministic(asserts)), encoding="utf-8"
        )
        shutil.copy(source / "outputs.json", folder / "outputs.json")
        results = _run(
            promptfoo, folder, ["--assertions", "asserts.yaml", "--model-outputs", "outputs.json"]
        )
    outputs = json.loads((source / "outputs.json").read_text(encoding="utf-8"))
    found = {}
    for result in results:
        number = outputs.index(result["response"]["output"]) + 1
        found[f"{number}/1"] = bool(result["success"])
    return dict(sorted(found.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--promptfoo", default="npx --yes promptfoo@0.123.1")
    promptfoo = shlex.split(parser.parse_args().promptfoo)
    version = (
        subprocess.run([*promptfoo, "--version"], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    fixed = yaml.safe_load((HERE / "fixed_outputs.yaml").read_text(encoding="utf-8"))
    oracle: dict[str, Any] = {
        "promptfoo": version,
        "left_out": sorted(LLM_GRADED),
        "outcomes": {name: _outcomes(promptfoo, name, fixed[name]) for name in CONFIGS},
        "prompts": {name: _prompts(promptfoo, name) for name in CONFIGS},
    }
    oracle["outcomes"]["standalone-assertions"] = _standalone(promptfoo)
    text = json.dumps(oracle, indent=2, ensure_ascii=False) + "\n"
    (HERE / "oracle.json").write_text(text, encoding="utf-8")
    print(f"wrote oracle.json (promptfoo {version})")


if __name__ == "__main__":
    main()
