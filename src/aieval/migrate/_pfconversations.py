"""promptfoo conversations to scenarios: ``promptfoo:simulated-user`` tests and the tests that
share a conversation (``metadata.conversationId``, a prompt reading ``_conversation``).

A simulated-user test becomes a scenario whose goal is its ``instructions`` (rendered with the
test's variables), with ``maxTurns`` and ``initialMessages``. Tests sharing a conversation
become one scenario whose scripted user turns are each test's user message, in order. The
configuration is data: the simulated user's provider (promptfoo's hosted model by default) is
never carried over (the eval's author sets ``conversation.user``), and neither is any other
key of its ``config``; the assistant under test maps as the promptfoo import maps providers
(``apiBaseUrl`` and ``apiKeyEnvar`` only with ``allow_endpoints``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from aieval._terminal import printable
from aieval.errors import ConfigError
from aieval.migrate._convimport import (
    EVAL,
    SCENARIOS,
    ConversationImport,
    Lines,
    eval_text,
    secret_name,
    slug,
    unique_id,
    write_import,
)
from aieval.migrate._nunjucks import render
from aieval.migrate._pfconfig import PromptfooConfig, ProviderRef, TestCase, read_config
from aieval.migrate._pffiles import ConfigFiles
from aieval.migrate._pfproviders import (
    _ENDPOINT,
    _PARAMS,
    MappedProvider,
    UnmappedProvider,
    map_provider,
)

__all__ = ["import_promptfoo_conversations", "is_conversation_config"]

SIMULATED_USER = "promptfoo:simulated-user"
#: the simulated user's settings that are translated (any other key is reported)
_USER_CONFIG = {"instructions", "maxTurns", "initialMessages", "stateful"}
_LOOP = re.compile(
    r"\{%-?\s*for\s+\w+\s+in\s+_conversation\s*-?%\}.*?\{%-?\s*endfor\s*-?%\}", re.DOTALL
)
_DEFAULT_TURNS = 10


def is_conversation_config(
    path: str | os.PathLike[str], allow_outside: Sequence[str | os.PathLike[str]] = ()
) -> bool:
    """Whether the promptfoo configuration at ``path`` tests conversations (a
    ``promptfoo:simulated-user`` provider, ``conversationId`` metadata or ``_conversation``
    in a prompt). A configuration that cannot be read is not one (the import says why)."""
    try:
        config = read_config(Path(path), ConfigFiles(Path(path), allow_outside), chat=True)
    except ConfigError:
        return False
    tests = (config.default, *config.tests)
    return (
        any(_user_provider(t) is not None for t in tests)
        or any(_conversation_id(t) is not None for t in config.tests)
        or any("_conversation" in p.text for p in config.prompts)
    )


def _provider_id(test: TestCase) -> str | None:
    provider = test.extra.get("provider")
    if isinstance(provider, str):
        return provider
    if isinstance(provider, Mapping) and isinstance(provider.get("id"), str):
        return str(provider["id"])
    return None


def _user_provider(test: TestCase) -> Mapping[str, Any] | None:
    """The test's simulated-user provider config, when its provider is the simulated user."""
    if _provider_id(test) != SIMULATED_USER:
        return None
    provider = test.extra.get("provider")
    config = provider.get("config") if isinstance(provider, Mapping) else None
    return config if isinstance(config, Mapping) else {}


def _conversation_id(test: TestCase) -> str | None:
    found = test.extra.get("metadata", {}).get("conversationId")
    return None if found is None else str(found)


class _State(Lines):
    """The report's lines and the scenario ids taken so far."""

    def __init__(self, source: Path) -> None:
        super().__init__(source)
        self.taken: set[str] = set()


