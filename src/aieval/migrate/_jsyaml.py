"""promptfoo's YAML as promptfoo reads it: js-yaml's schema (YAML 1.2 core, with timestamps),
on aieval's bounded loader.

PyYAML reads YAML 1.1, where ``1:30`` is the number 90, ``0755`` is 493, ``yes``/``on`` are
booleans and ``=`` has a tag no safe constructor knows. js-yaml (promptfoo's reader) keeps the
first three as text, reads ``0755`` as 755 and ``=`` as text; a test variable read the 1.1 way
would print differently in the prompt without a word. So the implicit types here are exactly
js-yaml's: ``null``/``Null``/``NULL``/``~``, ``true``/``false`` in three cases, integers (with
``0b``, ``0o``, ``0x`` and ``_``; leading zeros decimal), floats (``1e3``, ``.5``, ``.inf``,
``.nan``) and timestamps (``2024-01-01``, kept as ``date``/``datetime``: a JavaScript ``Date``
prints otherwise, so the importer refuses one where it would be printed).
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from aieval._yaml import BoundedSafeLoader, load_yaml_text
from aieval.errors import ConfigError

__all__ = ["load_promptfoo_yaml"]

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(  # js-yaml: no "_" at the end, none right after a leading 0
    r"""^(?!.*_$)[-+]?(?:0b[01_]*[01][01_]*|0o[0-7_]*[0-7][0-7_]*|0x[0-9a-fA-F_]*[0-9a-fA-F][0-9a-fA-F_]*
    |[0-9]|[1-9][0-9_]*|0[0-9][0-9_]*)$""",
    re.X,
)
_FLOAT = re.compile(
    r"""^(?!.*_$)(?:[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_TIMESTAMP = re.compile(
    r"""^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}
    |[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$""",
    re.X,
)
_TAG = "tag:yaml.org,2002:"


class _JsYamlLoader(BoundedSafeLoader):
    """The bounded safe loader with js-yaml's implicit types instead of YAML 1.1's."""


# its own table, not YAML 1.1's with more added
_JsYamlLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("null", _NULL, ["~", "n", "N", ""]),
    ("bool", _BOOL, list("tTfF")),
    ("int", _INT, list("-+0123456789")),
    ("float", _FLOAT, list("-+0123456789.")),
    ("timestamp", _TIMESTAMP, list("0123456789")),
    ("merge", re.compile(r"^(?:<<)$"), ["<"]),
):
    _JsYamlLoader.add_implicit_resolver(_TAG + _tag, _pattern, _first)


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    base = {"0b": 2, "0o": 8, "0x": 16}.get(digits[:2], 10)
    return sign * int(digits[2:] if base != 10 else digits, base)


def _float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    if text.lower().lstrip("+-") == ".inf":
        return -math.inf if text.startswith("-") else math.inf
    if text.lower() == ".nan":
        return math.nan
    return float(text)


_JsYamlLoader.add_constructor(_TAG + "int", _int)
_JsYamlLoader.add_constructor(_TAG + "float", _float)


def load_promptfoo_yaml(text: str, source: str) -> Any:
    """Parse ``text`` as js-yaml does, within the bounded loader's limits.

    Raises:
        ConfigError: naming ``source`` (and the line): too large, invalid, an alias bomb, a
            key given twice.
    """
    try:
        return load_yaml_text(text, source, error=ConfigError, loader=_JsYamlLoader)
    except ConfigError:  # a ValueError too, already naming the source
        raise
    except (ValueError, OverflowError) as exc:  # from the js-yaml number constructors
        raise ConfigError(f"{source}: invalid YAML: {exc}") from None
