"""A batch of SQLite parameters is converted only where UTF-8 cannot hold its text."""

from __future__ import annotations

import sqlite3

from aieval.store._encoding import from_db, to_db_rows


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