def import_promptfoo_conversations(
    config: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    allow_outside: Sequence[str | os.PathLike[str]] = (),
    allow_endpoints: bool = False,
) -> ConversationImport:
    """Translate a promptfoo configuration's conversations into ``out``: a scenarios file, an
    eval file and ``import-report.md``.

    Raises:
        ConfigError: the configuration cannot be read (named by file and key), holds no
            conversation that translates, or ``out`` holds an earlier import or a link.
    """
    source, directory = Path(config), Path(out)
    try:
        read = read_config(source, ConfigFiles(source, allow_outside), chat=True)
        state = _State(source)
        for key in read.ignored:
            state.not_mapped(source.name, key, "not read by the conversation import")
        system = _system(read, state)
        shared, said_system = _shared(read, state)
        rows = _simulated(read, state) + shared
        if not rows:
            raise ConfigError(
                f"{source}: no conversation translates (see the reasons: "
                + "; ".join(f"{t.where}: {t.field}: {t.note}" for t in state.lines()[1])
                + ")"
            )
        system = system or said_system
        target = _target(read, state, system, allow_endpoints)
        to_set = [] if target is not None else ["target: the assistant under test"]
        if system is not None:
            where = read.prompts[0].where
            if target is not None:
                state.mapped(where, "prompt (the system message)", "target.system_prompt")
            else:
                state.not_mapped(
                    where,
                    "prompt (the system message)",
                    "no target was mapped to carry it: set it as target.system_prompt "
                    "with the target",
                )
                to_set[0] += ", its system_prompt the configuration's prompt"
        if any(not row.get("user_turns") or row.get("_simulated") for row in rows):
            to_set.append(
                "conversation.user: the simulated user, on a provider you choose (promptfoo's "
                "simulated user runs on promptfoo's hosted model unless told otherwise; an "
                "imported file never chooses a provider)"
            )
        for row in rows:
            row.pop("_simulated", None)
        translated, untranslated = state.lines()
        result = ConversationImport(
            tool="promptfoo",
            source=source,
            directory=directory,
            scenarios=directory / SCENARIOS,
            eval_file=directory / EVAL,
            recorded=None,
            count=len(rows),
            translated=translated,
            untranslated=untranslated,
            to_set=tuple(to_set),
        )
        name = slug(read.description or source.parent.name, "promptfoo")
        text = eval_text("promptfoo", name, target)
        write_import(result, rows, text, (), overwrite=overwrite)
        return result
    except ConfigError as exc:
        raise ConfigError(printable(str(exc))) from None


def _system(config: PromptfooConfig, state: _State) -> str | None:
    """The target's system message: the one prompt, when it has no variable (promptfoo sends
    it as the system message of a simulated-user conversation)."""
    if not config.prompts:
        return None
    prompt = config.prompts[0]
    for other in config.prompts[1:]:
        state.not_mapped(other.where, "prompts", "one prompt per import: import the others apart")
    if "_conversation" in prompt.text:
        return None  # a chat template read per test (_shared)
    if "{{" in prompt.text or "{%" in prompt.text:
        state.not_mapped(
            prompt.where,
            "prompt",
            "it differs per test (template variables); a scenario has one system prompt: "
            "set target.system_prompt yourself",
        )
        return None
    return prompt.text


def _target(
    config: PromptfooConfig, state: _State, system: str | None, allow_endpoints: bool
) -> dict[str, Any] | None:
    chosen: MappedProvider | None = None
    for ref in config.providers:
        found = map_provider(ref, allow_endpoints=allow_endpoints)
        if not isinstance(found, MappedProvider):
            _dropped(ref, found.reason, allow_endpoints, state)
        elif chosen is not None:
            state.not_mapped(ref.where, ref.id, "one target per eval file: copy eval.yaml for it")
        else:
            chosen = found
            state.mapped(ref.where, ref.id, f"target ({found.provider} {found.model})")
    if chosen is None:
        return None
    target: dict[str, Any] = {"provider": chosen.provider, "model": chosen.model}
    for key in ("base_url", "api_key_env"):
        if getattr(chosen, key) is not None:
            target[key] = getattr(chosen, key)
    if chosen.params:
        target["params"] = dict(chosen.params)
    if system is not None:
        target["system_prompt"] = system
    return target


