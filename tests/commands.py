"""`oracle` run as an operator runs it, and the contract of exit code 2: one line on stderr."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from unittest import mock

from oracle.cli import main

# The tree these tests are in: with `cwd` elsewhere, `python -m oracle` would otherwise
# import whichever tree the virtualenv's editable install points at (another worktree).
REPO = Path(__file__).resolve().parents[1]


def run_oracle(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    stdin: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """`oracle ARGS` in a fresh process; the caller's ORACLE* variables are not inherited,
    `env` adds variables; `stdin=subprocess.DEVNULL`: no terminal to ask on."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ORACLE")}
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO), environment.get("PYTHONPATH")])
    )
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "oracle", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=cwd,
        stdin=stdin,
        check=False,
    )


def one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    """The single `error: ...` line of a run that exited 2 (asserted), without `error: `."""
    assert run.returncode == 2, f"exit {run.returncode}\n{run.stderr[-3000:]}"
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr[-3000:]
    assert lines[0].startswith("error: "), lines[0]
    return lines[0].removeprefix("error: ")


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str


def oracle_in_process(*args: str) -> Outcome:
    """The real entry point, in-process (a subprocess per call would cost seconds)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    code = 0
    with (
        mock.patch.object(sys, "argv", ["oracle", *args]),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        try:
            main()
        except SystemExit as exit_request:
            code = int(exit_request.code or 0)
    return Outcome(code, stdout.getvalue(), stderr.getvalue())


class _NoMarkets(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"[]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


_quiet: list[ThreadingHTTPServer] = []


def quiet_venue() -> dict[str, Any]:
    """A `market_sources[]` entry of kind http whose venue lists no markets (served on
    127.0.0.1 for the rest of this process): for a daemon under test that needs a source
    but no markets (`oracle run` refuses to start without any)."""
    if not _quiet:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _NoMarkets)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _quiet.append(server)
    url = f"http://127.0.0.1:{_quiet[0].server_address[1]}"
    return {
        "name": "quiet",
        "kind": "http",
        "url": f"{url}/markets",
        "result_url": f"{url}/results",
    }
