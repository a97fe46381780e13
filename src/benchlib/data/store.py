"""The results store: long format, append-only, keyed by run id, queried with DuckDB.

Layout under `<data>/results/`:
    runs/<run_id>.parquet                    one row, replaced atomically when the run ends
    instances/<run_id>/<instance_id>.parquet one row per engine start
    measurements/<run_id>/<seq>.parquet      rows of one measured window, written as it ends
    measurements/<run_id>/compacted.parquet  all of a finished run's rows (its parts are then removed)
    profiles/<run_id>/<seq>-<window>.parquet where a window's instructions went (callgrind_profile),
                                             compacted like measurements
    schema_version                           the layout's version, for migrations

Why files and not one DuckDB database file: DuckDB allows one writer process per file, and a
notebook kernel holding the store open must never make a running benchmark fail. Each run writes
only its own files (temp file + rename, so readers never see half a file), and readers open an
in-memory DuckDB over them. A run killed mid-phase keeps every window already written."""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from ..core.errors import StoreError
from ..core.settings import get_settings

SCHEMA_VERSION = 5

_TS = pa.timestamp("us", tz="UTC")

RUNS = pa.schema([
    ("run_id", pa.string()), ("experiment", pa.string()), ("notebook", pa.string()),
    ("status", pa.string()), ("error", pa.string()),
    ("started_at", _TS), ("ended_at", _TS),
    ("hostname", pa.string()), ("kernel", pa.string()), ("os", pa.string()), ("cpu_model", pa.string()),
    ("cpu_cores", pa.int32()), ("memory_bytes", pa.int64()), ("python_version", pa.string()),
    ("cgroup_layout", pa.string()), ("docker_version", pa.string()),
    ("perf_version", pa.string()), ("perf_support", pa.string()),
    ("benchlib_version", pa.string()), ("git_sha", pa.string()), ("git_dirty", pa.bool_()),
    ("parameters", pa.string()), ("owner", pa.string()), ("status_note", pa.string()),
    ("schema_version", pa.int32()), ("failures", pa.string()),
    ("host_class", pa.string()), ("host_price", pa.float64()), ("host_price_unit", pa.string()),
    ("pmu", pa.bool_()), ("host_fingerprint", pa.string()), ("cluster_task", pa.string()), ("worker", pa.string()),
])
# v3: `failures` maps each failed part of a run to its full traceback (JSON); `error` keeps one line each.
# v4: the host's declared class and price, whether it has a PMU, and its fingerprint (provenance.
# host_fingerprint); for a run a cluster worker measured, its batch task and the worker's name.

INSTANCES = pa.schema([
    ("run_id", pa.string()), ("instance_id", pa.string()), ("engine", pa.string()), ("kind", pa.string()),
    ("image_ref", pa.string()), ("image_id", pa.string()), ("image_digest", pa.string()),
    ("image_source", pa.string()), ("image_note", pa.string()), ("server_version", pa.string()),
    ("config", pa.string()), ("startup_seconds", pa.float64()), ("container_id", pa.string()),
    ("cgroup", pa.string()), ("started_at", _TS), ("schema_version", pa.int32()),
])

MEASUREMENTS = pa.schema([
    ("run_id", pa.string()), ("instance_id", pa.string()), ("engine", pa.string()),
    ("experiment", pa.string()), ("phase", pa.string()), ("repetition", pa.int32()),
    ("window", pa.string()), ("metric", pa.string()), ("value", pa.float64()), ("unit", pa.string()),
    ("source", pa.string()), ("status", pa.string()), ("started_at", _TS), ("ended_at", _TS),
    ("check_name", pa.string()), ("check_value", pa.float64()), ("seq", pa.int32()),
    ("scope", pa.string()), ("labels", pa.string()), ("check_expected", pa.float64()), ("check_status", pa.string()),
    ("schema_version", pa.int32()),
])
# v2: `scope` says whose resources a row counts (server: the engine's cgroup; client: the process
# that drives it; embedded: one process that is both); `labels` holds the variant of a sweep as
# sorted JSON ({"threads": 16}); a check carries what it had to be and whether it was.

