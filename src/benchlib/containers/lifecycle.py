"""One lifecycle for every engine: `with benchlib.start("postgres") as eng: ...`.

Server engines run in containers started through testcontainers-python, ports published on
127.0.0.1 only, a fresh random password per start. Embedded engines run in this process and
expose the same interface. A cluster engine is N containers on a Docker network of its own,
started node by node as its declaration says and ready once the cluster counts every member; it
is one instance, measured as the sum of its nodes' cgroups and node by node. Containers, networks
and volumes carry labels naming their owner process, so a runner killed with SIGKILL leaves
nothing behind after the next start (`reap_stale`).

A server's data can live on a volume of the start's own (`data_volume=True`); a snapshot of it
(`Instance.snapshot_data`) lets a later start of the same image begin from the same data
(`restore=`) instead of loading it again."""
from __future__ import annotations

import atexit
import secrets
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from ..host import cgroups
from ..engines import Credentials, Endpoint, Engine, Session, SqlClient, get_engine
from ..core.errors import BenchlibError, EngineStartError, ParameterError
from ..host.owners import owner_alive, owner_label

LABEL_MANAGED = "benchlib.managed"
LABEL_OWNER = "benchlib.owner"
LABEL_ENGINE = "benchlib.engine"
LABEL_RUN = "benchlib.run"
LABEL_NODE = "benchlib.node"
SOCKET_MOUNT = "/run/benchlib-socket"  # where a server's Unix socket directory is mounted in its container


def managed_containers(client=None) -> list:
    """Every benchlib container on the Docker engine, running or not."""
    from ..host.docker_host import docker_client

    return (client or docker_client()).containers.list(all=True, filters={"label": f"{LABEL_MANAGED}=true"})


def managed_volumes(client=None) -> list:
    """Every benchlib data volume (a start's data directory, or a snapshot of one)."""
    from ..host.docker_host import docker_client

    return (client or docker_client()).volumes.list(filters={"label": f"{LABEL_MANAGED}=true"})


def managed_networks(client=None) -> list:
    """Every network a benchlib cluster made."""
    from ..host.docker_host import docker_client

    return (client or docker_client()).networks.list(filters={"label": f"{LABEL_MANAGED}=true"})


def reap_stale(client=None) -> list[str]:
    """Remove benchlib containers, then data volumes and clusters' networks, whose owner process is
    gone. Returns the containers' short ids and the volumes' names."""
    import docker.errors

    from ..host.docker_host import docker_client

    client = client or docker_client()
    removed = []
    for container in managed_containers(client):
        if not owner_alive(container.labels.get(LABEL_OWNER, "")):
            try:
                container.remove(force=True, v=True)
            except (docker.errors.NotFound, docker.errors.APIError):
                continue  # another process is reaping it at the same moment
            removed.append(container.short_id)
    for volume in managed_volumes(client):
        if not owner_alive((volume.attrs.get("Labels") or {}).get(LABEL_OWNER, "")):
            try:
                volume.remove(force=True)
            except (docker.errors.NotFound, docker.errors.APIError):
                continue  # being reaped by another process, or still mounted by a container being removed
            removed.append(volume.name)
    for network in managed_networks(client):
        if not owner_alive(network.attrs.get("Labels", {}).get(LABEL_OWNER, "")):
            try:
                network.remove()
            except (docker.errors.NotFound, docker.errors.APIError):
                continue
    return removed


def resource_labels(engine: Engine, run_id: str | None) -> dict[str, str]:
    labels = {LABEL_MANAGED: "true", LABEL_OWNER: owner_label(), LABEL_ENGINE: engine.key}
    if run_id:
        labels[LABEL_RUN] = run_id
    return labels


def _create_volume(client, engine: Engine, run_id: str | None, what: str) -> str:
    name = f"benchlib-{engine.key.replace('@', '-')}-{what}-{secrets.token_hex(4)}"
    client.volumes.create(name, labels=resource_labels(engine, run_id))
    return name


def _remove_volume(client, name: str) -> None:
    import docker.errors

    try:
        client.volumes.get(name).remove(force=True)
    except (docker.errors.NotFound, docker.errors.APIError):
        pass  # gone already; a volume still in use is reaped once its owner process has exited


# Copies a data directory from one volume to another with the engine's own image, as root. The
# big files are then written out and dropped from the page cache: the copy must not stay cached
# outside the memory limit of the start that restores it (an IO-bound regime's limit covers the
# page cache its own reads fill, as when it had loaded the data itself).
# Files the server never reads back are copied and removed before the sync, so they never reach the disk.
_COPY_SCRIPT = ("set -e; cp -a /from/. /to/; "
                "printf '%s' \"$SKIP\" | (cd /to && xargs -r rm -f --); "
                "find /to -type f -size +1M -exec sync {} + ; "
                "find /to -type f -size +1M -exec dd if={} iflag=nocache count=0 status=none ';'")


class DataSnapshotError(BenchlibError):
    pass


