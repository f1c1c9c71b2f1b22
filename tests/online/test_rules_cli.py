"""``aieval serve --online FILE`` and ``aieval online rules``: a bad file stops the start with
its error (no traceback), a good one replaces the store's rules-file rules and says what
changed, a name taken by an API rule is refused naming both."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from tests.support.cli import Cli

from aieval.online import OnlineRule, RuleScoring
from aieval.online._rules import rule_to_json
from aieval.store import Store

RULES = """\
rules:
  - name: {first}
    filter: {{service_name: shop}}
    scoring: {{scorers: [json_valid]}}
  - name: second
    sampling_rate: {rate}
    scoring: {{profile: agent}}
"""


def _rules(tmp_path: Path, first: str = "first", rate: float = 0.5) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES.format(first=first, rate=rate))
    return path


@pytest.fixture
def no_serving(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FastAPI]]:
    """``uvicorn.run`` returns at once: the command does everything up to serving."""
    served: list[FastAPI] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: served.append(app))
    yield served
    for app in served:
        app.state.manager.shutdown()
        app.state.store.close()


def test_serve_online_stores_the_rules_and_says_what_changed(
    in_process: Cli, tmp_path: Path, no_serving: list[FastAPI]
) -> None:
    db = str(tmp_path / "runs.db")
    first = in_process("serve", "--db", db, "--online", str(_rules(tmp_path)), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "added first, second" in first.stderr
    listed = in_process("online", "rules", "--db", db, env={"COLUMNS": "200"})
    assert listed.returncode == 0
    for said in ("first", "second", "service=shop", "every trace", "0.5", "file", "active"):
        assert said in listed.stdout, listed.stdout
    path = _rules(tmp_path, first="renamed", rate=0.25)
    again = in_process("serve", "--db", db, "--online", str(path), cwd=tmp_path)
    assert "added renamed; changed second; removed first" in again.stderr
    as_json = in_process("online", "rules", "--db", db, "--json")
    assert '"renamed"' in as_json.stdout and '"first"' not in as_json.stdout
    assert len(no_serving) == 2


def test_a_name_taken_by_an_api_rule_stops_the_start_naming_both(
    in_process: Cli, tmp_path: Path, no_serving: list[FastAPI]
) -> None:
    db = tmp_path / "runs.db"
    with Store(db) as store:
        api_rule = OnlineRule(name="first", scoring=RuleScoring(scorers=("json_valid",)))
        store.save_online_rule("first", rule_to_json(api_rule), source="api")
    path = _rules(tmp_path)
    done = in_process("serve", "--db", str(db), "--online", str(path), cwd=tmp_path)
    assert done.returncode != 0 and not no_serving
    assert f"{path}: rule 'first' has the name of the rule 'first' added through the API" in (
        " ".join(done.stderr.split())
    )
    with Store(db) as store:
        assert [(r.name, r.source) for r in store.online_rules()] == [("first", "api")]


def test_a_bad_rules_file_stops_the_start_with_its_error(
    in_process: Cli, tmp_path: Path, no_serving: list[FastAPI]
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - name: r\n    scoring: {scorers: [nope]}\n")
    done = in_process("serve", "--db", str(tmp_path / "runs.db"), "--online", str(path))
    assert done.returncode == 2 and not no_serving
    shown = " ".join(done.stderr.split())
    assert "rules[0] (rule 'r'): scoring: unknown scorer 'nope'" in shown
    assert "Traceback" not in done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.slow
def test_a_real_server_serves_its_rules_file(tmp_path: Path) -> None:
    port = _free_port()
    command = [sys.executable, "-m", "aieval", "serve", "--db", str(tmp_path / "runs.db")]
    command += ["--port", str(port), "--token", "t", "--online", str(_rules(tmp_path))]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=dict(os.environ), stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120  # generous: a busy machine starts it slowly
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                answer = httpx.get(
                    f"http://127.0.0.1:{port}/api/online/rules",
                    headers={"Authorization": "Bearer t"},
                    timeout=2.0,
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.1)
        assert [(r["name"], r["source"]) for r in answer.json()["rules"]] == [
            ("first", "file"),
            ("second", "file"),
        ]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_another_rules_file_or_host_does_not_silently_replace_the_file_rules(
    in_process: Cli, tmp_path: Path, no_serving: list[FastAPI]
) -> None:
    db = str(tmp_path / "runs.db")
    (tmp_path / "s1").mkdir()
    (tmp_path / "s2").mkdir()
    mine = _rules(tmp_path / "s1")
    other = _rules(tmp_path / "s2", first="other")
    assert in_process("serve", "--db", db, "--online", str(mine)).returncode == 0
    # the same file on the same host: a restart
    again = in_process("serve", "--db", db, "--online", str(mine))
    assert again.returncode == 0 and "unchanged first, second" in again.stderr
    refused = in_process("serve", "--db", db, "--online", str(other))
    shown = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and len(no_serving) == 2
    assert f"were installed from {mine.resolve()} on host {socket.gethostname()}" in shown
    assert "--online-replace" in shown and "Traceback" not in refused.stderr
    with Store(db) as store:
        assert [r.name for r in store.online_rules()] == ["first", "second"]
        # the same file, recorded as installed on another machine
        store.replace_file_rules({}, installer=(str(mine.resolve()), "elsewhere"), take_over=True)
        store.save_online_rule("kept", rule_to_json(OnlineRule("kept")), source="file")
    elsewhere = in_process("serve", "--db", db, "--online", str(mine))
    assert elsewhere.returncode == 2 and "on host elsewhere" in elsewhere.stderr
    taken = in_process("serve", "--db", db, "--online", str(other), "--online-replace")
    assert taken.returncode == 0 and "added other, second; removed kept" in taken.stderr
    with Store(db) as store:
        assert store.online_rules_installer() == (str(other.resolve()), socket.gethostname())


def test_servers_on_several_hosts_start_with_the_same_rules_from_any_file(
    in_process: Cli, tmp_path: Path, no_serving: list[FastAPI]
) -> None:
    db = str(tmp_path / "runs.db")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _rules(tmp_path / "a")
    copy = _rules(tmp_path / "b")  # the same rules, another file (another host's checkout)
    assert in_process("serve", "--db", db, "--online", str(first)).returncode == 0
    with Store(db) as store:  # as if a server on another host had started last
        store.replace_file_rules(
            {r.name: (r.spec, r.paused) for r in store.online_rules()},
            installer=(str(first.resolve()), "server-b"),
        )
    same = in_process("serve", "--db", db, "--online", str(copy))
    assert same.returncode == 0, same.stderr
    assert "unchanged first, second" in same.stderr
    with Store(db) as store:  # the last installer is recorded, for the message
        assert store.online_rules_installer() == (str(copy.resolve()), socket.gethostname())
        store.replace_file_rules(
            {r.name: (r.spec, r.paused) for r in store.online_rules()},
            installer=(str(first.resolve()), "server-b"),
        )
    changed = in_process("serve", "--db", db, "--online", str(_rules(tmp_path / "b", rate=0.25)))
    shown = " ".join(changed.stderr.split())
    assert changed.returncode == 2 and len(no_serving) == 2
    assert f"installed from {first.resolve()} on host server-b" in shown
    assert "would change second" in shown and "--online-replace" in shown


def test_online_replace_without_online_is_an_error_naming_both(
    in_process: Cli, tmp_path: Path, no_serving: list[FastAPI]
) -> None:
    done = in_process("serve", "--db", str(tmp_path / "runs.db"), "--online-replace")
    shown = " ".join(done.stderr.split())
    assert done.returncode == 2 and not no_serving
    assert "--online-replace" in shown and "--online FILE" in shown
    assert "Traceback" not in done.stderr


def test_a_stored_rule_that_no_longer_reads_is_listed_and_stalled_with_its_error(
    in_process: Cli, tmp_path: Path
) -> None:
    db = str(tmp_path / "runs.db")
    with Store(db) as store:
        store.save_online_rule("good", rule_to_json(OnlineRule("good")), source="api")
        # a rule stored before the name rule: its name no longer reads
        spec = rule_to_json(OnlineRule("good")).replace('"good"', '"\u8d28\u91cf"')
        store.save_online_rule("\u8d28\u91cf", spec, source="api")
    listed = in_process("online", "rules", "--db", db, env={"COLUMNS": "300"})
    shown = " ".join(listed.stdout.split())
    assert listed.returncode == 0, listed.stderr
    assert "good" in shown and "active" in shown
    assert "unreadable" in shown and "cannot be read: stored rule" in shown
    as_json = in_process("online", "rules", "--db", db, "--json")
    items = {item["name"]: item for item in json.loads(as_json.stdout)["rules"]}
    assert "error" not in items["good"] and "stored rule" in items["\u8d28\u91cf"]["error"]
    status = in_process("online", "status", "--db", db, "--json")
    assert status.returncode == 1
    rules = {r["name"]: r for r in json.loads(status.stdout)["rules"]}
    assert rules["\u8d28\u91cf"]["stalled"] is True
    assert "the rule cannot be read (stored rule" in rules["\u8d28\u91cf"]["stalled_reason"]
    assert "fix or delete it" in rules["\u8d28\u91cf"]["stalled_reason"]
    assert rules["good"]["stalled"] is False
