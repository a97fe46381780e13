"""An embedded engine counted in instructions: its library runs in a child Python process under
valgrind's callgrind, which serves the sessions' statements; benchlib switches the child's
instrumentation on and off for exactly a window with vgdb, as it does a server's
(valgrind.Callgrind.local).

The child (callgrind_child.py, run as a script by `sys.executable`: a pyenv shim or any wrapper
script would put a shell, not Python, under valgrind) imports only the engine's DB-API module
(`Embedded.child_driver`), with a fixed hash seed and a minimal environment (Python's dict layout
and the size of the environment block both move an interpreter's count between runs). Each
session is a connection in the child, and each statement one request over a pipe.

What a window counts is the child's every instruction in it: the engine, its Python driver (as an
embedded engine's in-process figure includes the driver), and the child's own protocol (reading a
request, writing its reply). That last part is not the engine's: it is counted once at start, on
requests that do nothing (`per_request`), and each window is net of it (requests x per_request),
stored beside the count (metric `harness_instructions_user`), never hidden. Wall time in the child
is valgrind's, 25-50x a native run's: not a cost."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import BenchlibError, EngineStartError

CHILD_SCRIPT = str(Path(__file__).with_name("callgrind_child.py"))
CALIBRATION_REQUESTS = 200  # requests that do nothing, counted once per start: the protocol's cost each


class ChildStatementError(BenchlibError):
    """A statement failed in the child process (its driver's exception, named in the message)."""


@dataclass
class Child:
    """The child process serving an embedded engine's statements under callgrind."""

    engine: Any
    database: Path
    folder: Path  # where callgrind writes its dumps
    version: str
    process: subprocess.Popen
    requests: int = 0  # served so far: a window's count is net of its share (per_request each)
    per_request: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next: int = 0

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    def start(cls, engine, database: Path, folder: Path) -> "Child":
        from .valgrind import VALGRIND_COMMAND

        driver = engine.embedded.child_driver
        version = subprocess.run(["valgrind", "--version"], capture_output=True, text=True, check=True).stdout.strip()
        command = [*VALGRIND_COMMAND.split(), f"--callgrind-out-file={folder}/cg.%p",
                   sys.executable, "-s", CHILD_SCRIPT, driver.module, str(database),
                   json.dumps(dict(driver.connect_kwargs))]
        env = {"PATH": os.defpath, "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"}
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=env, cwd=folder)
        return cls(engine, database, folder, version, process)

    def calibrate(self, callgrind) -> None:
        """Count what a request costs the child's protocol: `per_request`. The first requests of a
        child cost some 400 k instructions each (the interpreter's first pass through that code: its
        allocations), later ones about 10.7 k, the same to 0.01%: a first batch is not counted."""
        for _ in range(CALIBRATION_REQUESTS):
            self.request(b"n", "0")
        window = callgrind.window("harness")
        window.enable()
        for _ in range(CALIBRATION_REQUESTS):
            self.request(b"n", "0")
        window.disable()
        self.per_request = window.counted.total / CALIBRATION_REQUESTS

    def request(self, op: bytes, connection: str, text: str = "") -> Any:
        payload = text.encode()
        with self._lock:
            if self.process.poll() is not None:
                raise EngineStartError(f"{self.engine.key}'s child under valgrind has exited "
                                       f"({self.process.returncode}): {self._stderr()}")
            self.process.stdin.write(b"%s %s %d\n" % (op, connection.encode(), len(payload)) + payload)
            self.process.stdin.flush()
            header = self.process.stdout.readline()
            if not header:
                raise EngineStartError(f"{self.engine.key}'s child under valgrind stopped answering: {self._stderr()}")
            body = self.process.stdout.read(int(header[1:]))
            self.requests += 1
        if header[:1] == b"-":
            raise ChildStatementError(f"{self.engine.key} (child under valgrind): {body.decode()}")
        return [tuple(row) for row in json.loads(body)] if body else []

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        return " ".join((self.process.stderr.read() or b"").decode(errors="replace").strip().splitlines()[-5:])

    # The child is its instance's client: a session is a connection in it.
    def open(self, endpoint, timeout: float = 10.0, *, local_files: bool = False) -> "ChildSession":
        if local_files:
            raise TypeError(f"{self.engine.key} has no server to send local files to")
        self._next += 1
        key = str(self._next)
        self.request(b"o", key)
        return ChildSession(self, key)

    def stop(self) -> None:
        """Close the child's input and wait for it: callgrind writes its exit dumps."""
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()


class ChildSession:
    """A session whose statements run in the child (the engine's SqlSession interface: execute,
    cursor, version, ready, close). The driver's own objects live in the child: no `raw`."""

    def __init__(self, child: Child, key: str):
        self._child, self._key = child, key
        self.placeholder = child.engine.client.placeholder

    @property
    def raw(self) -> Any:
        raise ChildStatementError(f"{self._child.engine.key} runs in a child process under valgrind: its driver's "
                                  f"connection is not in this process (a workload using it cannot count instructions)")

    def execute(self, operation: str, parameters: Any = None) -> list[tuple]:
        if parameters is not None:
            raise ChildStatementError(f"{self._child.engine.key} under valgrind takes SQL text only, not parameters")
        return self._child.request(b"x", self._key, operation)

    def cursor(self) -> "_Cursor":
        # The child runs every statement of a connection on one cursor: a statement loop's cost, as
        # a loop on one driver cursor in-process.
        return _Cursor(self)

    def version(self) -> str:
        return str(self.execute(self._child.engine.client.version_query)[0][0])

    def ready(self) -> None:
        self.execute(self._child.engine.client.ready_query)

    def close(self) -> None:
        if self._child.process.poll() is None:
            self._child.request(b"c", self._key)


class _Cursor:
    def __init__(self, session: ChildSession):
        self._session, self._rows = session, []

    def execute(self, operation: str, parameters: Any = None) -> "_Cursor":
        self._rows = self._session.execute(operation, parameters)
        return self

    def fetchall(self) -> list[tuple]:
        return self._rows

    def close(self) -> None:
        pass  # the connection's one cursor lives as long as the connection
