"""A database error as one line for the store's messages: no echo of the failing SQL.

PostgreSQL's errors carry the server's message on its first line and then libpq's echo of the
statement (``LINE 2: CREATE TABLE ... ^``); a permission failure is said as what the role may not
do and how to grant it.
"""

from __future__ import annotations

import re

__all__ = ["describe"]

# SQLSTATE 42501: insufficient_privilege
_NO_PRIVILEGE = "42501"
_DENIED = re.compile(r"permission denied for (schema|table|relation|sequence) (\S+)")


def describe(exc: BaseException, role: str | None = None) -> str:
    """``exc``'s message on one line; a permission failure names the ``role`` (the database
    user) and what it lacks."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    if not primary:  # libpq's connection failures say "Is the server running..." on a 2nd line
        return " ".join(str(exc).split())
    if getattr(diag, "sqlstate", None) == _NO_PRIVILEGE:
        denied = _DENIED.search(primary)
        if denied is not None:
            return _denied(role or "this role", denied.group(1), denied.group(2))
    return " ".join(str(primary).split())


def _denied(role: str, kind: str, name: str) -> str:
    if kind == "schema":
        return (
            f"role {role} may not create tables in schema {name}: open the store once as its"
            f" owner, or GRANT CREATE ON SCHEMA {name} TO {role}"
        )
    if kind == "sequence":
        return f"role {role} may not use sequence {name}: GRANT USAGE ON SEQUENCE {name} TO {role}"
    return (
        f"role {role} may not read or write table {name}: GRANT SELECT, INSERT, UPDATE, DELETE"
        f" ON {name} TO {role}"
    )