def _dropped(ref: ProviderRef, reason: str, allow_endpoints: bool, state: _State) -> None:
    """Report a provider no target came from: that it was not carried over and why, then each
    of its keys with what became of it, and what ``--allow-endpoints`` would keep."""
    keys = [f"config.{key}" for key in ref.config] + [str(key) for key in ref.extra]
    alone = map_provider(replace(ref, config={}, extra={}))
    if isinstance(alone, UnmappedProvider) or not keys:
        why = reason  # the id itself names nothing aieval can call
    elif isinstance(map_provider(ref, allow_endpoints=True), MappedProvider):
        why = (
            "it sets where requests go and with which key, which an import does not choose: "
            "check them (below) and pass --allow-endpoints to carry it over with them"
        )
    else:
        blocking = [f"config.{k}" for k in ref.config if k not in _PARAMS and k not in _ENDPOINT]
        why = (
            f"{', '.join(blocking + [str(k) for k in ref.extra])} cannot be carried over "
            "(each below), so --allow-endpoints would not carry it over either"
        )
    state.not_mapped(ref.where, ref.id, f"not carried over (set target: yourself): {why}")
    for key in ref.config:
        state.not_mapped(ref.where, f"config.{key}", _key_fate(key, ref.config[key]))
    for key in ref.extra:
        state.not_mapped(
            ref.where, str(key), "not translated: the provider, and this key, are left out"
        )


def _key_fate(key: str, value: Any) -> str:
    """What became of one key of a provider that was not carried over."""
    if key in _ENDPOINT:
        what = "where requests go" if key == "apiBaseUrl" else "which environment variable's key"
        return (
            f"{what} ({value!r}): --allow-endpoints would keep it, once the provider is "
            "carried over; otherwise set it in the eval file yourself"
        )
    if key in _PARAMS:
        return f"a request parameter ({_PARAMS[key]}): carried over only with the provider"
    if secret_name(key):
        return (
            "a key written in the file: never carried over, even with --allow-endpoints; name "
            "its environment variable as target.api_key_env"
        )
    if key.startswith("transform") or key.endswith(("Function", "function")):
        return "code promptfoo runs: never run by an import, even with --allow-endpoints"
    return "not translated, even with --allow-endpoints"


def _merged(default: TestCase, test: TestCase) -> dict[str, Any]:
    return {**default.vars, **test.vars}


def _kind(config: PromptfooConfig, test: TestCase) -> str | None:
    """``simulated`` (the simulated user plays it), ``shared`` (a turn of a conversation the
    tests share) or ``None`` (one prompt, one answer: not a conversation)."""
    own = test.extra.get("provider") is not None
    if _user_provider(test) is not None or (not own and _user_provider(config.default) is not None):
        return "simulated"
    uses = bool(config.prompts) and "_conversation" in config.prompts[0].text
    return "shared" if _conversation_id(test) is not None or uses else None


def _rest(test: TestCase, state: _State, *, provider: bool) -> None:
    """Name what a conversation test sets that is not translated."""
    for key in test.options:
        state.not_mapped(
            test.where, f"options.{key}", "test options are not translated for conversations"
        )
    if test.threshold is not None:
        state.not_mapped(test.where, "threshold", "the assertions are not translated")
    for key in test.extra:
        if key not in {"provider", "metadata"}:
            state.not_mapped(test.where, key, "not translated for conversations")
    if provider and test.extra.get("provider") is not None:
        state.not_mapped(
            test.where,
            "provider",
            f"{_provider_id(test)!r}: a test's own provider is not carried over (the target "
            "is the eval file's)",
        )


