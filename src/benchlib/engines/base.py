"""What an engine module declares: how to start it and how to talk to it, as data.

    Engine(key, title, color, family, client=..., server=Server(...))    # a container
    Engine(key, title, color, family, client=..., embedded=Embedded(...)) # in this process
    Engine(key, title, color, family, client=..., server=Server(...), cluster=Cluster(...))  # N containers

`family` names the dialect family workloads fall back to (the MySQL family shares one dialect:
MySQL, MariaDB, later TiDB). What differs per wire protocol lives in a client (`clients.py`),
never in `if engine == ...` branches; what a workload says to an engine lives in the workload.

A server declares the major versions it can be asked for (`postgres@15`), each with its official
tag and its offline recipe; the bare key runs the default version. `Engine.at(version)` is the
engine pinned to one of them: the registry derives every `key@version` from the declarations.

A cluster is a server engine whose `cluster` says how N containers of it (or of other images, for
roles such as TiDB's PD and TiKV) form one: the roles in start order, each node's command, SQL a
node runs once it answers (a join), SQL the entry node runs once every node answers, and the query
that says how many members the cluster counts (readiness)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ..core.errors import ParameterError, UnknownEngineError
from .clients import Client


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str
    database: str

    def __repr__(self) -> str:  # never print a password, not even in a traceback
        return f"Credentials(user={self.user!r}, password='***', database={self.database!r})"


@dataclass(frozen=True)
class Recipe:
    """An offline build: `recipes/<folder>/Dockerfile` FROM benchlib's Debian base image of `suite`,
    installing `packages`. One folder serves every version: the suite and packages are build args."""

    folder: str
    suite: str  # Debian suite of the base image: bookworm, trixie, sid
    packages: str
    # Builds FROM another engine's recipe image (`postgres@17`) instead of the suite's base: an
    # engine that runs on top of another (FerretDB over PostgreSQL) reuses its whole recipe.
    base_recipe: str | None = None
    # A program benchlib builds on the host and the recipe copies in (`gobuild.GoBinary`):
    # anything with problem(), identity() and build_into(folder).
    host_build: Any = None

    @property
    def description(self) -> str:
        on = f"the {self.base_recipe} recipe, " if self.base_recipe else ""
        return f"recipes/{self.folder} on {on}Debian {self.suite} ({self.packages})"


@dataclass(frozen=True)
class Version:
    """A major version users can ask for as `key@version`."""

    version: str
    official_image: str | None  # the official tag of this major; None: no official image has it
    recipe: Recipe | None = None
    no_recipe_reason: str = ""
    no_official_reason: str = ""


@dataclass(frozen=True)
class Server:
    """A containerised engine: the official images' conventions, and offline recipes."""

    port: int
    env: Callable[[Credentials], dict[str, str]]  # the official image's env conventions
    user: str
    versions: tuple[Version, ...]
    default: str  # the version the bare key runs: its official tag where it can be pulled ...
    local_default: str | None = None  # ... and, offline, this version's recipe when that differs
    database: str = "bench"
    # Start command from the configuration mapping; None keeps the image's own command.
    config_command: Callable[[Mapping[str, Any]], list[str] | None] = lambda config: None
    default_config: Mapping[str, Any] = field(default_factory=dict)  # what a variant (MyRocks) sets
    # The setting that picks the storage engine (table access method), and the values every image
    # of this engine accepts: checked before any container starts.
    storage_setting: str | None = None
    storage_engines: tuple[str, ...] = ()
    storage_hint: str = ""  # where to look for a storage engine this one lacks
    startup_timeout: float = 90.0
    # The settings that put the server's Unix socket into a directory (one the host mounts into
    # the container), and the socket's file name there. None: this server offers no Unix socket.
    socket_setting: Callable[[str], Mapping[str, Any]] | None = None
    socket_file: str = ""
    # Where the server keeps its data (every image of it: the env sets it where images differ). A
    # start can put it on a volume of its own, and a later start restore a snapshot of that volume
    # (lifecycle.DataSnapshot) instead of loading the same data again. None: no snapshots.
    data_dir: str | None = None
    # Statements run before a snapshot: a checkpoint that writes every change to the data files, so
    # that the snapshot needs little recovery at its next start (without one the snapshot is still
    # crash-consistent, taken with the server frozen, and recovered from the log as after a power
    # cut), and the removal of logs no restart reads (binary logs a replica would have read).
    before_snapshot: tuple[str, ...] = ()
    # A query listing the files (relative to data_dir) the copy leaves out because the server never
    # reads them back: PostgreSQL's recycled WAL segments, named past the one it writes. They made
    # half of a 2M-row table's copy, and the copy's sync is most of a snapshot's time.
    snapshot_skip: str | None = None
    # The statements giving `user` a new password: a restored data directory holds the password it
    # was made with, and every start gets a fresh one.
    password_statements: Callable[[Credentials], list[str]] | None = None

    def __post_init__(self) -> None:
        known = [v.version for v in self.versions]
        for wanted in (self.default, self.local_default):
            if wanted is not None and wanted not in known:
                raise ValueError(f"default version {wanted!r} is not one of the declared versions {known}")

    def version(self, version: str) -> Version:
        return next(v for v in self.versions if v.version == version)

    @property
    def official_image(self) -> str | None:
        return self.version(self.default).official_image

    @property
    def no_official_reason(self) -> str:
        return self.version(self.default).no_official_reason

    @property
    def local_version(self) -> Version:
        return self.version(self.local_default or self.default)

    @property
    def recipe(self) -> Recipe | None:
        return self.local_version.recipe

    @property
    def no_recipe_reason(self) -> str:
        return self.local_version.no_recipe_reason

    @property
    def defaults_differ(self) -> bool:
        """The official default and the offline recipe are different majors (MySQL 8.4 vs 9)."""
        return self.local_default is not None and self.local_default != self.default

    def storage_engine(self, config: Mapping[str, Any] | None = None) -> str | None:
        """The storage engine `config` (on top of the engine's defaults) selects; None: the server's
        own default. For tools that name one explicitly (sysbench's --mysql-storage-engine=innodb)."""
        if self.storage_setting is None:
            return None
        merged = {k.replace("-", "_").lower(): v for k, v in {**self.default_config, **(config or {})}.items()}
        value = merged.get(self.storage_setting)
        return None if value is None else str(value).lower()

    def command(self, config: Mapping[str, Any]) -> list[str] | None:
        """The container command for `config` on top of the engine's own defaults; a storage
        engine the server does not have fails here, before the container is created."""
        merged = {**self.default_config, **config}
        self.check_storage(merged)
        return self.config_command(merged)

    def check_storage(self, config: Mapping[str, Any]) -> None:
        if self.storage_setting is None:
            return
        for name, value in config.items():
            if name.replace("-", "_").lower() == self.storage_setting and str(value).lower() not in self.storage_engines:
                hint = f"; {self.storage_hint}" if self.storage_hint else ""
                raise ParameterError(f"{name}={value!r}: this server has no such storage engine (it has: "
                                     f"{', '.join(self.storage_engines)}){hint}")