PROFILES = pa.schema([
    ("run_id", pa.string()), ("instance_id", pa.string()), ("engine", pa.string()), ("phase", pa.string()),
    ("repetition", pa.int32()), ("labels", pa.string()), ("window", pa.string()), ("seq", pa.int32()),
    ("kind", pa.string()), ("name", pa.string()), ("object", pa.string()), ("subsystem", pa.string()),
    ("self_instructions", pa.int64()), ("inclusive_instructions", pa.int64()), ("by_caller_instructions", pa.int64()),
    ("self_rank", pa.int32()), ("inclusive_rank", pa.int32()), ("window_instructions", pa.int64()),
    ("files", pa.int32()), ("source", pa.string()), ("tool_version", pa.string()), ("reader", pa.string()),
    ("schema_version", pa.int32()),
])
# v5: where a window's instructions went, keyed like its measurements (run_id, seq, window): `kind`
# 'function' rows are its top functions by self and by inclusive instructions (ranked in both),
# 'subsystem' rows its self instructions per subsystem, which sum to `window_instructions`;
# `by_caller_instructions`: the part placed by the caller of a function its binary leaves unnamed.

TABLES = {"runs": RUNS, "instances": INSTANCES, "measurements": MEASUREMENTS, "profiles": PROFILES}
# Tables a run may have no rows in; an export made before they existed has no file for them.
OPTIONAL_TABLES = ("profiles",)
COMPACTED = "compacted.parquet"
QUERY_RETRY_SECONDS = 10.0  # how long a query keeps re-listing files that a compaction moved under it


