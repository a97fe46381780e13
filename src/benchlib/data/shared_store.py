"""The shared store: every host's finished runs in one S3-compatible bucket (`s3://bucket/prefix`).

A run is measured into its host's own store (store.py: windows written as they end, so a killed
run keeps what it measured) and *published* once it is over, as immutable objects keyed by its id:

    <prefix>/runs/<run_id>/runs.parquet            as `benchlib export` writes them
    <prefix>/runs/<run_id>/instances.parquet
    <prefix>/runs/<run_id>/measurements.parquet
    <prefix>/runs/<run_id>/notebook/...            the executed notebook, its HTML report, figures
    <prefix>/complete/<run_id>.json                the completion marker, written last
    <prefix>/tasks/<batch>/<task>.json             a cluster task's runs, written after their markers

Readers list `complete/` and read only the runs found there, so they never see half a run: an S3
PUT is atomic per object, and the marker goes up after every object it vouches for. A run id is
published once (a marker already there wins), and a retried cluster task finds its earlier
attempt's runs under `tasks/` instead of measuring again.

Reading goes through s3fs (DuckDB's own httpfs extension cannot be had offline); published objects
never change, so each is downloaded once into a local cache and queried there. Credentials and
endpoint come from the usual AWS settings (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE,
AWS_ENDPOINT_URL for a non-AWS server such as MinIO), never from benchlib's own files or reports."""
from __future__ import annotations

import json
import os
import re
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ParameterError, StoreError

SCHEME = "s3://"
TABLE_NAMES = ("runs", "instances", "measurements")  # store.TABLES, without importing pyarrow here
# A bucket name as S3 defines it: 3-63 lowercase letters, digits, dots and hyphens.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
# How long a host waits for the object store before calling it unreachable (not minutes of retries).
CONNECT_TIMEOUT_S = 5.0


def is_shared(spec: str | os.PathLike | None) -> bool:
    return isinstance(spec, str) and spec.startswith(SCHEME)


def parse_url(url: str) -> tuple[str, str]:
    """(bucket, prefix without slashes) of `s3://bucket/prefix`, or a ParameterError naming it."""
    if not is_shared(url):
        raise ParameterError(f"store must be a local path or s3://bucket/prefix, got {url!r}")
    bucket, _, prefix = url[len(SCHEME):].partition("/")
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise ParameterError(f"store bucket must be an S3 bucket name (3-63 lowercase letters, digits, dots, "
                             f"hyphens), got {bucket!r} in {url!r}")
    return bucket, prefix.strip("/")