@dataclass
class DataSnapshot:
    """A copy of a server's data directory, taken with the server frozen after its checkpoint
    (crash-consistent: what a power cut would leave, with less to recover). A later start of the
    same engine and image restores it (`start(..., restore=snapshot)`), which takes the volume
    over: it is removed when that start stops, or by `discard` when no start took it."""

    engine: str
    image_id: str
    volume: str
    credentials: Credentials  # the data's own: the restoring start gives the user a fresh password
    taken_from: str  # the container id of the start that made the data
    seconds: float  # how long the server was frozen for the copy
    left_out: int = 0  # files the copy left out (server.snapshot_skip)
    facts: dict[str, Any] = field(default_factory=dict)  # what the taker knows about the data (row counts ...)
    taken: bool = False

    def take(self) -> str:
        if self.taken:
            raise DataSnapshotError(f"the {self.engine} data snapshot was already restored by another start")
        self.taken = True
        return self.volume

    def discard(self) -> None:
        if not self.taken:
            self.taken = True
            from ..host.docker_host import docker_client

            _remove_volume(docker_client(), self.volume)


_live_containers: dict[str, Any] = {}
_live_networks: dict[str, Any] = {}
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
        for network in list(_live_networks.values()):
            try:
                network.remove()
            except Exception:
                pass
        _live_networks.clear()


@dataclass
class NodeInstance:
    """One running node of a cluster: its role and name on the cluster's network, its container
    and cgroup, and where it answers (None: a role that serves no SQL, TiKV say)."""

    role: str
    name: str
    container_id: str
    scope: cgroups.Scope
    endpoint: Endpoint | None
    provenance: dict[str, Any]


def loopback_container(image_ref: str, port: int | None, env: Mapping[str, str], labels: Mapping[str, str],
                       **kwargs: Any):
    """A testcontainers container (not yet started) of `image_ref` with `port` published on
    127.0.0.1 only (None: nothing published, a cluster node no client talks to), carrying
    benchlib's labels (`resource_labels`: its owner process) so that a killed owner's container is reaped
    by the next benchlib process."""
    from ..host.docker_host import configure_testcontainers

    configure_testcontainers()
    from testcontainers.core.container import DockerContainer

    container = DockerContainer(image_ref).with_envs(**env)
    if port is not None:
        # Published on loopback only: with_exposed_ports would bind 0.0.0.0 and ::.
        container.ports[f"{port}/tcp"] = ("127.0.0.1", None)
    container.with_kwargs(labels=dict(labels), **kwargs)
    return container


def track(container):
    """Remember a started container until the returned function stops it (or the interpreter exits)."""
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

    return remove