def _simulated(config: PromptfooConfig, state: _State) -> list[dict[str, Any]]:
    rows = []
    _rest(config.default, state, provider=False)
    for test in config.tests:
        kind = _kind(config, test)
        if kind is None:
            state.not_mapped(
                test.where,
                "(test)",
                "one prompt and one answer, not a conversation: import the configuration "
                "without its conversation tests to translate it",
            )
        if kind != "simulated":
            continue
        settings = _user_provider(test)
        if settings is None:
            settings = _user_provider(config.default) or {}
        _rest(test, state, provider=False)
        try:
            with state.attempt():
                rows.append(_simulated_row(config, test, settings, state))
        except ConfigError as exc:
            state.not_mapped(test.where, "(test)", str(exc))
    return rows


def _simulated_row(
    config: PromptfooConfig, test: TestCase, settings: Mapping[str, Any], state: _State
) -> dict[str, Any]:
    where = test.where
    values = _merged(config.default, test)
    for key in settings:
        if key not in _USER_CONFIG:
            state.not_mapped(
                where,
                f"provider.config.{key}",
                "the simulated user runs on the provider the eval's author sets "
                "(conversation.user); an imported file sets none of it",
            )
    template = settings.get("instructions", values.get("instructions"))
    if not isinstance(template, str) or not template.strip():
        raise ConfigError("no instructions for the simulated user (config or vars)")
    if template.startswith("file://"):
        raise ConfigError("instructions: file:// references are not read by the import")
    goal = render(template, values, f"{where}: instructions")
    wanted = slug(test.description or "", f"test-{test.number}")
    row: dict[str, Any] = {"id": unique_id(wanted, state.taken), "goal": goal, "_simulated": True}
    state.mapped(
        where,
        "instructions",
        "goal",
        "promptfoo's instructions hold the persona and the goal in one text",
    )
    turns = settings.get("maxTurns", _DEFAULT_TURNS)
    if isinstance(turns, int) and not isinstance(turns, bool) and 1 <= turns <= 1000:
        row["max_turns"] = turns
        state.mapped(where, "maxTurns", "max_turns")
    else:
        state.not_mapped(where, "maxTurns", f"{turns!r} is not a whole number from 1 to 1000")
    opening = values.get("initialMessages", settings.get("initialMessages"))
    if opening is not None:
        messages = _messages(opening, values, where, state)
        if messages:
            row["initial_messages"] = messages
    if settings.get("stateful"):
        state.not_mapped(
            where, "stateful", "aieval sends the whole conversation to the target on every turn"
        )
    metadata: dict[str, Any] = {"promptfoo_test": test.number}
    if test.description:
        metadata["description"] = test.description
    if test.extra.get("metadata"):
        metadata["promptfoo_metadata"] = _plain(test.extra["metadata"], where)
        state.secrets(where, "metadata", "metadata.promptfoo_metadata", test.extra["metadata"])
    rest = {k: v for k, v in values.items() if k not in {"instructions", "initialMessages"}}
    if rest:
        metadata["vars"] = _plain(rest, where)
        state.secrets(where, "vars", "metadata.vars", rest)
    _asserts(test, config.default, metadata, state)
    row["metadata"] = metadata
    return row


def _messages(value: Any, values: Mapping[str, Any], where: str, state: _State) -> list[Any]:
    if not isinstance(value, list):
        state.not_mapped(
            where, "initialMessages", "only a list of messages is read (a file:// is not)"
        )
        return []
    found = []
    for i, message in enumerate(value):
        here = f"{where}: initialMessages[{i}]"
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            raise ConfigError(f"{here}: a message is {{role, content}}")
        role = render(str(message.get("role")), values, f"{here}.role")
        if role not in ("user", "assistant"):
            state.not_mapped(here, "role", f"{role!r}: a scenario opens with user and assistant")
            continue
        found.append({"role": role, "content": render(message["content"], values, here)})
    state.mapped(where, "initialMessages", "initial_messages")
    return found