def endpoint_url() -> str | None:
    """A non-AWS server (MinIO) is named the way the AWS tools name it."""
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class SharedStore:
    """One bucket and prefix. Cheap to create; the S3 client is made on first use."""

    url: str
    cache_dir: Path | None = None  # where published objects are kept once downloaded

    def __post_init__(self) -> None:
        self.bucket, self.prefix = parse_url(self.url)
        self.url = f"{SCHEME}{self.bucket}/{self.prefix}".rstrip("/")
        self._fs = None

    def __str__(self) -> str:
        return self.url

    # -- the S3 client -------------------------------------------------------------------------------
    @property
    def fs(self):
        if self._fs is None:
            import s3fs

            # No listings cache: a reader must see a marker the moment it is written. Few retries,
            # short timeouts: an unreachable endpoint is one line after seconds, not minutes. The
            # client itself is reused within a process (fsspec's instance cache): making one costs
            # ~1.5 s here, a worker's second publish does not pay it again.
            fs = s3fs.S3FileSystem(
                use_listings_cache=False, endpoint_url=endpoint_url(),
                config_kwargs={"connect_timeout": CONNECT_TIMEOUT_S, "read_timeout": 60,
                               "retries": {"max_attempts": 2}})
            fs.retries = 2  # s3fs's own retries of a failed call, on top of botocore's (5 by default)
            self._fs = fs
        return self._fs

    def key(self, *parts: str) -> str:
        """`bucket/prefix/part/...`, the path s3fs takes."""
        return "/".join(p for p in (self.bucket, self.prefix, *parts) if p)

    def marker_key(self, run_id: str) -> str:
        return self.key("complete", f"{run_id}.json")

    def run_key(self, run_id: str, *parts: str) -> str:
        return self.key("runs", run_id, *parts)

    # -- checks ------------------------------------------------------------------------------------
    def check(self, *, write: bool = False) -> None:
        """Fail in one line, before anything starts, when the bucket cannot be read (or written):
        no endpoint, refused credentials, no such bucket. Never echoes a credential."""
        try:
            self.fs.call_s3("head_bucket", Bucket=self.bucket)
            if write:
                probe = self.key(".probe", f"{socket.gethostname()}-{os.getpid()}")
                self.fs.pipe_file(probe, b"")
                self.fs.rm_file(probe)
        except Exception as exc:
            raise StoreError(f"store {self.url}: {self._why(exc)}") from None

    def _why(self, exc: BaseException) -> str:
        text = _one_line(exc)
        where = endpoint_url() or "AWS S3"
        if isinstance(exc, FileNotFoundError) or "NoSuchBucket" in text or "404" in text:
            return f"no bucket {self.bucket!r} at {where} (create it first)"
        if isinstance(exc, PermissionError) or re.search(r"InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied|403",
                                                         text):
            return (f"{where} refused the credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE): "
                    f"{text[:200]}")
        if re.search(r"NoCredentials|Unable to locate credentials", text):
            return "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"
        if re.search(r"Connect|Endpoint|timed out|Name or service", text, re.I):
            return f"no object store answers at {where}: {text[:200]}"
        return text[:300]

    # -- reading -----------------------------------------------------------------------------------
    def run_ids(self) -> list[str]:
        """Ids of every completely published run (those with a marker), sorted."""
        try:
            keys = self.fs.ls(self.key("complete"), detail=False, refresh=True)
        except FileNotFoundError:
            return []
        except Exception as exc:
            raise StoreError(f"store {self.url}: {self._why(exc)}") from None
        return sorted(Path(k).stem for k in keys if k.endswith(".json"))

    def marker(self, run_id: str) -> dict | None:
        try:
            return json.loads(self.fs.cat_file(self.marker_key(run_id)))
        except FileNotFoundError:
            return None

    def cached_tables(self, run_ids: list[str]) -> dict[str, list[str]]:
        """Local copies of the runs' Parquet files, per table: downloaded once (concurrently) and
        kept, since a published run never changes."""
        cache = self._cache()
        missing_remote, missing_local = [], []
        files: dict[str, list[str]] = {name: [] for name in TABLE_NAMES}
        for run_id in run_ids:
            for name in TABLE_NAMES:
                local = cache / run_id / f"{name}.parquet"
                files[name].append(str(local))
                if not local.exists():
                    missing_remote.append(self.run_key(run_id, f"{name}.parquet"))
                    missing_local.append(local)
        if missing_remote:
            with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
                staged = [str(Path(tmp) / f"{i}.parquet") for i in range(len(missing_remote))]
                try:
                    self.fs.get(missing_remote, staged)
                except Exception as exc:
                    raise StoreError(f"store {self.url}: reading published runs failed: {self._why(exc)}") from None
                for src, dest in zip(staged, missing_local):
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(src, dest)  # a complete file, or none: readers of the cache never see half
        return files

    def _cache(self) -> Path:
        if self.cache_dir is None:
            from ..core.settings import get_settings

            self.cache_dir = get_settings().data_dir / "shared-cache" / self.bucket / (self.prefix or "_")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        return self.cache_dir

    def get_file(self, key: str, dest: Path) -> Path:
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.fs.get_file(key, str(dest))
        return dest

    # -- publishing --------------------------------------------------------------------------------
    def publish(self, local, run_id: str, files: dict[str, Path] | None = None,
                meta: dict[str, Any] | None = None) -> bool:
        """Publish one finished run of the `local` store (store.Store): its Parquet files, then
        `files` (name under the run's `notebook/` -> local path), then the marker. False when the
        run was already published (its objects are never rewritten)."""
        if self.marker(run_id) is not None:
            return False
        import pyarrow.parquet as pq

        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="benchlib-publish-") as tmp:
            exported = local.export_runs([run_id], Path(tmp))
            status = pq.read_table(exported / "runs.parquet", columns=["status"]).column("status")[0].as_py()
            if status == "running":  # what is published never changes: a run still running would stay so
                raise StoreError(f"run {run_id} is still running: only a finished run is published")
            uploads = {f"{name}.parquet": exported / f"{name}.parquet" for name in TABLE_NAMES}
            uploads.update({f"notebook/{name}": Path(path) for name, path in (files or {}).items()})
            remote = [self.run_key(run_id, name) for name in uploads]
            try:
                self.fs.put([str(p) for p in uploads.values()], remote)
            except Exception as exc:
                raise StoreError(f"store {self.url}: publishing run {run_id} failed: {self._why(exc)}") from None
            objects = {name: path.stat().st_size for name, path in uploads.items()}
        marker = {"run_id": run_id, "status": status, "objects": objects, "host": socket.gethostname(),
                  "published_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "upload_seconds": round(time.perf_counter() - started, 3), **(meta or {})}
        self.fs.pipe_file(self.marker_key(run_id), json.dumps(marker, indent=1, default=str).encode())
        return True

    # -- cluster tasks -----------------------------------------------------------------------------
    def task_key(self, batch: str, task: str) -> str:
        return self.key("tasks", batch, f"{task}.json")

    def task_record(self, batch: str, task: str) -> dict | None:
        """What an earlier attempt of this task published, or None."""
        try:
            return json.loads(self.fs.cat_file(self.task_key(batch, task)))
        except FileNotFoundError:
            return None

    def record_task(self, batch: str, task: str, record: dict[str, Any]) -> None:
        self.fs.pipe_file(self.task_key(batch, task), json.dumps(record, indent=1, default=str).encode())