@dataclass
class Instance:
    """A running engine: how to talk to it, what to measure, and where it came from. A cluster's
    endpoint, container id and version are its entry node's; `scope` sums every node's cgroup and
    `nodes` holds each node."""

    engine: Engine
    endpoint: Endpoint
    container_id: str | None
    scope: cgroups.Scope
    provenance: dict[str, Any]
    _sessions: list[Session] = field(default_factory=list)
    socket_endpoint: Endpoint | None = None  # started with unix_socket=True: the server's socket on this host
    data_volume: str | None = None  # started with data_volume=True or restore=: the volume holding its data
    run_id: str | None = None  # the run that started it (its containers and volumes carry it)
    nodes: list[NodeInstance] = field(default_factory=list)
    # The port published on 127.0.0.1, for a person's own tools; benchlib's clients use `endpoint`,
    # the container's own address where this host reaches it (client_endpoint).
    published: Endpoint | None = None
    # Started with valgrind=True: the server under callgrind, and how its windows are switched.
    callgrind: Any = None  # valgrind.Callgrind
    # Who opens sessions, when not the engine's client: an embedded engine's child under valgrind.
    client: Any = None

    @property
    def key(self) -> str:
        return self.engine.key

    @property
    def host(self) -> str | None:
        return (self.published or self.endpoint).host

    @property
    def port(self) -> int | None:
        return (self.published or self.endpoint).port

    @property
    def credentials(self) -> Credentials | None:
        e = self.endpoint
        return Credentials(e.user, e.password, e.database) if e.user is not None else None

    @property
    def storage_engine(self) -> str | None:
        """The storage engine this start's configuration selects (None: the server's default)."""
        server = self.engine.server
        return server.storage_engine(self.provenance.get("config")) if server else None

    @property
    def cgroup(self) -> str | None:
        """The container's cgroup path, as `perf stat -G` takes it (None when embedded)."""
        return self.scope.perf_cgroup

    def session(self, timeout: float = 10.0, *, unix_socket: bool = False, local_files: bool = False,
                node: str | None = None) -> Session:
        """A new session (its own connection), closed when the instance stops; through the
        server's Unix socket with `unix_socket` (the instance must have been started with one);
        `local_files`: allowed to send this host's files to the server's bulk load; on one node of
        a cluster with `node` (its name, `node2`)."""
        endpoint = self._node(node).endpoint if node is not None else self._endpoint(unix_socket)
        session = (self.client or self.engine.client).open(endpoint, timeout, local_files=local_files)
        self._sessions.append(session)
        return session

    def host_path(self, path: str | None = None) -> Path:
        """Where the engine keeps `path` (a path inside its container) as this host sees it, so its
        size is read from outside: nothing runs in the engine's cgroup. A server's is overlay2's
        merged view of its container; an embedded engine's, its working folder (`path` ignored)."""
        if self.container_id is None:
            assert self.endpoint.path is not None
            return Path(self.endpoint.path).parent
        from ..host.docker_host import docker_client

        attrs = docker_client().containers.get(self.container_id).attrs
        for mount in attrs.get("Mounts") or []:  # a volume over the folder: its own host directory
            destination = mount.get("Destination", "")
            if path and (path == destination or path.startswith(destination.rstrip("/") + "/")):
                return Path(mount["Source"]) / path[len(destination):].lstrip("/")
        merged = (attrs.get("GraphDriver") or {}).get("Data", {}).get("MergedDir")
        if not merged:
            raise EngineStartError(f"{self.key}: Docker's storage driver "
                                   f"{(attrs.get('GraphDriver') or {}).get('Name')!r} shows no merged directory")
        return Path(merged) / (path or "/").lstrip("/")

    def _node(self, name: str) -> NodeInstance:
        found = next((n for n in self.nodes if n.name == name), None)
        if found is None:
            raise ParameterError(f"{self.key} has no node {name!r}" + (
                f" (its nodes: {', '.join(n.name for n in self.nodes)})" if self.nodes else " (it is not a cluster)"))
        if found.endpoint is None:
            raise ParameterError(f"{self.key} node {name} serves no SQL (role {found.role})")
        return found

    @property
    def sql_nodes(self) -> list[str]:
        """The nodes a client can query, entry node first."""
        return [n.name for n in self.nodes if n.endpoint is not None]

    def connect(self, *, unix_socket: bool = False) -> Any:
        """The driver's own connection of a new session (DB-API for SQL engines)."""
        return self.session(unix_socket=unix_socket).raw

    def _endpoint(self, unix_socket: bool) -> Endpoint:
        if not unix_socket:
            return self.endpoint
        if self.socket_endpoint is None:
            raise ParameterError(f"{self.key} was not started with a Unix socket (start(..., unix_socket=True))")
        return self.socket_endpoint

    def query(self, operation: Any, session: Session | None = None) -> Any:
        """Run one operation on `session` (or a new one) and return its result."""
        return (session or self.session()).execute(operation)

    def sqlalchemy_url(self):
        """A sqlalchemy URL object; render it with hide_password=True when you print it."""
        from sqlalchemy.engine import URL

        client = self._sql_client()
        e = self.endpoint
        if client.sqlalchemy_driver is None:
            return URL.create(self.engine.key, database=str(e.path))
        return URL.create(client.sqlalchemy_driver, username=e.user, password=e.password, host=e.host, port=e.port,
                          database=e.database)

    def sqlalchemy_engine(self, *, unix_socket: bool = False, **kwargs: Any):
        from sqlalchemy import create_engine

        client = self._sql_client()
        wrap = client.sqlalchemy_wrap
        if wrap is not None:
            return create_engine(f"{self.engine.key}://", creator=lambda: wrap(self.connect()), **kwargs)
        if unix_socket:
            assert client.sqlalchemy_socket_args is not None
            socket = self._endpoint(True).socket
            assert socket is not None
            args = {**kwargs.pop("connect_args", {}), **client.sqlalchemy_socket_args(socket)}
            return create_engine(self.sqlalchemy_url().set(host=None, port=None), connect_args=args, **kwargs)
        return create_engine(self.sqlalchemy_url(), **kwargs)

    def _sql_client(self) -> SqlClient:
        if not isinstance(self.engine.client, SqlClient):
            raise TypeError(f"{self.key} speaks {self.engine.client.protocol}, not SQL: no SQLAlchemy engine")
        if not self.engine.client.has_sqlalchemy_dialect:
            raise TypeError(f"{self.key}: SQLAlchemy has no dialect for {self.engine.title}: use its DB-API session")
        return self.engine.client

    def snapshot_data(self) -> DataSnapshot:
        """Copy this server's data directory to a new volume: its before-snapshot statements first
        (a checkpoint: little left to recover; old binary logs purged), then the container frozen
        (cgroup freezer, `docker pause`) while the engine's own image copies the volume, so the copy
        is one instant's state, less the files the server never reads back (`snapshot_skip`)."""
        from ..host.docker_host import docker_client

        server = self.engine.server
        if self.data_volume is None or server is None:
            raise ParameterError(f"{self.key} was not started with a data volume (start(..., data_volume=True))")
        skip: list[str] = []
        if server.before_snapshot or server.snapshot_skip:
            session = self.engine.client.open(self.endpoint)
            try:
                for statement in server.before_snapshot:
                    session.execute(statement)
                if server.snapshot_skip:
                    skip = [row[0] for row in session.execute(server.snapshot_skip)]
            finally:
                session.close()
        client = docker_client()
        target = _create_volume(client, self.engine, self.run_id, "snapshot")
        container = client.containers.get(self.container_id)
        started = time.perf_counter()
        container.pause()
        try:
            client.containers.run(self.provenance["image_id"], entrypoint=["sh", "-c", _COPY_SCRIPT], user="0",
                                  environment={"SKIP": "\n".join(skip)},
                                  network_mode="none", remove=True, labels=resource_labels(self.engine, None),
                                  volumes={self.data_volume: {"bind": "/from", "mode": "ro"},
                                           target: {"bind": "/to", "mode": "rw"}})
        except Exception as exc:
            _remove_volume(client, target)
            raise DataSnapshotError(f"{self.key}: copying its data directory failed: {exc}") from exc
        finally:
            container.unpause()
        return DataSnapshot(self.key, self.provenance["image_id"], target, self.credentials, self.container_id,
                            time.perf_counter() - started, left_out=len(skip))

    def close_sessions(self) -> None:
        for session in self._sessions:
            try:
                session.close()
            except Exception:
                pass
        self._sessions.clear()

    def log_tail(self, lines: int = 30) -> str | None:
        """The server's last log lines (None: an embedded engine): a step that lost its connection
        keeps what the server said as it went (a crash's signal, an out-of-memory kill)."""
        if self.container_id is None:
            return None
        from ..host.docker_host import docker_client

        try:
            return _log_tail(docker_client().containers.get(self.container_id), lines)
        except Exception as exc:
            return f"(logs unavailable: {exc})"

    def __repr__(self) -> str:
        where = f"127.0.0.1:{self.port}" if self.port else "in-process"
        return f"<Instance {self.key} {where} {self.provenance.get('server_version')!r}>"


