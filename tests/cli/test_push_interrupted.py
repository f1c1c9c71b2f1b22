"""SIGTERM or Ctrl-C during `aieval push` says what was pushed and exits 143 or 130."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.push.helpers import make_run

AIEVAL = [sys.executable, "-m", "aieval"]


def _sigint_as_a_terminal_gives_it() -> None:
    # a job started in the background (CI runners do) inherits SIGINT ignored: undo that, as
    # a terminal's Ctrl-C would find it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.slow
def test_an_interrupted_push_says_so(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    make_run(tmp_path / "local.db", "qa", 3)
    held: list[socket.socket] = []
    asked = threading.Event()
    with socket.socket() as listener:  # a server that takes the request and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def accept() -> None:
            conn, _ = listener.accept()
            held.append(conn)
            conn.recv(65536)  # the request is in: the push is waiting for the answer
            asked.set()

        threading.Thread(target=accept, daemon=True).start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        child = subprocess.Popen(
            [*AIEVAL, "push", "--db", "local.db", "--to", url, "--token", "t0ken-value"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=_sigint_as_a_terminal_gives_it,
        )  # fmt: skip
        try:
            assert asked.wait(timeout=180), "the push never sent its request"
            child.send_signal(sig)
            _, err = child.communicate(timeout=120)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            for conn in held:
                conn.close()
    assert child.returncode == code, err
    assert "interrupted; the runs listed above are pushed" in err
    assert "Traceback" not in err and "t0ken-value" not in err