def _migrate_v1_to_v2(root: Path) -> None:
    """Add the v2 columns to every file. v1 windows measured the engine only, so a row's scope is
    the kind of its instance; runs still 'running' can never finish (no owner was recorded)."""
    kinds = {}
    for path in sorted((root / "instances").rglob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            kinds[(row["run_id"], row["instance_id"])] = row["kind"]
    for path in sorted((root / "instances").rglob("*.parquet")):
        _write_atomic(_upgrade(pq.read_table(path), INSTANCES, {}), path)
    for path in sorted((root / "measurements").rglob("*.parquet")):
        table = pq.read_table(path)
        scope = ["embedded" if kinds.get(key) == "embedded" else "server" for key in
                 zip(table.column("run_id").to_pylist(), table.column("instance_id").to_pylist())]
        _write_atomic(_upgrade(table, MEASUREMENTS, {"scope": scope, "labels": ["{}"] * len(table)}), path)
    for path in sorted((root / "runs").glob("*.parquet")):
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            if row["status"] == "running":
                row.update(status="aborted", status_note="left 'running' by a schema-v1 benchlib, which recorded "
                                                         "no owner; marked aborted by the v2 migration")
        _write_atomic(_upgrade(pa.Table.from_pylist(rows), RUNS, {}), path)


def _upgrade(table: pa.Table, schema: pa.Schema, values: dict[str, list]) -> pa.Table:
    columns = {}
    for field in schema:
        if field.name in values:
            columns[field.name] = pa.array(values[field.name], field.type)
        elif field.name == "schema_version":
            columns[field.name] = pa.array([SCHEMA_VERSION] * len(table), field.type)
        elif field.name in table.column_names:
            columns[field.name] = table.column(field.name).cast(field.type)
        else:
            columns[field.name] = pa.nulls(len(table), field.type)
    return pa.table(columns, schema=schema)


# version -> function(results_dir) upgrading a store from that version to the next.
def _migrate_v2_to_v3(root: Path) -> None:
    """Runs gain `failures`; what older runs failed with is only their one-line `error`."""
    for path in sorted((root / "runs").glob("*.parquet")):
        _write_atomic(_upgrade(pq.read_table(path), RUNS, {}), path)


def _migrate_v3_to_v4(root: Path) -> None:
    """Runs gain the host's class, price, PMU flag and fingerprint, and a cluster task: unknown
    for older runs (NULL), never guessed."""
    for path in sorted((root / "runs").glob("*.parquet")):
        _write_atomic(_upgrade(pq.read_table(path), RUNS, {}), path)


def _migrate_v4_to_v5(root: Path) -> None:
    """The `profiles` table is new: older runs have no rows in it (none was counted under
    valgrind), and no existing file changes."""


MIGRATIONS: dict[int, Any] = {1: _migrate_v1_to_v2, 2: _migrate_v2_to_v3, 3: _migrate_v3_to_v4, 4: _migrate_v4_to_v5}


@contextlib.contextmanager
def _lock(path: Path):
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def new_run_id() -> str:
    return f"{utcnow():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def _write_atomic(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    unknown = {k for row in rows for k in row} - set(schema.names)
    if unknown:
        raise StoreError(f"columns not in the store schema: {sorted(unknown)}")
    return pa.Table.from_pylist([{**row, "schema_version": SCHEMA_VERSION} for row in rows], schema=schema)


@dataclass
class Store:
    """A results folder. Cheap to create; every query opens its own in-memory DuckDB.

    With `shared` (a SharedStore, `s3://bucket/prefix`), reads see every run published there
    beside this folder's own (a run in both is read from here: it may still be running); writes
    always go to the folder, and a finished run reaches the bucket only when it is published."""

    root: Path
    shared: Any = None  # shared_store.SharedStore

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    @classmethod
    def default(cls) -> "Store":
        """The store the settings name (BENCHLIB_STORE): this host's results folder, another
        folder, or a shared store read together with this host's folder."""
        return cls.open(get_settings().store)

    @classmethod
    def default_local(cls) -> "Store":
        """Where this host writes runs, without any shared store."""
        return cls(cls.default().root)

    @classmethod
    def open(cls, spec: str | os.PathLike | None) -> "Store":
        """A store given as a local path or as `s3://bucket/prefix` (checked, not yet contacted)."""
        from .shared_store import SharedStore, is_shared

        results_dir = get_settings().results_dir
        if spec is None or str(spec).strip() == "":
            return cls(results_dir)
        if is_shared(str(spec)):
            return cls(results_dir, shared=SharedStore(str(spec)))
        if "://" in str(spec):
            raise StoreError(f"store must be a local path or s3://bucket/prefix, got {str(spec)!r}")
        return cls(Path(spec))

    @property
    def where(self) -> str:
        """The store as a person names it, for messages."""
        return f"{self.root} and {self.shared}" if self.shared is not None else str(self.root)

    # -- writing ---------------------------------------------------------------------------------
    def _ensure_version(self) -> None:
        marker = self.root / "schema_version"
        if not marker.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = marker.with_name(f".schema_version.{os.getpid()}.tmp")
            tmp.write_text(f"{SCHEMA_VERSION}\n")
            os.replace(tmp, marker)
            return
        version = int(marker.read_text().strip() or 0)
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise StoreError(f"store {self.root} has schema version {version}, newer than this benchlib "
                             f"({SCHEMA_VERSION}); upgrade benchlib")
        with _lock(self.root / ".migration.lock"):  # one process migrates; the others wait, then see it done
            version = int(marker.read_text().strip() or 0)
            while version < SCHEMA_VERSION:
                if version not in MIGRATIONS:
                    raise StoreError(f"store {self.root}: no migration from schema version {version}")
                MIGRATIONS[version](self.root)
                version += 1
                marker.write_text(f"{version}\n")

    def write_run(self, row: dict) -> None:
        self._ensure_version()
        _write_atomic(_table([row], RUNS), self.root / "runs" / f"{row['run_id']}.parquet")

    def write_instance(self, row: dict) -> None:
        self._ensure_version()
        _write_atomic(_table([row], INSTANCES),
                      self.root / "instances" / row["run_id"] / f"{row['instance_id']}.parquet")

    def append_measurements(self, run_id: str, seq: int, rows: list[dict]) -> None:
        if rows:
            self._ensure_version()
            _write_atomic(_table(rows, MEASUREMENTS), self.root / "measurements" / run_id / f"{seq:06d}.parquet")

    def append_profile(self, run_id: str, seq: int, window: str, rows: list[dict]) -> None:
        """Where one window's instructions went (callgrind_profile.profile_rows), written as the
        window's measurements are: one file per window, kept if a later step fails."""
        if rows:
            self._ensure_version()
            _write_atomic(_table(rows, PROFILES), self.root / "profiles" / run_id / f"{seq:06d}-{window}.parquet")

    def compact(self, run_id: str) -> None:
        """Merge a finished run's window files into one: queries over many runs read one file per
        run instead of one per window. Readers prefer the compacted file as soon as it exists, so
        they never see a row twice."""
        for name in ("measurements", "profiles"):
            run_dir = self.root / name / run_id
            parts = sorted(run_dir.glob("[0-9]*.parquet")) if run_dir.exists() else []
            if not parts:
                continue
            tables = [pq.read_table(p) for p in parts]
            compacted = run_dir / COMPACTED
            if compacted.exists():
                tables.insert(0, pq.read_table(compacted))
            _write_atomic(pa.concat_tables([t.cast(TABLES[name]) for t in tables]), compacted)
            for p in parts:
                p.unlink(missing_ok=True)

    # -- reading ---------------------------------------------------------------------------------
    def _files(self, name: str, only: set[str] | None = None) -> list[str]:
        base = self.root / name
        if not base.exists():
            return []
        files = []
        for path in sorted(base.iterdir()):
            if only is not None and path.stem not in only:  # runs/<id>.parquet, instances/<id>/, measurements/<id>/
                continue
            if path.is_dir():
                compacted = path / COMPACTED
                files += [str(compacted)] if compacted.exists() else [str(p) for p in sorted(path.glob("*.parquet"))]
            elif path.suffix == ".parquet":
                files.append(str(path))
        return files

    def _shared_files(self) -> dict[str, list[str]]:
        """Local copies of the shared store's runs that this folder does not hold, per table."""
        if self.shared is None:
            return {}
        local = set(self._local_run_ids())
        return self.shared.cached_tables([r for r in self.shared.run_ids() if r not in local])

    def connect(self, only: Iterable[str] | None = None):
        """An in-memory DuckDB connection with views `runs`, `instances`, `measurements`; with
        `only`, over those runs' files of this folder alone (an export reads no other run)."""
        import duckdb

        if (self.root / "schema_version").exists():
            self._ensure_version()
        only = set(only) if only is not None else None
        shared = self._shared_files() if only is None else {}
        con = duckdb.connect()
        con.execute("set TimeZone = 'UTC'")
        for name, schema in TABLES.items():
            files = self._files(name, only) + shared.get(name, [])
            if files:
                file_list = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
                con.execute(f"create view {name} as select * from read_parquet([{file_list}], union_by_name = true)")
            else:
                con.register(f"_{name}_empty", schema.empty_table())
                con.execute(f"create view {name} as select * from _{name}_empty")
        return con

    def query(self, sql: str, params: list | None = None):
        """Run SQL over the views and return a pandas DataFrame."""
        import duckdb

        deadline = time.monotonic() + QUERY_RETRY_SECONDS
        attempt = 0
        while True:
            con = None
            try:
                # Creating the views reads the files' schemas: the race can strike there too.
                con = self.connect()
                return con.execute(sql, params or []).df()
            except duckdb.IOException:
                # A run compacting its files between listing and reading: list again. Each run
                # compacts once, but several runs finishing together (a batch, parallel writers on
                # a loaded 2-core host) can each win the race in turn: retry for a time, not a count.
                if time.monotonic() > deadline:
                    raise
                time.sleep(min(0.2, 0.02 * 2 ** attempt))
                attempt += 1
            finally:
                if con is not None:
                    con.close()

    def _local_run_ids(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "runs").glob("*.parquet")) if (self.root / "runs").exists() else []

    def run_ids(self) -> list[str]:
        local = self._local_run_ids()
        if self.shared is None:
            return local
        return sorted(set(local) | set(self.shared.run_ids()))

    # -- moving runs between machines ---------------------------------------------------------------
    def export_runs(self, run_ids: Iterable[str], dest: Path) -> Path:
        """Write the given runs as Parquet files in `dest`, one per table (runs, instances, measurements,
        profiles)."""
        run_ids = list(run_ids)
        local = set(self._local_run_ids())
        missing = sorted(set(run_ids) - set(self.run_ids()))
        if missing:
            raise StoreError(f"no such run(s) in {self.where}: {', '.join(missing)}")
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        # Runs of this folder are read from their own files only; runs only in a shared store need its view.
        con = self.connect(only=run_ids) if set(run_ids) <= local else self.connect()
        try:
            for name, schema in TABLES.items():
                df = con.execute(f"select * from {name} where run_id in (select unnest(?))", [run_ids]).df()
                pq.write_table(pa.Table.from_pandas(df, schema=schema, preserve_index=False), dest / f"{name}.parquet")
        finally:
            con.close()
        return dest

    def import_runs(self, src: Path) -> list[str]:
        """Merge an export into this store; runs already present are left alone. Returns new run ids."""
        src = Path(src)
        tables = {name: pq.read_table(src / f"{name}.parquet") for name in TABLES
                  if name not in OPTIONAL_TABLES or (src / f"{name}.parquet").exists()}
        known = set(self.run_ids())
        new_ids = sorted(set(tables["runs"].column("run_id").to_pylist()) - known)
        by_run: dict[str, dict[str, list[dict]]] = {run_id: {name: [] for name in tables} for run_id in new_ids}
        for name, table in tables.items():
            for row in table.to_pylist():
                if row["run_id"] in by_run:
                    row.pop("schema_version", None)
                    by_run[row["run_id"]][name].append(row)
        for run_id, rows in by_run.items():
            for row in rows["instances"]:
                self.write_instance(row)
            by_seq: dict[int, list[dict]] = {}
            for row in rows["measurements"]:
                by_seq.setdefault(row["seq"], []).append(row)
            for seq, batch in by_seq.items():
                self.append_measurements(run_id, seq, batch)
            by_window: dict[tuple[int, str], list[dict]] = {}
            for row in rows.get("profiles", ()):
                by_window.setdefault((row["seq"], row["window"]), []).append(row)
            for (seq, window), batch in by_window.items():
                self.append_profile(run_id, seq, window, batch)
            for row in rows["runs"]:  # last: a run appears only once its rows are in place
                self.write_run(row)
        return new_ids


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
