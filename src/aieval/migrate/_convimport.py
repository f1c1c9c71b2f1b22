"""What a conversation import writes and reports, shared by the DeepEval and promptfoo readers.

An import makes three kinds of file in its output folder: ``scenarios.jsonl`` (one scenario
row a line, each validated by the scenario loader before anything is written), an eval file
``eval.yaml`` whose every key is written here (never a value from the imported file), and
``import-report.md`` (what was translated, and each field that was not, with why). The
DeepEval import may add ``recorded.jsonl``: the finished conversations as
:class:`aieval.core.Conversation` records.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from aieval._secrets import is_secret_key
from aieval._terminal import printable
from aieval.conversations import scenario_from_row
from aieval.errors import ConfigError, DatasetError
from aieval.migrate._write import write_files

__all__ = [
    "ConversationImport",
    "Lines",
    "Translated",
    "eval_text",
    "secret_name",
    "slug",
    "unique_id",
    "write_import",
]

SCENARIOS = "scenarios.jsonl"
EVAL = "eval.yaml"
REPORT = "import-report.md"
RECORDED = "recorded.jsonl"
#: Most bytes one import writes: a file of a few hundred megabytes is not a scenario set.
MAX_WRITTEN = 50_000_000
#: Longest part of a report line before it is cut
_SHOWN = 200


@dataclass(frozen=True, slots=True)
class Translated:
    """One line of the report: where in the source, the field, and what it became (or why
    not)."""

    where: str
    field: str
    became: str | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class ConversationImport:
    """What a conversation import wrote, and what was translated and what was not."""

    tool: str
    source: Path
    directory: Path
    scenarios: Path
    eval_file: Path
    recorded: Path | None
    count: int
    translated: tuple[Translated, ...]
    untranslated: tuple[Translated, ...]
    #: what the author must set before ``aieval run`` (the target, the simulated user)
    to_set: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether every field was translated and nothing is left for the author to set."""
        return not self.untranslated and not self.to_set

    def text(self) -> str:
        """The report as Markdown (also written to ``import-report.md``); every name and value
        from the source with control and bidi characters shown as escapes."""
        out = [f"# {self.tool} conversations imported into {printable(self.directory.name)}", ""]
        out += [f"From: {printable(self.source.name)}", ""]
        files = [self.scenarios.name, self.eval_file.name]
        if self.recorded is not None:
            files.append(f"{self.recorded.name} (the finished conversations, as records)")
        out += [f"Files: {', '.join(files)}", "", f"Scenarios: {self.count}", ""]
        out += [f"## Translated ({len(self.translated)})", ""]
        out += [_line(item) for item in self.translated] or ["nothing"]
        out += ["", f"## Not translated ({len(self.untranslated)})", ""]
        out += [_line(item) for item in self.untranslated] or ["nothing"]
        out += ["", f"## To set before `aieval run` ({len(self.to_set)})", ""]
        out += [f"- {printable(item)}" for item in self.to_set] or ["nothing"]
        return "\n".join(out) + "\n"


def _line(item: Translated) -> str:
    became = f" -> {_clip(item.became)}" if item.became else ""
    note = f": {_clip(item.note)}" if item.note else ""
    return f"- {_clip(item.where)}: `{_clip(item.field)}`{became}{note}"


def _clip(text: str) -> str:
    shown = printable(text)
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."


