"""The server tests' fixtures (an app over ``tmp_path/runs.db``) for the push tests."""

from tests.server.conftest import make_app, root

__all__ = ["make_app", "root"]
