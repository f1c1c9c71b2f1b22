"""The one place that writes aieval's formats for an import: dataset rows with their own
checks, eval files, and the module of checks left to write by hand.

Every text here comes from an emitter: eval files from ``yaml.safe_dump``'s dumper, rows from
``json.dumps``, the stub module's literals from ``repr`` and its docstrings escaped. Nothing a
configuration holds (a file name, a description, a value) is formatted into YAML or Python
source, so none of it can end a value and start a key (``imports:``) or a statement."""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import yaml

from aieval._terminal import printable

__all__ = [
    "HEADER",
    "CheckEntry",
    "Stub",
    "eval_document",
    "jsonl_line",
    "row_document",
    "stub_module",
    "yaml_text",
]

#: The first line of each eval file written (the report names the source configuration)
HEADER = "# Imported from promptfoo by `aieval import promptfoo`; see import-report.md.\n"

#: the dataset row's key for the checks that apply to that row only
ROW_CHECKS_KEY = "checks"


@dataclass(frozen=True, slots=True)
class CheckEntry:
    """One check as an eval file or a row names it: ``{check: {options}}``."""

    check: str
    options: dict[str, Any] = field(default_factory=dict)

    def document(self) -> str | dict[str, dict[str, Any]]:
        return {self.check: dict(self.options)} if self.options else self.check


@dataclass(frozen=True, slots=True)
class Stub:
    """A check to write by hand: its scorer name, what it replaces and why."""

    name: str
    original: str
    reason: str
    used_by: tuple[str, ...]


def unique_names(entries: Sequence[CheckEntry], taken: Iterable[str] = ()) -> list[CheckEntry]:
    """``entries`` with a ``name`` option where a check's name repeats (among ``taken`` too):
    two checks of one sample must be told apart."""
    seen = set(taken)
    out: list[CheckEntry] = []
    for entry in entries:
        base = str(entry.options.get("name", entry.check))
        name, n = base, 1
        while name in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name)
        out.append(
            entry if name == base else CheckEntry(entry.check, {**entry.options, "name": name})
        )
    return out


def row_document(
    row_id: str,
    variables: Mapping[str, Any],
    checks: Sequence[CheckEntry],
    metadata: Mapping[str, Any],
    *,
    prediction: str | None = None,
    input_text: Any = None,
) -> dict[str, Any]:
    """A dataset row: the test's variables (``vars``, which the prompt template reads), its
    own checks, and its metadata."""
    row: dict[str, Any] = {
        "id": row_id,
        "input": dict(variables) if input_text is None else input_text,
        "vars": dict(variables),
    }
    if prediction is not None:
        row["prediction"] = prediction
    if checks:
        row[ROW_CHECKS_KEY] = [c.document() for c in checks]
    if metadata:
        row["metadata"] = dict(metadata)
    return row


def eval_document(
    name: str,
    dataset: str,
    scorers: Sequence[CheckEntry],
    *,
    target: Mapping[str, Any] | None = None,
    default_checks: Sequence[CheckEntry] = (),
    models: Sequence[str] = (),
    imports: Sequence[str] = (),
) -> dict[str, Any]:
    """An eval file: the dataset, the target (when answers are made), the scorers and the
    checks of every row (``default_checks``, promptfoo's ``defaultTest``); ``scorers: []``
    when only the rows' own checks score."""
    doc: dict[str, Any] = {"name": name, "dataset": dataset}
    if target is not None:
        doc["target"] = dict(target)
    if len(models) > 1:
        doc["models"] = list(models)
    if scorers or not default_checks:
        doc["scorers"] = [s.document() for s in scorers]
    if default_checks:
        doc["default_checks"] = [s.document() for s in default_checks]
    if imports:
        doc["imports"] = list(imports)
    return doc


class _Dumper(yaml.SafeDumper):
    """Multi-line texts (a prompt template) as YAML block literals, as a person writes them."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    block = "\n" in value and not value.endswith((" ", "\t")) and " \n" not in value
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if block else None)


_Dumper.add_representer(str, _text)


def yaml_text(doc: Mapping[str, Any]) -> str:
    """An eval file's text: :data:`HEADER`, then ``doc`` as YAML (the safe dumper's types)."""
    text = yaml.dump(dict(doc), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return HEADER + text


def jsonl_line(row: Mapping[str, Any]) -> str:
    """One dataset row as a line of JSON (a newline in a value is escaped: one row, one line)."""
    return json.dumps(row, ensure_ascii=False, default=_json_value) + "\n"


def _json_value(value: Any) -> Any:
    """A YAML timestamp (promptfoo's ``Date``) as its ISO text; anything else is a bug."""
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not written to a dataset")


def stub_name(kind: str, number: int) -> str:
    """``pf_javascript_1``: a valid, registered scorer name for a stub."""
    slug = re.sub(r"[^0-9a-zA-Z]+", "_", kind).strip("_").lower() or "check"
    name = f"pf_{slug}_{number}"
    return name + "_" if keyword.iskeyword(name) else name


def stub_module(stubs: Sequence[Stub], source: str) -> str:
    """A Python module registering one scorer per stub; each raises ``NotImplementedError``
    naming the promptfoo assertion it stands for until it is written."""
    lines = [
        f'"""Checks imported from {_docstring(source)} that have no aieval equivalent.',
        "",
        "Each scorer below stands for one promptfoo assertion and fails every sample it scores",
        "(NotImplementedError) until it is written. A scorer takes the output and the expected",
        "answer and returns a float in 0..1 or a Score; the test's variables are",
        'example.fields["vars"]. See docs/migrating.md."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        "from aieval import Example, Score",
        "from aieval.scorers import scorer",
        "",
    ]
    for stub in stubs:
        message = (
            f"{stub.name}: promptfoo's {stub.original} was not translated ({stub.reason}); "
            "write this check"
        )
        tests = ", ".join(stub.used_by)
        lines += [
            "",
            f'@scorer(name="{stub.name}")',
            f"def {stub.name}(",
            "    prediction: Any, expected: Any = None, *, example: Example",
            ") -> Score | float:",
            f'    """promptfoo: {_docstring(stub.original)}',
            "",
            f"    Used by: {_docstring(tests)}.",
            f"    Not translated: {_docstring(stub.reason)}.",
            '    """',
            f"    raise NotImplementedError({message!r})",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def _docstring(text: str) -> str:
    """``text`` inside a docstring as it reads: control and bidi characters shown as escapes,
    backslashes and double quotes escaped, so that no text ends the string or starts a line."""
    return printable(text).replace("\\", "\\\\").replace('"', '\\"')