@dataclass(frozen=True)
class Node:
    """One node of a cluster being started, as its role's callables see it."""

    role: str
    name: str  # its host name on the cluster's network: the role's name and its index (`node2`)
    index: int  # 1-based within its role
    members: tuple[tuple[str, str], ...]  # (role, name) of every node of the cluster, in start order

    @property
    def first(self) -> bool:
        return self.index == 1

    def names(self, role: str | None = None) -> list[str]:
        """The names of `role`'s nodes (default: this node's role), in start order."""
        wanted = role or self.role
        return [name for r, name in self.members if r == wanted]


@dataclass(frozen=True)
class Role:
    """Nodes of one kind. `command(node, config)` is the container command of one node, from the
    server settings (the engine's defaults and the caller's config, merged)."""

    name: str
    command: Callable[[Node, Mapping[str, Any]], list[str] | None]
    count: int | None = None  # None: the scalable role, as many nodes as the node count leaves for it
    # An official image of its own (TiKV, PD: other programs than the engine's); None: the engine's image.
    image: str | None = None
    sql: bool = True  # serves the engine's client protocol on the server's port (published on 127.0.0.1)
    user: str | None = None  # container user; None: the image's
    # SQL this node runs once it answers, before the next node starts (a Group Replication join).
    join: Callable[[Node, Credentials], tuple[str, ...]] = lambda node, credentials: ()


