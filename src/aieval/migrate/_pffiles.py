"""The files a promptfoo configuration makes the importer read: only inside its folder, each
read within bounds.

A configuration comes from anyone (a repository, a colleague, a download); its ``file://``
references are data. Each is resolved relative to the file that names it and must lead, once
every symlink is followed, inside the configuration's folder or a folder the author allowed
(``--allow-outside``); a reference leading elsewhere (``/etc/...``, ``../../.ssh/...``, a link
out) is refused, naming the file, the field and the path, before anything is read. YAML goes
through the bounded loader (its size, aliases and alias expansion capped) with js-yaml's types,
JSON and text are capped at the same size, and each file is read once however many tests name
it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aieval._json import DuplicateKeyError, loads_strict
from aieval._yaml import MAX_BYTES
from aieval.errors import ConfigError
from aieval.migrate._jsyaml import load_promptfoo_yaml

__all__ = ["MAX_BYTES", "MAX_OUTPUTS_BYTES", "ConfigFiles"]

#: Largest ``--model-outputs`` file: recorded answers, many of them, as JSON
MAX_OUTPUTS_BYTES = 20_000_000


class ConfigFiles:
    """The folders one import may read from, and what it read (each file once).

    ``config`` is the configuration the author named; its folder is always readable, and so
    is each path of ``allowed`` (a folder, or one file).
    """

    def __init__(self, config: Path, allowed: Sequence[str | os.PathLike[str]] = ()) -> None:
        self.config = config
        self.roots = (_real(config.parent), *(_real(Path(p)) for p in allowed))
        self._texts: dict[Path, str] = {}
        self._data: dict[Path, Any] = {}
        #: bytes read so far (each file counted once)
        self.read_bytes = 0

    def resolve(self, base: Path, ref: str, where: str) -> Path:
        """The real path of ``file://ref`` named in a file of folder ``base``.

        Raises:
            ConfigError: the file does not exist, or leads outside the allowed folders.
        """
        candidate = Path(ref) if Path(ref).is_absolute() else base / ref
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a link loop, no permission
            raise ConfigError(f"{where}: file://{ref}: file not found") from None
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            raise ConfigError(
                f"{where}: file://{ref} leads to {real}, outside the configuration's folder "
                f"{self.roots[0]}; a configuration reads only files inside its folder. If you "
                f"trust it to read there, pass --allow-outside {real.parent} "
                "(allow_outside= in Python)"
            )
        if not real.is_file():
            raise ConfigError(f"{where}: file://{ref}: not a file")
        return real

    def text(self, path: Path, where: str, *, limit: int = MAX_BYTES) -> str:
        """The UTF-8 text of ``path`` (a resolved path), at most ``limit`` bytes."""
        known = self._texts.get(path)
        if known is not None:
            return known
        try:
            size = path.stat().st_size
            if size > limit:
                raise ConfigError(
                    f"{where}: {path}: file is {size} bytes, larger than {limit}; split it up"
                )
            with path.open("rb") as handle:
                raw = handle.read(limit + 1)  # the file may have grown since stat
        except OSError as exc:
            raise ConfigError(f"{where}: {path}: cannot read: {exc.strerror or exc}") from None
        if len(raw) > limit:
            raise ConfigError(f"{where}: {path}: file is larger than {limit} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{where}: {path}: not UTF-8 text: {exc}") from None
        self.read_bytes += len(raw)
        self._texts[path] = text
        return text

    def data(self, path: Path, where: str, *, limit: int = MAX_BYTES) -> Any:
        """``path`` parsed: JSON for ``.json``, else YAML as promptfoo reads it (js-yaml's
        types), both bounded (size, aliases, their expansion) and refusing a key given twice."""
        if path in self._data:
            return self._data[path]
        text = self.text(path, where, limit=limit if path.suffix == ".json" else MAX_BYTES)
        if path.suffix == ".json":
            try:
                value = loads_strict(text)
            except DuplicateKeyError as exc:
                raise ConfigError(f"{path}: not valid JSON: {exc}") from None
            except ValueError as exc:
                raise ConfigError(f"{path}: not valid JSON: {exc}") from None
            except RecursionError:
                raise ConfigError(f"{path}: not valid JSON: nested too deeply") from None
        else:
            value = load_promptfoo_yaml(text, str(path))
        self._data[path] = value
        return value


def _real(path: Path) -> Path:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise ConfigError(f"{path}: not found (a folder the import may read)") from None