def _asserts(
    test: TestCase, default: TestCase, metadata: dict[str, Any], state: _State
) -> list[Any]:
    kept = []
    for assertion in (*default.asserts, *test.asserts):
        entry = {"type": assertion.type, "value": assertion.value}
        kept.append(_plain(entry, assertion.where))
        state.not_mapped(
            assertion.where,
            f"assert {assertion.type}",
            "promptfoo grades the whole conversation as the output; kept as data in the "
            "scenario's metadata.promptfoo_assert: write it as a conversation check "
            "(conversation.conversation_checks)",
        )
    if kept:
        metadata["promptfoo_assert"] = kept
    return kept


def _shared(config: PromptfooConfig, state: _State) -> tuple[list[dict[str, Any]], str | None]:
    """One scenario per conversation the tests share, their user messages its scripted
    turns."""
    groups: dict[str, list[TestCase]] = {}
    for test in config.tests:
        if _kind(config, test) == "shared":
            _rest(test, state, provider=True)
            groups.setdefault(_conversation_id(test) or "conversation", []).append(test)
    rows = []
    systems: set[str] = set()
    for key, tests in groups.items():
        try:
            with state.attempt():
                turns = [_said(config, t, systems, state) for t in tests]
        except ConfigError as exc:
            state.not_mapped(f"conversation {key}", "(tests)", str(exc))
            continue
        row: dict[str, Any] = {
            "id": unique_id(slug(key, "conversation"), state.taken),
            "goal": tests[0].description or f"the scripted turns of promptfoo conversation {key}",
            "user_turns": turns,
            "max_turns": len(turns),
        }
        metadata: dict[str, Any] = {
            "promptfoo_conversation": key,
            "promptfoo_tests": [t.number for t in tests],
        }
        kept = []
        for number, test in enumerate(tests, 1):
            found = _asserts(test, config.default, {}, state)
            if found:
                kept.append({"turn": number, "assert": found})
        if kept:
            metadata["promptfoo_turn_assert"] = kept
        row["metadata"] = metadata
        for test in tests:
            state.mapped(
                test.where,
                f"conversationId {key}" if key != "conversation" else "_conversation",
                f"scenario {row['id']}: a scripted user turn",
            )
        rows.append(row)
    if len(systems) == 1 and rows:
        return rows, systems.pop()
    if len(systems) > 1:
        state.not_mapped(
            config.prompts[0].where,
            "system message",
            "it differs per test; a scenario has one system prompt: set target.system_prompt",
        )
    return rows, None


def _said(config: PromptfooConfig, test: TestCase, systems: set[str], state: _State) -> str:
    """The user message one test adds: its prompt rendered without the ``_conversation``
    loop (the turns before it are the scenario's own), the last user message of a chat."""
    prompt = config.prompts[0]
    values = _merged(config.default, test)
    text = _LOOP.sub("", prompt.text)
    if text.lstrip().startswith("["):
        escaped = {k: json.dumps(v)[1:-1] if isinstance(v, str) else v for k, v in values.items()}
        rendered = render(text, escaped, f"{test.where}: {prompt.where}")
        try:
            messages = json.loads(rendered)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{prompt.where}: not a JSON chat once rendered: {exc}") from None
        if not isinstance(messages, list) or not messages:
            raise ConfigError(f"{prompt.where}: a chat prompt is a list of messages")
        last = messages[-1]
        if not isinstance(last, Mapping) or last.get("role") != "user":
            raise ConfigError(f"{prompt.where}: the chat does not end with the user's message")
        for message in messages[:-1]:
            if isinstance(message, Mapping) and message.get("role") == "system":
                systems.add(str(message.get("content", "")))
            else:
                state.not_mapped(test.where, "prompt message", "only system and the last user")
        return str(last.get("content", ""))
    return render(text, values, f"{test.where}: {prompt.where}")


def _plain(value: Any, where: str) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: not a plain JSON value: {exc}") from None
    return value
