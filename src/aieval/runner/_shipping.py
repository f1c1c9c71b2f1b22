"""What crosses between the driver and Ray workers: pickled one object at a time.

Objects are pickled with cloudpickle, as Ray does: a module-level function of an importable
module by reference, anything else (a function of ``__main__``, a lambda, a closure and what
it captures) by value. Each item and each result is pickled on its own, so one that cannot be
(it holds a lock, an open connection) is that item's error, never its batch's. Messages
describe such an object by its type and where it sits, in a few hundred characters, never by
its full ``repr`` (which for an object bound to 200 MiB of data is 200 MiB long).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import pickle
from typing import Any

__all__ = ["TooLarge", "brief", "dumps", "loads", "refusal"]

#: Characters of a description in a message (its part of a ``repr``, a name, a path).
_BRIEF_CHARS = 120
#: Characters of a whole refusal message.
_MESSAGE_CHARS = 600
#: How deep :func:`refusal` looks for the part that cannot be pickled.
_DEPTH = 8


class TooLarge(Exception):
    """An object pickles to more than the limit it was given."""


class _Capped(io.RawIOBase):
    """A sink that counts what is written, and stops at ``limit`` bytes."""

    def __init__(self, limit: int | None) -> None:
        self.limit, self.buffer = limit, bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        size = len(memoryview(data).cast("B"))
        if self.limit is not None and len(self.buffer) + size > self.limit:
            raise TooLarge(f"more than {self.limit:,} bytes")
        self.buffer += data
        return size


def dumps(obj: Any, limit: int | None = None) -> bytes:
    """``obj`` pickled with cloudpickle; :class:`TooLarge` as soon as it passes ``limit``."""
    from ray import cloudpickle

    sink = _Capped(limit)
    pickler: Any = cloudpickle.CloudPickler
    pickler(sink, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return bytes(sink.buffer)


def loads(data: bytes) -> Any:
    """The object :func:`dumps` pickled."""
    from ray import cloudpickle

    return cloudpickle.loads(data)


def refusal(obj: Any, exc: BaseException) -> str:
    """Why ``obj`` cannot be pickled: the part that fails, its type, the pickler's message."""
    path, part = _culprit(obj, "", _DEPTH)
    where = f"{path.strip()} is {_type_name(part)}" if path else _type_name(part)
    return _cap(f"{where} ({type(exc).__name__}: {exc})", _MESSAGE_CHARS)


def brief(obj: Any) -> str:
    """``obj`` described in a few words: its name and type, never its full ``repr``."""
    if isinstance(obj, functools.partial):
        return _cap(f"functools.partial({brief(obj.func)}, ...)", _BRIEF_CHARS)
    name = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None)
    if isinstance(name, str) and isinstance(module, str):
        return _cap(f"{module}.{name}", _BRIEF_CHARS)
    scorer_name = getattr(obj, "name", None)
    if isinstance(scorer_name, str) and type(obj).__name__ == "Scorer":
        return _cap(f"scorer {scorer_name!r} ({brief(getattr(obj, 'fn', None))})", _BRIEF_CHARS)
    return _cap(f"a {_type_name(obj)} object", _BRIEF_CHARS)


def _type_name(obj: Any) -> str:
    kind = type(obj)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[: limit - 30]}... ({len(text) - limit + 30:,} characters cut)"


def _culprit(obj: Any, path: str, depth: int) -> tuple[str, Any]:
    """The deepest part of ``obj`` that cannot be pickled on its own (``obj`` itself if none)."""
    if depth > 0:
        for where, part in _parts(obj):
            try:
                dumps(part)
            except Exception:
                return _culprit(part, path + where, depth - 1)
    return path, obj


def _parts(obj: Any) -> list[tuple[str, Any]]:
    """The parts of a container, a dataclass, a partial, a closure or an object, by path."""
    if isinstance(obj, dict):
        return [(f"[{_key(k)}]", v) for k, v in obj.items()]
    if isinstance(obj, list | tuple | set | frozenset):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if isinstance(obj, functools.partial):
        return [(".func", obj.func), (".args", obj.args), (".keywords", obj.keywords)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [(f".{f.name}", getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    code = getattr(obj, "__code__", None)
    if code is not None:  # a function: what it captures, and the globals it uses
        cells = zip(code.co_freevars, getattr(obj, "__closure__", None) or (), strict=False)
        found = [(f" (captures {n})", _contents(c)) for n, c in cells]
        used = getattr(obj, "__globals__", {})
        return found + [(f" (uses global {n})", used[n]) for n in code.co_names if n in used]
    found = []
    for kind in type(obj).__mro__:
        slots = getattr(kind, "__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                found.append((f".{name}", getattr(obj, name)))
    return found + [(f".{k}", v) for k, v in (getattr(obj, "__dict__", None) or {}).items()]


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not filled yet
        return None


def _key(key: Any) -> str:
    return repr(key) if isinstance(key, str | int) and len(repr(key)) <= 40 else brief(key)