@dataclass(frozen=True)
class Cluster:
    """How N containers form one engine instance."""

    roles: tuple[Role, ...]  # started in this order, each node of a role after the one before it
    nodes: int  # the default node count, every role's nodes included
    min_nodes: int
    min_reason: str  # why fewer nodes would not be this cluster ("quorum: ...")
    # SQL on the entry node answering how many members the cluster counts (readiness: every node
    # of `members_of`, or of every role when None), e.g. Galera's wsrep_cluster_size.
    members: str
    members_of: str | None = None
    # SQL the entry node runs once every node answers, before readiness (PostgreSQL's
    # synchronous_standby_names: set earlier, the primary's own set-up would wait for a standby).
    formed: tuple[str, ...] = ()
    # A command run in the first node once every container runs (`cockroach init`); nodes answer
    # SQL only after it. None: each node answers as soon as it is up.
    init: Callable[[tuple[Node, ...]], list[str]] | None = None
    max_nodes: int = 7  # beyond this a 2-core host measures contention, not replication
    topology: str = ""  # one line for reports: what replicates what, and when a commit returns

    def __post_init__(self) -> None:
        scalable = [r for r in self.roles if r.count is None]
        if len(scalable) > 1:
            raise ValueError("a cluster has at most one role without a fixed count")
        if not any(r.sql for r in self.roles):
            raise ValueError("a cluster needs a role that serves SQL (its entry node)")
        self.plan(self.nodes)  # the declared default must itself be a valid cluster

    @property
    def fixed_nodes(self) -> int:
        return sum(r.count for r in self.roles if r.count is not None)

    @property
    def entry_role(self) -> str:
        """The role whose first node clients connect to."""
        return next(r.name for r in self.roles if r.sql)

    def check_nodes(self, key: str, nodes: Any) -> int:
        """The node count, or a ParameterError naming it (before any container starts)."""
        import numbers

        if isinstance(nodes, bool) or not isinstance(nodes, numbers.Integral):
            raise ParameterError(f"nodes of {key} must be an integer >= {self.min_nodes}, got {nodes!r}")
        if nodes < self.min_nodes:
            raise ParameterError(f"nodes of {key} must be >= {self.min_nodes} ({self.min_reason}), got {nodes}")
        if nodes > self.max_nodes:
            raise ParameterError(f"nodes of {key} must be <= {self.max_nodes} (more nodes than that on one host "
                                 f"measure contention for its cores, not replication), got {nodes}")
        if not any(r.count is None for r in self.roles) and nodes != self.fixed_nodes:
            raise ParameterError(f"nodes of {key} must be {self.fixed_nodes}: its roles have fixed counts, got {nodes}")
        return int(nodes)

    def plan(self, nodes: int, key: str = "cluster") -> tuple[Node, ...]:
        """Every node in start order, named after its role."""
        nodes = self.check_nodes(key, nodes)
        counts = [(r.name, r.count if r.count is not None else nodes - self.fixed_nodes) for r in self.roles]
        members = tuple((role, f"{role}{i}") for role, n in counts for i in range(1, n + 1))
        index = {role: 0 for role, _ in counts}
        out = []
        for role, name in members:
            index[role] += 1
            out.append(Node(role, name, index[role], members))
        return tuple(out)

    def role(self, name: str) -> Role:
        return next(r for r in self.roles if r.name == name)

    def expected_members(self, nodes: tuple[Node, ...]) -> int:
        return sum(1 for n in nodes if self.members_of is None or n.role == self.members_of)


# Why an engine does not run under valgrind, where several share the reason.
OFFICIAL_ONLY_NO_VALGRIND = ("official image only, and none could be pulled where benchlib's valgrind support was "
                             "built: its server was never tried under valgrind, so no wrapper is declared for it")


