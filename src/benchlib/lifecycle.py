"""One lifecycle for every engine: `with benchlib.start("postgres") as eng: ...`.

Server engines run in containers started through testcontainers-python, ports published on
127.0.0.1 only, a fresh random password per start. Embedded engines run in this process and
expose the same interface. Containers carry labels naming their owner process, so a runner
killed with SIGKILL leaves nothing behind after the next start (`reap_stale`)."""
from __future__ import annotations

import atexit
import os
import secrets
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import cgroups
from .engines import EmbeddedEngine, Engine, ServerEngine, get_engine
from .engines.base import Credentials
from .errors import EngineStartError

LABEL_MANAGED = "benchlib.managed"
LABEL_OWNER = "benchlib.owner"
LABEL_ENGINE = "benchlib.engine"
LABEL_RUN = "benchlib.run"


def _process_start_ticks(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22: start time, tells a reused pid apart


def _owner_label() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start_ticks(pid)}"


def _owner_alive(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    pid, _, ticks = rest.partition(":")
    if host != socket.gethostname():
        return True  # another machine's container on a shared engine: not ours to judge
    return pid.isdigit() and _process_start_ticks(int(pid)) == ticks


def managed_containers(client=None) -> list:
    """Every benchlib container on the Docker engine, running or not."""
    from .docker_host import docker_client

    return (client or docker_client()).containers.list(all=True, filters={"label": f"{LABEL_MANAGED}=true"})


def reap_stale(client=None) -> list[str]:
    """Remove benchlib containers whose owner process is gone. Returns their short ids."""
    import docker.errors

    removed = []
    for container in managed_containers(client):
        if not _owner_alive(container.labels.get(LABEL_OWNER, "")):
            try:
                container.remove(force=True, v=True)
            except (docker.errors.NotFound, docker.errors.APIError):
                continue  # another process is reaping it at the same moment
            removed.append(container.short_id)
    return removed


_live_containers: dict[str, Any] = {}
_live_lock = threading.Lock()


@atexit.register
def _remove_live_containers() -> None:
    """Last resort for interpreter exits that skip the context manager (sys.exit in a thread...)."""
    with _live_lock:
        for container in list(_live_containers.values()):
            try:
                container.stop()
            except Exception:
                pass
        _live_containers.clear()


@dataclass
class Instance:
    """A running engine: how to connect, what to measure, and where it came from."""

    engine: Engine
    host: str | None
    port: int | None
    credentials: Credentials | None
    container_id: str | None
    scope: cgroups.Scope
    provenance: dict[str, Any]
    _path: Path | None = None
    _connections: list[Any] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.engine.key

    @property
    def cgroup(self) -> str | None:
        """The container's cgroup path, as `perf stat -G` takes it (None when embedded)."""
        return self.scope.perf_cgroup

    def connect(self) -> Any:
        """A new DB-API connection in autocommit mode, closed when the instance stops."""
        if isinstance(self.engine, EmbeddedEngine):
            conn = self.engine.connect(self._path)
        else:
            assert self.credentials is not None
            conn = self.engine.family.connect(
                self.host, self.port, self.credentials.user, self.credentials.password,
                self.credentials.database, 10.0,
            )
        self._connections.append(conn)
        return conn

    def sqlalchemy_url(self):
        """A sqlalchemy URL object; render it with hide_password=True when you print it."""
        from sqlalchemy.engine import URL

        if isinstance(self.engine, EmbeddedEngine):
            return URL.create(self.engine.key, database=str(self._path))
        assert self.credentials is not None
        return URL.create(
            self.engine.family.sqlalchemy_driver, username=self.credentials.user,
            password=self.credentials.password, host=self.host, port=self.port,
            database=self.credentials.database,
        )

    def sqlalchemy_engine(self, **kwargs: Any):
        from sqlalchemy import create_engine

        wrap = getattr(self.engine, "sqlalchemy_wrap", None)
        if wrap is not None:
            return create_engine(f"{self.engine.key}://", creator=lambda: wrap(self.connect()), **kwargs)
        return create_engine(self.sqlalchemy_url(), **kwargs)

    def query(self, sql: str, conn: Any = None) -> list[tuple]:
        """Run one statement on `conn` (or a fresh connection) and return its rows."""
        conn = conn or self.connect()
        cursor = conn.cursor()
        cursor.execute(sql)
        rows = cursor.fetchall() if cursor.description else []
        return [tuple(r) for r in rows]

    def close_connections(self) -> None:
        for conn in self._connections:
            try:
                conn.close()
            except Exception:
                pass
        self._connections.clear()

    def __repr__(self) -> str:
        where = f"127.0.0.1:{self.port}" if self.port else "in-process"
        return f"<Instance {self.key} {where} {self.provenance.get('server_version')!r}>"


class start:
    """Start an engine: `with start("postgres") as eng:`. Stops and removes it on exit,
    on Ctrl-C and on errors. `config` holds server settings (postgres `-c`, mysql `--k=v`)."""

    def __init__(self, key: str, *, config: Mapping[str, Any] | None = None, run_id: str | None = None,
                 startup_timeout: float | None = None):
        self.engine = get_engine(key)
        self.config = dict(config or {})
        self.run_id = run_id
        self.startup_timeout = startup_timeout
        self._cleanup: list[Any] = []
        self.instance: Instance | None = None

    def __enter__(self) -> Instance:
        try:
            if isinstance(self.engine, ServerEngine):
                self.instance = self._start_server(self.engine)
            else:
                self.instance = self._start_embedded(self.engine)
        except BaseException:
            self._stop()
            raise
        return self.instance

    def __exit__(self, *exc_info: Any) -> None:
        self._stop()

    def _stop(self) -> None:
        if self.instance is not None:
            self.instance.close_connections()
        for action in reversed(self._cleanup):
            action()
        self._cleanup.clear()

    # -- embedded ------------------------------------------------------------------------------
    def _start_embedded(self, engine: EmbeddedEngine) -> Instance:
        started = time.perf_counter()
        workdir = Path(tempfile.mkdtemp(prefix=f"benchlib-{engine.key}-"))
        self._cleanup.append(lambda: shutil.rmtree(workdir, ignore_errors=True))
        instance = Instance(engine, None, None, None, None, cgroups.process_scope(), {}, _path=workdir / engine.file_name)
        version = instance.query(engine.version_query)[0][0]
        instance.provenance = {
            "engine": engine.key, "kind": engine.kind, "image_ref": engine.library(), "image_id": None,
            "image_digest": None, "image_source": "embedded", "image_note": "in-process library",
            "server_version": version, "config": dict(self.config),
            "startup_seconds": time.perf_counter() - started, "container_id": None, "cgroup": None,
        }
        return instance

    # -- server --------------------------------------------------------------------------------
    def _start_server(self, engine: ServerEngine) -> Instance:
        from .docker_host import configure_testcontainers, docker_client
        from .images import resolve_image

        client = docker_client()
        reap_stale(client)
        image = resolve_image(engine)
        configure_testcontainers()
        from testcontainers.core.container import DockerContainer

        creds = Credentials(engine.user, secrets.token_urlsafe(18), engine.database)
        container = DockerContainer(image.ref).with_envs(**engine.env(creds))
        # Published on loopback only: with_exposed_ports would bind 0.0.0.0 and ::.
        container.ports[f"{engine.port}/tcp"] = ("127.0.0.1", None)
        labels = {LABEL_MANAGED: "true", LABEL_OWNER: _owner_label(), LABEL_ENGINE: engine.key}
        if self.run_id:
            labels[LABEL_RUN] = self.run_id
        container.with_kwargs(labels=labels)
        command = engine.command(self.config)
        if command:
            container.with_command(command)

        started = time.perf_counter()
        try:
            container.start()
        finally:
            # Registered even when start() failed half-way: a created container must not linger.
            if container.get_wrapped_container() is not None:
                self._register(container)
        container_id = container.get_container_id()
        port = int(container.get_exposed_port(engine.port))
        host = container.get_container_host_ip()
        probe = Instance(engine, host, port, creds, container_id, cgroups.NO_SCOPE, {})
        version = self._wait_ready(engine, container, probe)
        startup = time.perf_counter() - started
        probe.close_connections()

        container.get_wrapped_container().reload()
        pid = container.get_wrapped_container().attrs["State"]["Pid"]
        scope = cgroups.scope_for_pid(pid)
        return Instance(engine, host, port, creds, container_id, scope, {
            "engine": engine.key, "kind": engine.kind, "image_ref": image.ref, "image_id": image.image_id,
            "image_digest": image.digest, "image_source": image.source, "image_note": image.note,
            "server_version": version, "config": dict(self.config), "startup_seconds": startup,
            "container_id": container_id, "cgroup": scope.perf_cgroup,
        })

    def _register(self, container) -> None:
        key = container.get_wrapped_container().id
        with _live_lock:
            _live_containers[key] = container

        def remove() -> None:
            with _live_lock:
                _live_containers.pop(key, None)
            try:
                container.stop()
            except Exception:
                pass

        self._cleanup.append(remove)

    def _wait_ready(self, engine: ServerEngine, container, probe: Instance) -> str:
        """Poll login + ready query + version query; fail fast if the container exits."""
        timeout = self.startup_timeout or engine.startup_timeout
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        wrapped = container.get_wrapped_container()
        while time.monotonic() < deadline:
            try:
                conn = probe.connect()
                probe.query(engine.ready_query, conn)
                return str(probe.query(engine.version_query, conn)[0][0])
            except Exception as exc:  # not up yet: refused, reset, auth not ready, ...
                last_error = exc
            wrapped.reload()
            if wrapped.status in ("exited", "dead"):
                raise EngineStartError(
                    f"{engine.key} container exited during start-up (image {container.image}); "
                    f"last log lines:\n{_log_tail(wrapped)}"
                )
            time.sleep(0.05)
        raise EngineStartError(
            f"{engine.key} was not ready within {timeout:.0f}s (image {container.image}); last error: "
            f"{last_error}; last log lines:\n{_log_tail(wrapped)}"
        )


def _log_tail(wrapped, lines: int = 15) -> str:
    try:
        return wrapped.logs(tail=lines).decode(errors="replace")
    except Exception as exc:
        return f"(logs unavailable: {exc})"

