"""Store locations: paths and sqlite:/// are SQLite, postgresql:// is PostgreSQL, others refused."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from tests.support.postgres import ODD_PASSWORD, PostgresServer, database_of

from aieval.errors import ConfigError, StoreError
from aieval.store import Store, StoreLocation, parse_location


@pytest.mark.parametrize(
    ("given", "path"),
    [
        ("runs/aieval.db", Path("runs/aieval.db")),
        ("sqlite:///runs.db", Path("runs.db")),
        ("sqlite:////tmp/x/runs.db", Path("/tmp/x/runs.db")),
        (Path("a.db"), Path("a.db")),
        ("C:\\store\\runs.db", Path("C:\\store\\runs.db")),
    ],
)
def test_paths_are_sqlite(given: str | Path, path: Path) -> None:
    location = parse_location(given)
    assert (location.backend, location.path, location.is_sqlite) == ("sqlite", path, True)
    assert parse_location(location) is location


@pytest.mark.parametrize(
    "url", ["postgresql://u@127.0.0.1:5432/db", "postgres://db.internal/evals?sslmode=require"]
)
def test_postgres_urls(url: str) -> None:
    location = parse_location(url)
    assert (location.backend, location.path, str(location)) == ("postgres", None, url)


@pytest.mark.parametrize("url", ["mysql://u@h/db", "http://127.0.0.1:8000", "HTTPS://x/y"])
def test_other_schemes_are_refused_in_one_line(url: str, tmp_path: Path) -> None:
    scheme = url.split(":")[0].lower()
    with pytest.raises(ConfigError) as caught:
        Store(url)
    message = str(caught.value)
    assert f"scheme {scheme!r} is not supported" in message and "postgresql://" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "value",
    [
        "postgresql:/aieval?host=127.0.0.1&user=aieval",
        "postgres:aieval",
        "PostgreSQL:u:Sekrit-99@h/db",
        "mysql:/x",
        "http:/x",
        "sqlite:/x.db",
    ],
)
def test_a_scheme_without_slashes_is_refused_not_a_file(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        Store(value)
    message = str(caught.value)
    scheme = value.split(":")[0]
    assert f"starting '{scheme}:' looks like a URL without '//'" in message
    assert "Sekrit" not in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []  # no folder "postgresql:", no file
    # a file whose name holds a colon is still reachable, written as ./NAME
    assert parse_location(f"./{scheme}:x.db").path == Path(f"{scheme}:x.db")


def test_a_url_without_a_host_keeps_its_slashes() -> None:
    url = "postgresql:///aieval?host=127.0.0.1&port=5432&user=aieval"
    assert str(parse_location(url)) == url
    secret = "postgresql://ci:Sekrit-99@/aieval?host=127.0.0.1"
    assert str(parse_location(secret)) == "postgresql://ci:***@/aieval?host=127.0.0.1"
    assert str(parse_location(str(parse_location(secret)))).startswith("postgresql://ci:***@/")


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "postgresql://"])
def test_urls_naming_nothing_are_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="names no"):
        parse_location(url)


def test_the_password_is_never_shown() -> None:
    url = "postgresql://ci:hunter2%21@db.internal:5432/evals?password=other&sslmode=require"
    location = parse_location(url)
    shown = [str(location), repr(location), location.redacted, f"{location}"]
    assert all("hunter2" not in s and "other" not in s for s in shown)
    assert str(location) == (
        "postgresql://ci:***@db.internal:5432/evals?password=***&sslmode=require"
    )
    assert location.connect_url() == url
    # the redacted form, parsed again in this process, still connects with the password
    assert parse_location(str(location)).connect_url() == url
    assert location.scrub("auth failed for hunter2! here") == "auth failed for *** here"
    assert isinstance(location, StoreLocation)


def test_a_postgres_store_has_no_path(pg_url: str) -> None:
    store = Store(pg_url)
    assert store.location.backend == "postgres"
    with pytest.raises(StoreError, match="is PostgreSQL: it has no file path"):
        _ = store.path


def test_an_unreachable_server_is_a_store_error_without_the_password() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    with pytest.raises(StoreError) as caught:
        Store(f"postgresql://ci:topsecret@127.0.0.1:{port}/evals")
    message = str(caught.value)
    assert f"cannot open the store at postgresql://ci:***@127.0.0.1:{port}/evals" in message
    assert "topsecret" not in message
    assert "\t" not in message and "\n" not in message  # libpq's tab and second line
    assert "Connection refused Is the server running" in message


def test_a_redacted_url_from_elsewhere_connects_without_the_mask() -> None:
    location = parse_location("postgresql://ci:***@db.internal/evals?password=***&sslmode=require")
    assert location.connect_url() == "postgresql://ci@db.internal/evals?sslmode=require"
    assert str(location) == "postgresql://ci:***@db.internal/evals?password=***&sslmode=require"


def test_the_password_of_a_url_works_in_this_process(pg_url: str) -> None:
    from tests.support.postgres import TEAMMATE_PASSWORD

    url = pg_url.replace("aieval@", f"teammate:{TEAMMATE_PASSWORD}@")
    store = Store(url)
    run_id = store.create_run(name="qa", config={"store": str(store.location)})
    assert TEAMMATE_PASSWORD not in repr(store.location)
    again = Store(str(store.location))  # the redacted form, in the process that knew it
    assert again.get_run(run_id).config == {"store": str(store.location)}
    wrong = pg_url.replace("aieval@", "teammate:nope@")
    with pytest.raises(StoreError, match="password authentication failed") as caught:
        Store(wrong)
    assert "nope" not in str(caught.value)


def test_a_run_spec_keeps_only_the_redacted_store_and_refuses_other_schemes() -> None:
    from aieval.runner import RunSpec

    spec = RunSpec.parse(
        {"name": "qa", "dataset": "d.jsonl", "storage": {"store": "postgresql://ci:pw1@db/evals"}}
    )
    assert spec.storage.store == "postgresql://ci:***@db/evals"
    assert "pw1" not in spec.model_dump_json()
    with pytest.raises(ConfigError, match="scheme 'mysql' is not supported"):
        RunSpec.parse({"name": "qa", "dataset": "d.jsonl", "storage": {"store": "mysql://db/x"}})


def _odd_database(server: PostgresServer) -> tuple[str, str]:
    """The encoded URL of a fresh database of the role ``odd`` (password :data:`ODD_PASSWORD`),
    and the ``host:port/database`` it names."""
    where = f"{server.host}:{server.port}/{database_of(server, 'odd', ODD_PASSWORD)}"
    return f"postgresql://odd:{quote(ODD_PASSWORD, safe='')}@{where}", where


def _fragments(password: str) -> list[str]:
    """Every 4 characters in a row of ``password``: none may show in a message."""
    return [password[i : i + 4] for i in range(max(1, len(password) - 3))]


def test_a_password_with_special_characters_connects_percent_encoded(
    pg_server: PostgresServer,
) -> None:
    url, where = _odd_database(pg_server)
    store = Store(url)
    run_id = store.create_run(name="qa", config={"store": str(store.location)})
    assert str(store.location) == f"postgresql://odd:***@{where}"
    assert store.location.has_password
    assert Store(str(store.location)).get_run(run_id).name == "qa"
    shown = str(store.location) + repr(store.location)
    assert not any(piece in shown for piece in _fragments(ODD_PASSWORD))


@pytest.mark.parametrize(
    ("userinfo", "problem"),
    [
        (f"odd:{ODD_PASSWORD}", "it holds a space"),
        ("bob:Winter@2026db", "more than one '@' comes before the host"),
        ("weird:p@ss:w/rd?#%&=+ q", "it holds a space"),
        ("odd:Winter/2026db@x", "an '@' comes after a '/', '?' or '#'"),
        ("odd:Winter?2026db@x", "an '@' comes after a '/', '?' or '#'"),
        ("odd:Winter[2026db", "holds a character that URLs reserve"),
        ("odd:Winter%2G2026db", "a '%' is not followed by two hex digits"),
    ],
)
def test_an_ambiguous_url_is_refused_before_connecting(
    pg_server: PostgresServer, userinfo: str, problem: str
) -> None:
    where = f"{pg_server.host}:{pg_server.port}/{database_of(pg_server, 'odd', ODD_PASSWORD)}"
    url = f"postgresql://{userinfo}@{where}"
    for attempt in (lambda: parse_location(url), lambda: Store(url)):
        with pytest.raises(ConfigError) as caught:  # a ConfigError: libpq was never called
            attempt()
        message = str(caught.value)
        user = userinfo.split(":")[0]
        assert message.startswith(f"store location 'postgresql://{user}:***@{where}' is ambiguous")
        assert problem in message and "percent-encode" in message and "\n" not in message
        password = userinfo.split(":", 1)[1]
        assert not any(piece in message for piece in _fragments(password)), message


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            "postgresql://aieval:Winter26@[::1/aieval",
            "its host '[::1' is not a bracketed IPv6 address",
        ),
        ("postgresql://aieval:Winter26@::1]:5432/aieval", "not a bracketed IPv6 address"),
        ("postgresql://aieval:Winter\uff0f26@db/aieval", "is not a valid URL"),
        ("postgresql://aieval:Winter26@db/aieval?password=Winter26#x", "it holds a '#'"),
    ],
)
def test_an_unparsable_url_is_one_line_without_the_password(url: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_location(url)
    message = str(caught.value)
    assert message.startswith("store location 'postgresql://aieval:***@")
    assert problem in message and "\n" not in message
    assert "Winter" not in message


def test_the_scheme_is_case_insensitive(pg_url: str) -> None:
    upper = "PostgreSQL" + pg_url[len("postgresql") :]
    store = Store(upper)
    assert str(store.location) == pg_url
    run_id = store.create_run(name="qa", config={})
    assert Store("POSTGRES" + pg_url[len("postgresql") :]).get_run(run_id).name == "qa"


def test_scrubbing_replaces_the_url_and_only_unambiguous_passwords() -> None:
    short = parse_location("postgresql://weird:p@db.internal/evals")
    message = "missing separator\tin parameter for postgresql://weird:p@db.internal/evals"
    assert short.scrub(message) == (
        "missing separator in parameter for postgresql://weird:***@db.internal/evals"
    )
    long = parse_location("postgresql://ci:hunter2%21@db/evals")
    assert long.scrub("for hunter2! and hunter2%21") == "for *** and ***"
    assert not parse_location("postgresql://ci@db/evals").has_password
    assert not parse_location("runs.db").has_password


@pytest.mark.parametrize(
    "query",
    [
        "password=Winter&2026db&sslmode=require",  # a parameter without "="
        "password=Winter&x2026=db",  # not a libpq option: a piece of the password
        "password=Winter=2026db",
        "sslpassword=Winter&2026db",
    ],
)
def test_a_secret_query_value_split_by_an_unencoded_separator_is_refused(query: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_location(f"postgresql://ci@db.internal/evals?{query}")
    message = str(caught.value)
    assert "is ambiguous: a query parameter is not" in message and "percent-encode" in message
    assert "=***'" in message and "Winter" not in message and "2026" not in message


def test_an_unknown_query_option_is_named_and_secret_options_are_redacted() -> None:
    with pytest.raises(ConfigError, match="'sslmod' is not a libpq connection option"):
        parse_location("postgresql://ci@db.internal/evals?sslmod=require")
    url = "postgresql://ci@db.internal/evals?sslpassword=Winter2026&sslmode=require&ssl=true"
    location = parse_location(url)
    assert str(location) == (
        "postgresql://ci@db.internal/evals?sslpassword=***&sslmode=require&ssl=true"
    )
    assert location.connect_url() == url and location.has_password


def test_a_run_spec_refuses_an_ambiguous_store_without_the_password() -> None:
    from aieval.runner import RunSpec

    store = "postgresql://bob:Winter@2026db@db.internal/evals"
    with pytest.raises(ConfigError) as caught:
        RunSpec.parse({"name": "qa", "dataset": "d.jsonl", "storage": {"store": store}})
    message = str(caught.value)
    assert "storage.store" in message and "'postgresql://bob:***@db.internal/evals'" in message
    assert "Winter" not in message and "2026db" not in message