@dataclass(frozen=True)
class UnderValgrind:
    """How the whole server runs under valgrind's callgrind (`counter: valgrind`): the program that
    is the server in every image of the engine (replaced there by a wrapper that starts it under
    valgrind), the OS user it runs as (valgrind runs as it, and benchlib switches its
    instrumentation as it: vgdb answers its own user only), the arguments of invocations that are
    not the server (an init step, a version check: run natively, else initdb and the recipes'
    set-up would run under valgrind too), and settings the server needs under valgrind."""

    program: str  # absolute path; a shell glob that matches one file per image (/usr/lib/postgresql/*/bin/postgres)
    user: str
    native_when: tuple[str, ...] = ()  # exact arguments: any of them present, the program runs natively
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChildDriver:
    """How a child process reaches an embedded SQL engine: a DB-API module, imported by name (the
    child imports nothing of benchlib, whose registry would cost seconds under valgrind), and its
    connect() keywords, the database file being the first argument."""

    module: str
    connect_kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Embedded:
    """An in-process engine: a library, a file in a fresh temporary folder."""

    library: Callable[[], str]  # "duckdb==2.0.0": what provenance calls the image
    file_name: str
    # Work the library does on threads of its own after a call returns (RocksDB's flushes and
    # compactions): measured in settle windows, as a server's deferred work is.
    background_work: bool = False
    # Under valgrind (`counter: valgrind`) the library runs in a child Python process that serves
    # the sessions' statements: the DB-API module it imports there and its connect() keywords,
    # connected as `client` connects. None: not run under valgrind (the engine says why).
    child_driver: ChildDriver | None = None


@dataclass(frozen=True)
class Engine:
    key: str
    title: str
    color: str
    family: str  # dialect family: workloads look up `key`, the unversioned name, `variant_of`, `family`
    client: Client
    server: Server | None = None
    embedded: Embedded | None = None
    note: str = ""  # what a reader of a report must know about this engine
    variant_of: str | None = None  # same server, other configuration (mariadb-myrocks of mariadb)
    version: str | None = None  # the pinned major of `key@version`; None: the default
    # N containers as one instance; `server` is then its nodes' image and client conventions, and
    # `variant_of` names the single-node engine the cluster is compared with.
    cluster: Cluster | None = None
    # What a commit waits for, read from the engine as it starts ((setting, query) pairs, the
    # value in the first row's last column) and kept with the start's provenance: a write's cost
    # depends on it, and images differ. `durability_note` where the engine has no setting to read.
    durability: tuple[tuple[str, str], ...] = ()
    durability_note: str = ""
    # Which row versions a read sees and which writes conflict, read the same way: engines' defaults
    # differ (PostgreSQL READ COMMITTED, InnoDB REPEATABLE READ), and a read's cost depends on them.
    # `isolation_note` where the engine has one level and no setting to read.
    isolation: tuple[tuple[str, str], ...] = ()
    isolation_note: str = ""
    # How the server runs under valgrind (`counter: valgrind`); None: it does not, and
    # `no_valgrind_reason` says why (shown when a run asks for it).
    valgrind: UnderValgrind | None = None
    no_valgrind_reason: str = ""

    def __post_init__(self) -> None:
        if (self.server is None) == (self.embedded is None):
            raise ValueError(f"engine {self.key}: declare exactly one of server= or embedded=")
        if self.cluster is not None and (self.server is None or self.variant_of is None):
            raise ValueError(f"engine {self.key}: a cluster declares server= (its nodes) and variant_of= (its "
                             "single node)")

    @property
    def kind(self) -> str:
        if self.cluster is not None:
            return "cluster"
        return "server" if self.server is not None else "embedded"

    @property
    def name(self) -> str:
        """The key without its version: what colours, dialects and notes are declared for."""
        return self.key.partition("@")[0]

    @property
    def lookup_keys(self) -> tuple[str, ...]:
        """Where a workload looks for this engine's statements, most specific first."""
        return tuple(dict.fromkeys(k for k in (self.key, self.name, self.variant_of, self.family) if k))

    def lookup(self, table: Mapping[str, Any]) -> Any:
        """This engine's entry in a workload's table (its dialects), most specific key first; None
        when the table has none."""
        return next((table[k] for k in self.lookup_keys if k in table), None)

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(v.version for v in self.server.versions) if self.server else ()

    @property
    def report_note(self) -> str:
        return " ".join(n for n in (self.note, self.defaults_note) if n)

    @property
    def defaults_note(self) -> str:
        """Said wherever the bare key is listed or reported, when official and offline majors differ."""
        server = self.server
        if server is None or self.version is not None or not server.defaults_differ:
            return ""
        local = server.local_version
        return (f"`{self.key}` runs the official {server.official_image} where it can be pulled, else "
                f"{self.title} {local.version} built from {local.recipe.description if local.recipe else '-'}: "
                f"the two defaults cannot be the same major (use {self.key}@{server.default} or "
                f"{self.key}@{local.version} to pin one); the server version column says which ran.")

    def as_cluster(self, *, key: str, title: str, color: str, cluster: "Cluster", note: str,
                   startup_timeout: float | None = None, **changes: Any) -> "Engine":
        """This engine as N containers: the same client, dialects and isolation (a variant of this
        engine, which it is compared with), its nodes this engine's server with `cluster`'s roles.
        `changes`: what else differs (a server with other versions or settings, more durability
        settings to read)."""
        server = changes.pop("server", self.server)
        if startup_timeout is not None:
            server = replace(server, startup_timeout=startup_timeout)
        return replace(self, key=key, title=title, color=color, variant_of=self.name, server=server,
                       cluster=cluster, note=note, **changes)

    def at(self, version: str) -> "Engine":
        """This engine pinned to one of its declared versions."""
        if self.server is None:
            raise UnknownEngineError(f"{self.key} is embedded: it runs the library installed here "
                                     f"({self.embedded.library()}), there is no version to choose")
        if version not in self.versions:
            raise UnknownEngineError(f"unknown version {version!r} of {self.name} ({self.name}@{version}); known "
                                     f"versions: {', '.join(self.versions)} (e.g. {self.name}@{self.versions[-1]})")
        title = self.title.removesuffix(f" {self.version}") if self.version else self.title
        return replace(self, key=f"{self.name}@{version}", title=f"{title} {version}", version=version,
                       server=replace(self.server, default=version, local_default=None))


