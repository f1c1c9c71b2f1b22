"""``aieval serve``: run the evaluation server with uvicorn (FastAPI is imported on use)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from aieval.cli import _print
from aieval.cli._options import DbOption, store_location
from aieval.errors import ConfigError

if TYPE_CHECKING:
    from aieval.online import OnlineRule
    from aieval.store import Store

__all__ = ["serve_command"]

_INSTALL_HINT = "the server needs its extra: pip install 'aieval[server]'"


def serve_command(
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.", min=1, max=65535)] = 8765,
    db: DbOption = None,
    token: Annotated[
        str | None,
        typer.Option(envvar="AIEVAL_TOKEN", help="Bearer token every request must carry."),
    ] = None,
    upload_token: Annotated[
        list[str] | None,
        typer.Option(
            "--upload-token",
            envvar="AIEVAL_UPLOAD_TOKENS",
            help="NAME=TOKEN: a token that may only upload runs, and add samples only to the "
            "runs it created (repeatable; the variable holds them apart by spaces).",
        ),
    ] = None,
    review_token: Annotated[
        list[str] | None,
        typer.Option(
            "--review-token",
            envvar="AIEVAL_REVIEW_TOKENS",
            help="NAME=TOKEN: a reviewer's token, which may only label review queues, as NAME "
            "(repeatable; the variable holds them apart by spaces).",
        ),
    ] = None,
    unsafe_no_auth: Annotated[
        bool,
        typer.Option("--unsafe-no-auth", help="Allow a non-loopback bind without a token."),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option("--allowed-host", help="Also accept this Host header (repeatable)."),
    ] = None,
    dataset_root: Annotated[
        list[Path] | None,
        typer.Option(
            "--dataset-root", help="Folder evaluations may read (repeatable; default: cwd)."
        ),
    ] = None,
    max_concurrent_runs: Annotated[
        int, typer.Option(help="Evaluations running at once.", min=1)
    ] = 4,
    allow_imports: Annotated[
        bool,
        typer.Option("--allow-imports", help="Let evaluations import Python scorer files."),
    ] = False,
    online: Annotated[
        Path | None,
        typer.Option(
            "--online",
            help="Rules file (YAML): score a sample of the received traces continuously; its "
            "rules replace the store's earlier rules-file rules (docs/online.md).",
        ),
    ] = None,
    online_replace: Annotated[
        bool,
        typer.Option(
            "--online-replace",
            help="Replace the store's rules-file rules that another rules file or host "
            "installed with different content (without it, such a start is refused, naming "
            "what would change; the same rules start as usual).",
        ),
    ] = False,
    online_scoring: Annotated[
        bool,
        typer.Option(
            "--online-scoring/--no-online-scoring",
            help="Score the store's online rules in this server (--no-online-scoring: another "
            "server sharing the store scores them; this one serves the API and viewer).",
        ),
    ] = True,
) -> None:
    """Serve the API and web viewer: start evaluations and follow them live."""
    if online_replace and online is None:
        raise ConfigError(
            "--online-replace replaces the store's rules-file rules with the rules of --online "
            "FILE; give --online FILE with it, or drop --online-replace"
        )
    try:
        import uvicorn

        from aieval.online import load_rules
        from aieval.server import ServerSettings, create_app
    except ImportError as exc:
        raise ConfigError(_INSTALL_HINT) from exc
    roots = tuple(p.resolve() for p in dataset_root) if dataset_root else (Path.cwd(),)
    missing = [str(p) for p in roots if not p.is_dir()]
    if missing:
        raise ConfigError(f"--dataset-root: not a folder: {', '.join(missing)}")
    settings = ServerSettings(
        host=host,
        port=port,
        token=token or None,
        upload_tokens=_upload_tokens(upload_token or ()),
        review_tokens=_upload_tokens(review_token or (), "--review-token"),
        unsafe_no_auth=unsafe_no_auth,
        allowed_hosts=tuple(allowed_host or ()),
        dataset_roots=roots,
        max_concurrent_runs=max_concurrent_runs,
        allow_imports=allow_imports,
        online_scoring=online_scoring,
    )
    console = _print.console(stderr=True)  # no markup: an IPv6 "[fe80::1]" is not a tag
    location = store_location(db)
    rules = load_rules(online) if online is not None else None  # a bad file: nothing started
    app = create_app(location, settings)
    if rules is not None and online is not None:
        try:
            _install_rules(app.state.store, rules, online, console, take_over=online_replace)
        except BaseException:
            app.state.manager.shutdown()
            raise
    _say_where(console, host, port, tokened=settings.token is not None)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _say_where(console: Console, host: str, port: int, *, tokened: bool) -> None:
    """Print the server's address (and, behind a token, how a browser opens it)."""
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    console.print(Text.assemble("aieval server on ", (url, "bold")), highlight=False)
    if tokened:
        console.print(
            Text.assemble(
                "open ",
                (f"{url}?token=<your token>", "bold"),
                " once in the browser; API clients send 'Authorization: Bearer <your token>'",
            ),
            highlight=False,
        )


def _install_rules(
    store: Store, rules: Sequence[OnlineRule], file: Path, console: Console, *, take_over: bool
) -> None:
    """Store the rules file's rules (the API's are kept) and say what changed; the file rules
    another file or host installed are replaced only with ``take_over`` (--online-replace)."""
    from aieval.online import install_file_rules

    installer = (str(file.resolve()), socket.gethostname())
    change = install_file_rules(
        store, rules, where=str(file), installer=installer, take_over=take_over
    )
    said = [
        f"{what} {', '.join(names)}"
        for what, names in (
            ("added", change.added),
            ("changed", change.changed),
            ("removed", change.removed),
            ("unchanged", change.kept),
        )
        if names
    ]
    console.print(Text(f"online rules from {file}: {'; '.join(said) or 'none'}"), highlight=False)


def _upload_tokens(given: Sequence[str], option: str = "--upload-token") -> dict[str, str]:
    """``NAME=TOKEN`` items by name (the token itself is never shown in an error)."""
    tokens: dict[str, str] = {}
    for item in given:
        name, sep, secret = item.partition("=")
        if not sep:
            raise ConfigError(f"{option}: give NAME=TOKEN (a name, '=', then the token)")
        if name in tokens:
            raise ConfigError(f"{option}: the name {name!r} is given twice")
        tokens[name] = secret
    return tokens