def client_endpoint(container, port: int, published: Endpoint) -> tuple[Endpoint, str]:
    """Where benchlib's clients reach a server, and the path said in words. The container's own
    address on its Docker network where this host reaches it: a published port on 127.0.0.1 is
    relayed by docker-proxy, a process outside every measured scope whose CPU and copies would sit
    between the client and the server in each round trip (and compete with sysbench for the
    client's core). Else the published port."""
    networks = (container.attrs.get("NetworkSettings") or {}).get("Networks") or {}
    for name, network in networks.items():
        address = network.get("IPAddress")
        if not address:
            continue
        try:
            socket.create_connection((address, port), timeout=1.0).close()
        except OSError:
            continue
        return (replace(published, host=address, port=port),
                f"the container's address {address}:{port} on Docker network {name} (no docker-proxy)")
    return published, (f"the published port {published.host}:{published.port} (relayed by docker-proxy where Docker "
                       "runs its userland proxy)")


def read_durability(instance: Instance) -> str:
    """What a commit waits for on this start, as the engine reports it ("synchronous_commit=on,
    fsync=on"), or its declared note where it has no setting to read. Read once, right after the
    start, on a connection of its own."""
    return _read_settings(instance, instance.engine.durability, instance.engine.durability_note)


def read_isolation(instance: Instance) -> str:
    """The transaction isolation this start runs at ("transaction_isolation=read committed"), read
    as the durability is, or the engine's declared level where it has no setting."""
    return _read_settings(instance, instance.engine.isolation, instance.engine.isolation_note)


def _read_settings(instance: Instance, settings: tuple[tuple[str, str], ...], note: str) -> str:
    engine = instance.engine
    if not settings:
        return note or "not declared for this engine"
    session = engine.client.open(instance.endpoint, 10.0)
    values = []
    try:
        for name, query in settings:
            try:
                values.append(f"{name}={session.execute(query)[0][-1]}")
            except Exception as exc:  # a setting this version lacks: said, never guessed
                # MySQL 9.7 has no innodb_snapshot_isolation: absent, not unknown.
                absent = "unknown system variable" in str(exc).lower()
                values.append(f"{name} absent (not a variable of this server)" if absent else
                              f"{name} unreadable ({type(exc).__name__})")
    finally:
        session.close()
    return ", ".join(values)