def postgres_config_command(config: Mapping[str, Any]) -> list[str] | None:
    return ["postgres", *[a for k, v in config.items() for a in ("-c", f"{k}={v}")]] if config else None


def sql_literal(text: str, *, backslashes: bool = False) -> str:
    """A SQL string literal (MySQL also treats a backslash as an escape)."""
    if backslashes:
        text = text.replace("\\", "\\\\")
    return "'" + text.replace("'", "''") + "'"


def postgres_password(creds: Credentials) -> list[str]:
    return [f'alter role "{creds.user.replace(chr(34), chr(34) * 2)}" password {sql_literal(creds.password)}']


def mysql_password(creds: Credentials) -> list[str]:
    # The official images and the recipes give the user a password at localhost and at any host.
    return [f"alter user {sql_literal(creds.user, backslashes=True)}@{sql_literal(host)} identified by "
            f"{sql_literal(creds.password, backslashes=True)}" for host in ("%", "localhost")]


def mysql_config_command(config: Mapping[str, Any]) -> list[str] | None:
    # Official mysql/mariadb entrypoints append arguments that start with '-' to the server. A value
    # of None is a bare flag (--skip-log-bin takes no value).
    return [f"--{k.replace('_', '-')}" if v is None else f"--{k.replace('_', '-')}={v}" for k, v in config.items()] or None


def no_command_line_settings(config: Mapping[str, Any]) -> None:
    """For images whose server takes no settings as arguments: a setting is refused, not dropped."""
    if config:
        raise ParameterError(f"server settings {', '.join(map(str, config))}: this engine's image takes none on its "
                             "command line (its settings are SQL, e.g. ALTER SYSTEM / sp_configure)")
    return None