class Lines:
    """The report's lines as an import makes them: one per field and outcome, naming the
    first three places (``[2]``, ``tests[0]``) where it occurs."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self._prefixes = (f"{source}: ", f"{source.name}: ")
        self.done: dict[tuple[str, str, str], list[str]] = {}
        self.left: dict[tuple[str, str], list[str]] = {}

    def mapped(self, where: str, name: str, became: str, note: str = "") -> None:
        """``name`` at ``where`` became ``became`` (``note``: what the author should know)."""
        self._add(self.done.setdefault((name, became, note), []), where)

    @contextmanager
    def attempt(self) -> Iterator[None]:
        """One test's translation, which may still fail: on a :class:`ConfigError` the lines
        it said were translated are taken back (nothing of it was written; what it said was
        not translated stays), and the error goes on to the caller, who reports it."""
        kept = {key: list(wheres) for key, wheres in self.done.items()}
        try:
            yield
        except ConfigError:
            self.done = kept
            raise

    def not_mapped(self, where: str, name: str, why: str) -> None:
        """``name`` at ``where`` was not translated, because ``why`` (an error's message that
        names the file, or the file and ``where`` again, is said without them: the line's
        place names them once)."""
        place = self._local(where)
        why = self._local(why)
        why = why.removeprefix(f"{place}: ") if place else why
        self._add(self.left.setdefault((name, why), []), place)

    def secrets(self, where: str, name: str, became: str, value: Any) -> None:
        """One line for each key of ``value`` (``name``, copied as data into ``became``) whose
        name looks like a credential's: the import copies data as it is, and says where a
        secret may have gone."""
        for path in _secret_paths(value):
            self.mapped(
                where,
                f"{name}{path}",
                f"{became}{path}",
                f"copied as data: looks like a secret; if it is one, remove it from {SCENARIOS} "
                "(a scenario set is shared and stored) and revoke it",
            )

    def _local(self, text: str) -> str:
        for prefix in self._prefixes:
            text = text.removeprefix(prefix)
        return text

    def _add(self, wheres: list[str], where: str) -> None:
        where = self._local(where)
        if where not in wheres[-1:]:  # one place once (a field in several turns)
            wheres.append(where)

    def lines(self) -> tuple[tuple[Translated, ...], tuple[Translated, ...]]:
        """The translated and the untranslated lines."""
        done = tuple(
            Translated(self._places(w), n, b, note) for (n, b, note), w in self.done.items()
        )
        left = tuple(Translated(self._places(w), n, None, why) for (n, why), w in self.left.items())
        return done, left

    def _places(self, wheres: list[str]) -> str:
        more = f" and {len(wheres) - 3} more" if len(wheres) > 3 else ""
        return f"{self.source.name}: {'; '.join(wheres[:3])}{more}"


def secret_name(key: str) -> bool:
    """Whether a key names a credential, in any case style (``api_key``, ``apiKey``)."""
    return is_secret_key(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key))


def _secret_paths(value: Any, path: str = "") -> list[str]:
    """The paths (``.api_key``, ``.auth[0].token``) of the keys in JSON-like ``value`` that
    name a credential, camelCase included (``apiKey``)."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            here = f"{path}.{key}"
            if secret_name(str(key)):
                found.append(here)
            found += _secret_paths(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _secret_paths(item, f"{path}[{index}]")
    return found


def slug(text: str, fallback: str) -> str:
    """A scenario id or eval name from free text: letters, digits, ``-`` (at most 60)."""
    found = re.sub(r"[^0-9A-Za-z]+", "-", text).strip("-").lower()[:60].strip("-")
    return found or fallback


def unique_id(wanted: str, taken: set[str]) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3``... when already taken (then taken)."""
    found, n = wanted, 1
    while found in taken:
        n += 1
        found = f"{wanted}-{n}"
    taken.add(found)
    return found


#: The eval file's first lines: fixed text, nothing from the imported file.
_HEADER = (
    "# Imported by `aieval import {tool}`; see import-report.md for what was translated.\n"
    "# The imported file is data: it chose no code, endpoint, key or file. Before `aieval run`,\n"
    "# set what import-report.md lists under 'To set': the assistant under test (target:) and,\n"
    "# for turns past the scripted ones, a simulated user on a provider you choose\n"
    "# (conversation: {{user: {{provider: ..., model: ...}}}}).\n"
)


def eval_text(tool: str, name: str, target: Mapping[str, Any] | None) -> str:
    """The eval file: the scenarios as its dataset, the ``conversation`` evaluator, and the
    target only when the import mapped one (from names aieval knows, no endpoint)."""
    doc: dict[str, Any] = {"name": name, "dataset": SCENARIOS}
    if target is not None:
        doc["target"] = dict(target)
    doc["conversation"] = {}
    body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    return _HEADER.format(tool=tool) + body


def checked_rows(rows: Sequence[Mapping[str, Any]], source: Path) -> list[str]:
    """Each row as a JSONL line, after the scenario loader validated it: what is written
    loads. A row the loader refuses is a bug of the import, named with its scenario."""
    lines = []
    for index, row in enumerate(rows, 1):
        try:
            scenario_from_row(row, source=SCENARIOS, line=index)
        except DatasetError as exc:
            raise ConfigError(
                f"{source}: scenario {row.get('id')!r} does not make a valid scenario: {exc}"
            ) from None
        lines.append(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
    return lines


def write_import(
    result: ConversationImport,
    rows: Sequence[Mapping[str, Any]],
    eval_file: str,
    recorded: Sequence[str],
    *,
    overwrite: bool,
) -> None:
    """Write the import's files into ``result.directory``: all of them or none (see
    ``_write``), within :data:`MAX_WRITTEN` bytes."""
    texts = {SCENARIOS: "".join(checked_rows(rows, result.source)), EVAL: eval_file}
    if result.recorded is not None:
        texts[RECORDED] = "".join(recorded)
    texts[REPORT] = result.text()
    contents = {name: text.encode("utf-8", "backslashreplace") for name, text in texts.items()}
    size = sum(len(c) for c in contents.values())
    if size > MAX_WRITTEN:
        raise ConfigError(
            f"{result.source}: the import would write {size:,} bytes, more than "
            f"{MAX_WRITTEN:,}; split the file"
        )
    write_files(result.directory, contents, overwrite=overwrite)