class start:
    """Start an engine: `with start("postgres") as eng:`. Stops and removes it on exit,
    on Ctrl-C and on errors. `config` holds server settings (postgres `-c`, mysql `--k=v`).
    `unix_socket`: the server also listens on a Unix socket in a host directory mounted into the
    container (`Instance.socket_endpoint`); an engine without one fails here, before any start.
    `memory_limit_mb` caps the container's memory, page cache included (an IO-bound regime: a
    file the engine reads through the OS cache must not stay cached beyond the limit).
    `cpu_limit` caps a server's CPU in cores (a CFS quota, Docker's --cpus): a smaller instance.
    `data_volume`: the server's data directory on a volume of this start's own, so that
    `Instance.snapshot_data` can copy it; `restore`: begin from such a snapshot instead (same
    engine and image; the volume is this start's from then on).
    `nodes`: a cluster's node count (default: its declaration's); checked before any container.
    A cluster's cpuset, memory and CPU limits apply to each of its nodes.
    `valgrind`: the whole server under valgrind's callgrind (its image with valgrind, the container
    allowed to ptrace, its dumps in a host folder): `Instance.callgrind` switches its windows."""

    def __init__(self, key: str, *, config: Mapping[str, Any] | None = None, run_id: str | None = None,
                 startup_timeout: float | None = None, cpuset: str | None = None, unix_socket: bool = False,
                 memory_limit_mb: int | None = None, cpu_limit: float | None = None, data_volume: bool = False,
                 restore: DataSnapshot | None = None, nodes: int | None = None, valgrind: bool = False):
        self.engine = get_engine(key)
        if valgrind:
            from ..counters.valgrind import engine_problem, host_problem

            problem = engine_problem(self.engine) or host_problem()
            if problem:
                raise ParameterError(f"{key} cannot start under valgrind: {problem}")
        self.valgrind = valgrind
        if unix_socket and (self.engine.server is None or self.engine.server.socket_setting is None):
            raise ParameterError(f"{key} has no Unix socket to connect through "
                                 f"({'it runs in-process' if self.engine.server is None else 'none declared'})")
        server = self.engine.server
        if (data_volume or restore) and (server is None or server.data_dir is None
                                         or server.password_statements is None):
            raise ParameterError(f"{key} declares no data directory to snapshot and restore "
                                 f"({'it runs in-process' if server is None else 'none declared'})")
        if restore is not None and restore.engine != key:
            raise ParameterError(f"a {restore.engine} data snapshot cannot start {key}")
        self.data_volume = data_volume or restore is not None
        self.restore = restore
        cluster = self.engine.cluster
        if cluster is None and nodes not in (None, 1):
            raise ParameterError(f"nodes of {key} must be 1: it is a single-node engine, got {nodes!r}")
        if cluster is not None and (data_volume or restore is not None):
            raise ParameterError(f"{key} is a cluster: its nodes' data directories are not snapshotted or restored")
        # The whole plan (names, counts) is checked here, before any image or container.
        self.plan = cluster.plan(cluster.nodes if nodes is None else nodes, key) if cluster else ()
        self.unix_socket = unix_socket
        self.config = dict(config or {})
        self.cpuset = cpuset  # Docker cpuset_cpus of a server engine (benchlib.host.cpus); embedded: ignored
        self.memory_limit_mb = memory_limit_mb
        self.cpu_limit = cpu_limit
        self.run_id = run_id
        self.startup_timeout = startup_timeout
        self._cleanup: list[Any] = []
        self.instance: Instance | None = None

    def __enter__(self) -> Instance:
        try:
            if self.engine.cluster is not None:
                self.instance = self._start_cluster(self.engine)
            elif self.engine.server is not None:
                self.instance = self._start_server(self.engine)
            else:
                self.instance = self._start_embedded(self.engine)
            self.instance.provenance["durability"] = read_durability(self.instance)
            self.instance.provenance["isolation"] = read_isolation(self.instance)
        except BaseException:
            self._stop()
            raise
        return self.instance

    def __exit__(self, *exc_info: Any) -> None:
        self._stop()

    def _stop(self) -> None:
        if self.instance is not None:
            self.instance.close_sessions()
        for action in reversed(self._cleanup):
            action()
        self._cleanup.clear()

    # -- embedded ------------------------------------------------------------------------------
    def _start_embedded(self, engine: Engine) -> Instance:
        started = time.perf_counter()
        workdir = Path(tempfile.mkdtemp(prefix=f"benchlib-{engine.key}-"))
        self._cleanup.append(lambda: shutil.rmtree(workdir, ignore_errors=True))
        assert engine.embedded is not None
        endpoint = Endpoint(path=workdir / engine.embedded.file_name)
        child = None
        if self.valgrind:
            # The library in a child process under callgrind, serving the sessions' statements:
            # the engine's CPU is that child's (under valgrind, not its cost: stored apart).
            from ..counters.callgrind_embedded import Child
            from ..counters.valgrind import dump_folder

            dumps = dump_folder()
            self._cleanup.append(lambda: shutil.rmtree(dumps.parent, ignore_errors=True))
            child = Child.start(engine, endpoint.path, dumps)
            self._cleanup.append(child.stop)
        scope = cgroups.children_scope(running=child.pid) if child else cgroups.process_scope()
        instance = Instance(engine, endpoint, None, scope, {}, client=child)
        if child is not None:
            from ..counters.valgrind import Callgrind

            instance.callgrind = Callgrind.local(child)
            child.calibrate(instance.callgrind)
        version = instance.session().version()
        instance.provenance = {
            "engine": engine.key, "kind": engine.kind, "image_ref": engine.embedded.library(), "image_id": None,
            "image_digest": None, "image_source": "embedded",
            "image_note": "in a child process under valgrind" if child else "in-process library",
            "server_version": version, "config": dict(self.config),
            "startup_seconds": time.perf_counter() - started, "container_id": None, "cgroup": None,
        }
        if child is not None:
            instance.provenance["counter"] = instance.callgrind.describe()
        return instance

    # -- server --------------------------------------------------------------------------------
    def _start_server(self, engine: Engine) -> Instance:
        from ..host.docker_host import docker_client
        from .images import resolve_image

        client = docker_client()
        reap_stale(client)
        image = resolve_image(engine, valgrind=self.valgrind)
        server = engine.server
        assert server is not None
        creds = Credentials(server.user, secrets.token_urlsafe(18), server.database)
        volume = None
        if self.restore is not None:
            if self.restore.image_id != image.image_id:
                raise EngineStartError(f"{engine.key}: its data snapshot was taken on image {self.restore.image_id[:19]}, "
                                       f"this start resolves {image.image_id[:19]}: the data may not be readable")
            volume = self.restore.take()
            creds = self.restore.credentials  # until ready; then a fresh password (_fresh_password)
        elif self.data_volume:
            volume = _create_volume(client, engine, self.run_id, "data")
        if volume is not None:  # registered before the container: removed after it
            self._cleanup.append(lambda: _remove_volume(client, volume))
        # vgdb wakes a server blocked in a system call through ptrace, and refuses to for a process
        # whose pid is 1 ("unexpected lwpid"): Docker's init is pid 1, the server its child. Without
        # it a command waits until the server wakes by itself (seconds: MariaDB 8 s here).
        container = self._container(image.ref, engine, creds, publish=True,
                                    **({"cap_add": ["SYS_PTRACE"], "init": True} if self.valgrind else {}))
        if volume is not None:
            # An empty volume is filled with the image's own data directory at its first mount.
            container.with_volume_mapping(volume, server.data_dir, "rw")
        config = dict(self.config)
        dumps: Path | None = None
        if self.valgrind:
            from ..counters.valgrind import DUMP_DIR, dump_folder

            assert engine.valgrind is not None
            config = {**engine.valgrind.config, **config}
            dumps = dump_folder()
            self._cleanup.append(lambda: shutil.rmtree(dumps.parent, ignore_errors=True))
            container.with_volume_mapping(str(dumps), DUMP_DIR, "rw")
        socket_dir: Path | None = None
        if self.unix_socket:
            assert server.socket_setting is not None
            socket_dir = Path(tempfile.mkdtemp(prefix="benchlib-sock-"))
            socket_dir.chmod(0o777)  # the server's own user (postgres, mysql) creates the socket here
            self._cleanup.append(lambda: shutil.rmtree(socket_dir, ignore_errors=True))
            container.with_volume_mapping(str(socket_dir), SOCKET_MOUNT, "rw")
            config.update(server.socket_setting(SOCKET_MOUNT))
        command = server.command(config)
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
        endpoint = Endpoint(container.get_container_host_ip(), int(container.get_exposed_port(server.port)),
                            creds.user, creds.password, creds.database)
        version = self._wait_ready(engine, container, endpoint)
        if self.restore is not None:
            endpoint = self._fresh_password(engine, endpoint)
        startup = time.perf_counter() - started

        container.get_wrapped_container().reload()
        pid = container.get_wrapped_container().attrs["State"]["Pid"]
        scope = cgroups.scope_for_pid(pid)
        published = endpoint
        endpoint, client_path = client_endpoint(container.get_wrapped_container(), server.port, published)
        instance = Instance(engine, endpoint, container_id, scope, {
            "engine": engine.key, "kind": engine.kind, "image_ref": image.ref, "image_id": image.image_id,
            "image_digest": image.digest, "image_source": image.source, "image_note": image.note,
            "server_version": version, "startup_seconds": startup,
            "config": {**config, **({"memory_limit_mb": self.memory_limit_mb} if self.memory_limit_mb else {}),
                       **({"cpu_limit": self.cpu_limit} if self.cpu_limit else {}),
                       **({"data_restored_from": self.restore.taken_from} if self.restore else {})},
            "container_id": container_id, "cgroup": scope.perf_cgroup, "cpuset": self.cpuset,
            "client_path": client_path,
        })
        instance.data_volume, instance.run_id, instance.published = volume, self.run_id, published
        if dumps is not None:
            from ..counters.valgrind import Callgrind

            instance.callgrind = Callgrind.attach(instance, dumps)
            instance.provenance["counter"] = instance.callgrind.describe()
        if socket_dir is not None:
            instance.socket_endpoint = replace(endpoint, host=None, port=None, socket=socket_dir / server.socket_file)
            self._wait_socket(instance)
        return instance

    @staticmethod
    def _fresh_password(engine: Engine, endpoint: Endpoint) -> Endpoint:
        """A restored data directory answers to the password it was made with: give its user a
        new random one, as every start has."""
        assert engine.server is not None and engine.server.password_statements is not None
        fresh = Credentials(endpoint.user, secrets.token_urlsafe(18), endpoint.database)
        session = engine.client.open(endpoint, timeout=10.0)
        try:
            for statement in engine.server.password_statements(fresh):
                session.execute(statement)
        finally:
            session.close()
        return replace(endpoint, password=fresh.password)

    def _container(self, image_ref: str, engine: Engine, creds: Credentials, *, publish: bool, **kwargs: Any):
        """A container of `engine` not yet started: its env conventions, labels, limits and, with
        `publish`, the client port on 127.0.0.1."""
        server = engine.server
        assert server is not None
        limits = {"cpuset_cpus": self.cpuset} if self.cpuset else {}
        if self.memory_limit_mb:
            # Swap equal to memory: no swap, so the limit is a limit and not a slower tier.
            limits.update(mem_limit=f"{self.memory_limit_mb}m", memswap_limit=f"{self.memory_limit_mb}m")
        if self.cpu_limit:
            limits["nano_cpus"] = int(self.cpu_limit * 1e9)
        labels = {**resource_labels(engine, self.run_id), **kwargs.pop("labels", {})}
        return loopback_container(image_ref, server.port if publish else None, server.env(creds), labels,
                                  **limits, **kwargs)

    # -- cluster -------------------------------------------------------------------------------
    def _start_cluster(self, engine: Engine) -> Instance:
        """Every node of the plan on a network of its own: each started once the one before it
        answers (or, with an `init` step, all first, then init), its join statements run as soon
        as it answers; then the entry node's `formed` statements, and readiness: the cluster
        counts every member. Any failure stops every node and removes the network."""
        from ..host.docker_host import configure_testcontainers, docker_client
        from .images import resolve_cluster_images

        client = docker_client()
        reap_stale(client)
        cluster, server = engine.cluster, engine.server
        assert cluster is not None and server is not None
        images = resolve_cluster_images(engine)  # every role's image before the first container
        config = {**server.default_config, **self.config}
        server.check_storage(config)
        commands = {node.name: cluster.role(node.role).command(node, config) for node in self.plan}
        configure_testcontainers()
        from testcontainers.core.network import Network

        creds = Credentials(server.user, secrets.token_urlsafe(18), server.database)
        started = time.perf_counter()
        network = Network(docker_network_kw={"labels": resource_labels(engine, self.run_id)}).create()
        self._register_network(network)
        running: list[tuple[Any, Any, Endpoint | None]] = []  # node, container, endpoint
        answered: dict[str, float] = {}  # node -> seconds from the first start until it answered and joined
        for node in self.plan:
            role = cluster.role(node.role)
            image = images[role.name]
            container = self._container(image.ref, engine, creds, publish=role.sql,
                                        labels={LABEL_NODE: node.name}, hostname=node.name,
                                        **({"user": role.user} if role.user else {}))
            container.with_network(network).with_network_aliases(node.name)
            if commands[node.name]:
                container.with_command(commands[node.name])
            try:
                container.start()
            finally:
                if container.get_wrapped_container() is not None:
                    self._register(container)
            endpoint = (Endpoint(container.get_container_host_ip(), int(container.get_exposed_port(server.port)),
                                 creds.user, creds.password, creds.database) if role.sql else None)
            running.append((node, container, endpoint))
            if cluster.init is None:
                self._join(engine, node, container, endpoint, creds)
                answered[node.name] = time.perf_counter() - started
        if cluster.init is not None:
            self._init(engine, running)
            for node, container, endpoint in running:
                self._join(engine, node, container, endpoint, creds)
                answered[node.name] = time.perf_counter() - started
        entry = next(r for r in running if r[0].role == cluster.entry_role)
        entry_session = engine.client.open(entry[2], timeout=10.0)
        try:
            for statement in cluster.formed:
                entry_session.execute(statement)
            self._wait_members(engine, entry_session, running)
        finally:
            entry_session.close()
        startup = time.perf_counter() - started

        nodes = []
        published: dict[str, Endpoint | None] = {}
        client_paths: dict[str, str] = {}
        for node, container, endpoint in running:
            wrapped = container.get_wrapped_container()
            wrapped.reload()
            scope = cgroups.scope_for_pid(wrapped.attrs["State"]["Pid"])
            image = images[node.role]
            version = None
            published[node.name] = endpoint
            if endpoint is not None:
                # The single nodes it is compared with are reached the same way.
                endpoint, client_paths[node.name] = client_endpoint(wrapped, server.port, endpoint)
                session = engine.client.open(endpoint, timeout=10.0)
                try:
                    version = session.version()
                finally:
                    session.close()
            nodes.append(NodeInstance(node.role, node.name, wrapped.id, scope, endpoint, {
                "role": node.role, "node": node.name, "image_ref": image.ref, "image_id": image.image_id,
                "image_digest": image.digest, "image_source": image.source, "image_note": image.note,
                "server_version": version, "container_id": wrapped.id, "cgroup": scope.perf_cgroup,
                # From the cluster's first container until this node answered and joined.
                "startup_seconds": answered[node.name],
            }))
        scope = cgroups.cluster_scope([n.scope for n in nodes])
        entry_node = next(n for n in nodes if n.name == entry[0].name)
        main = images[entry[0].role]
        instance = Instance(engine, entry_node.endpoint, entry_node.container_id, scope, {
            "engine": engine.key, "kind": engine.kind, "image_ref": main.ref, "image_id": main.image_id,
            "image_digest": main.digest, "image_source": main.source, "image_note": main.note,
            "server_version": entry_node.provenance["server_version"], "startup_seconds": startup,
            "config": {**self.config, "nodes": len(nodes),
                       **({"memory_limit_mb": self.memory_limit_mb} if self.memory_limit_mb else {}),
                       **({"cpu_limit": self.cpu_limit} if self.cpu_limit else {})},
            "container_id": ",".join(n.container_id for n in nodes),
            "cgroup": ",".join(n.scope.perf_cgroup or "" for n in nodes), "cpuset": self.cpuset,
            "nodes": [n.provenance for n in nodes], "client_path": client_paths[entry_node.name],
        }, nodes=nodes, published=published[entry_node.name])
        return instance

    def _join(self, engine: Engine, node, container, endpoint: Endpoint | None, creds: Credentials) -> None:
        """Wait until the node answers (a node serving no SQL: until its container runs), then run
        its role's join statements on it."""
        if endpoint is None:
            return
        self._wait_ready(engine, container, endpoint, what=f"{engine.key} node {node.name}")
        statements = engine.cluster.role(node.role).join(node, creds)
        if not statements:
            return
        session = engine.client.open(endpoint, timeout=10.0)
        try:
            for statement in statements:
                try:
                    session.execute(statement)
                except Exception as exc:
                    raise EngineStartError(
                        f"{engine.key} node {node.name} could not join: {statement.split(' password')[0]!r} failed: "
                        f"{exc}; last log lines:\n{_log_tail(container.get_wrapped_container())}") from None
        finally:
            session.close()

    def _init(self, engine: Engine, running) -> None:
        """The cluster's init command in its first node, once every container runs."""
        first = running[0][1].get_wrapped_container()
        command = engine.cluster.init(tuple(r[0] for r in running))
        deadline = time.monotonic() + (self.startup_timeout or engine.server.startup_timeout)
        while True:
            code, output = first.exec_run(command)
            if code == 0:
                return
            if time.monotonic() > deadline:
                raise EngineStartError(f"{engine.key}: {' '.join(command)} failed (exit {code}): "
                                       f"{output.decode(errors='replace')[-500:]}")
            time.sleep(0.5)  # the other nodes may not listen yet

    def _wait_members(self, engine: Engine, session: Session, running) -> None:
        """Poll the cluster's members query on the entry node until it counts every member; a
        node whose container exits fails the start at once, with its last log lines."""
        cluster = engine.cluster
        expected = cluster.expected_members(tuple(r[0] for r in running))
        timeout = self.startup_timeout or engine.server.startup_timeout
        deadline = time.monotonic() + timeout
        counted: Any = None
        while True:
            try:
                counted = int(session.execute(cluster.members)[0][0])
            except Exception as exc:  # a member still joining can make the query itself fail
                counted = f"error: {exc}"
            if counted == expected:
                return
            for node, container, _ in running:
                wrapped = container.get_wrapped_container()
                wrapped.reload()
                if wrapped.status in ("exited", "dead"):
                    raise EngineStartError(f"{engine.key} node {node.name} exited while the cluster formed; last log "
                                           f"lines:\n{_log_tail(wrapped)}")
            if time.monotonic() > deadline:
                tails = "\n".join(f"-- {node.name}:\n{_log_tail(container.get_wrapped_container(), 8)}"
                                  for node, container, _ in running)
                raise EngineStartError(f"{engine.key}: the cluster counted {counted} of {expected} members after "
                                       f"{timeout:.0f}s ({cluster.members}); last log lines:\n{tails}")
            time.sleep(0.1)

    def _register_network(self, network) -> None:
        """Removed after every container (cleanup runs in reverse): Docker refuses to remove a
        network that still has endpoints."""
        with _live_lock:
            _live_networks[network.name] = network

        def remove() -> None:
            with _live_lock:
                _live_networks.pop(network.name, None)
            try:
                network.remove()
            except Exception:
                pass  # reap_stale removes it once its owner is gone

        self._cleanup.append(remove)

    def _wait_socket(self, instance: Instance) -> None:
        """The socket appears a moment after TCP answers on some servers (MySQL creates it last)."""
        deadline = time.monotonic() + 30.0
        while True:
            try:
                instance.engine.client.open(instance.socket_endpoint, timeout=5.0).close()
                return
            except Exception as exc:
                if time.monotonic() > deadline:
                    raise EngineStartError(f"{instance.key}: its Unix socket {instance.socket_endpoint.socket} did "
                                           f"not answer: {exc}") from exc
                time.sleep(0.05)

    def _register(self, container) -> None:
        self._cleanup.append(track(container))

    def _wait_ready(self, engine: Engine, container, endpoint: Endpoint, what: str | None = None) -> str:
        """Poll login + ready + version; fail fast if the container exits."""
        what = what or engine.key
        assert engine.server is not None
        timeout = self.startup_timeout or engine.server.startup_timeout
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        wrapped = container.get_wrapped_container()
        while time.monotonic() < deadline:
            try:
                session = engine.client.open(endpoint, timeout=max(1.0, min(10.0, deadline - time.monotonic())))
                try:
                    session.ready()
                    return session.version()
                finally:
                    session.close()
            except Exception as exc:  # not up yet: refused, reset, auth not ready, ...
                last_error = exc
            wrapped.reload()
            if wrapped.status in ("exited", "dead"):
                raise EngineStartError(
                    f"{what} container exited during start-up (image {container.image}); "
                    f"last log lines:\n{_log_tail(wrapped)}"
                )
            time.sleep(0.05)
        raise EngineStartError(
            f"{what} was not ready within {timeout:.0f}s (image {container.image}); last error: "
            f"{last_error}; last log lines:\n{_log_tail(wrapped)}"
        )


def _log_tail(wrapped, lines: int = 15) -> str:
    try:
        return wrapped.logs(tail=lines).decode(errors="replace")
    except Exception as exc:
        return f"(logs unavailable: {exc})"

