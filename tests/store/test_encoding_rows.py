"""A batch of SQLite parameters is converted only where UTF-8 cannot hold its text."""

from __future__ import annotations

import json
import sqlite3

from aieval.store._encoding import dumps, from_db, to_db_rows


def test_plain_rows_pass_as_they_are_and_surrogates_become_bytes() -> None:
    plain = [("a", 1, None, 0.5), ("é ünï 🙂", 2, b"\x00", None)]
    assert to_db_rows(plain) is plain  # nothing to convert: no copy
    # two lone halves of a pair side by side are still two lone surrogates
    odd = [("ok", 1), ("\ud83d", 2), ("\ude00", 3)]
    converted = to_db_rows(odd)
    assert converted == [("ok", 1), (b"\xed\xa0\xbd", 2), (b"\xed\xb8\x80", 3)]
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE TABLE t (a, b)")
        db.executemany("INSERT INTO t VALUES (?, ?)", converted)
        back = [from_db(a) for (a,) in db.execute("SELECT a FROM t ORDER BY b")]
    assert back == ["ok", "\ud83d", "\ude00"]


def test_json_columns_are_the_text_json_dumps_gives() -> None:
    """The encoders built once write what ``json.dumps`` with the same options writes."""
    values: list[object] = ["é ✓", "plain", "\udc80", {"b": [1, 2.5, None], "a": True}, 10**30]
    values.append(object())  # anything else: its str()
    for value in values:
        text = json.dumps(value, ensure_ascii=False, default=str)
        if "\udc80" in text:
            text = json.dumps(value, ensure_ascii=True, default=str)
        assert dumps(value) == text
