"""Seed 002's contended test: 19,200 inserts, 6,400 updates, 19,200 deletes and 134,400 selects
from 32 workers on one table (ODB's odb-tests/common/threads), through the raw driver, each
statement its own transaction. Per worker and per object it inserts: the insert, seven loads
(its own object and six others anywhere in the table, often already gone), every third object an
update, then the erase: 3 : 1 : 3 : 21, the seed's proportions.

Workers run as threads of this process (one GIL) or as forked processes; each opens its own
connection before a shared start signal, and the time to completion runs from that signal to
the last worker's end: 32 connects and forks are set-up, not the statements under contention,
so they stay outside the measured window (seed 002 does not say where its clock started)."""
from __future__ import annotations

import contextlib
import multiprocessing
import random
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ...engines import Endpoint, get_engine
from .dialects import ApiDialect
from .layers import object_values

SEED_WORKERS = 32
SEED_COUNTS = {"insert": 19_200, "update": 6_400, "delete": 19_200, "select": 134_400}
SELECTS_PER_INSERT = 7
UPDATE_EVERY = 3
RETRIES = 5
MODES = ("threads", "processes")
ID_SPAN = 10_000_000  # ids of worker w start at (w + 1) * ID_SPAN


def inserts_per_worker(scale: float) -> int:
    """Seed 002's 600 inserts per worker, scaled, kept a multiple of 3 so the mix stays 3:1:3:21."""
    return 3 * max(1, round(SEED_COUNTS["insert"] / SEED_WORKERS / 3 * scale))


@dataclass
class WorkerResult:
    operations: dict[str, int]
    errors: int
    retries: int
    failed: int
    ended: float  # time.monotonic() (one clock for every process on Linux)


def _worker(engine_key: str, endpoint: Endpoint, dialect: ApiDialect, worker: int, workers: int, inserts: int,
            ready: Any, go: Any) -> WorkerResult:
    session = get_engine(engine_key).client.open(endpoint, timeout=30.0)
    cur = dialect.cursor(session.raw)
    ts = dialect.timestamp
    counts = {"insert": 0, "update": 0, "delete": 0, "select": 0}
    errors = retries = failed = 0
    rng = random.Random(worker)

    def do(kind: str, sql: str, params: tuple) -> None:
        nonlocal errors, retries, failed
        for attempt in range(RETRIES + 1):
            try:
                cur.execute(sql, params)
                if kind == "select":
                    cur.fetchall()
                counts[kind] += 1
                return
            except Exception:  # deadlock, lock timeout, "database is locked": the test counts them
                errors += 1
                if attempt == RETRIES:
                    failed += 1
                    return
                retries += 1
                time.sleep(0.001 * (attempt + 1))

    ready.wait()
    go.wait()
    base = (worker + 1) * ID_SPAN
    for i in range(inserts):
        values = object_values(base + i)
        do("insert", dialect.insert, (*values[:-1], ts(values[-1])))
        do("select", dialect.select, (base + i,))
        for _ in range(SELECTS_PER_INSERT - 1):
            other = (rng.randrange(workers) + 1) * ID_SPAN + rng.randrange(inserts)
            do("select", dialect.select, (other,))
        if i % UPDATE_EVERY == 0:
            v = values[1:]
            do("update", dialect.update, (v[0] + 1, *v[1:-1], ts(v[-1]), base + i))
        do("delete", dialect.delete, (base + i,))
    session.close()
    return WorkerResult(counts, errors, retries, failed, time.monotonic())


def _process_main(queue, *args) -> None:
    try:
        queue.put(_worker(*args))
    except BaseException as exc:  # the parent reports it; a silent child would hang the join
        queue.put(exc)


@contextlib.contextmanager
def connected(mode: str, engine_key: str, endpoint: Endpoint, dialect: ApiDialect, workers: int, inserts: int
              ) -> Iterator[Callable[[], tuple[float, list[WorkerResult]]]]:
    """Start the workers and wait until every one holds its connection; yields `go()`, which
    releases them and returns (seconds from the release to the last worker's end, each worker's
    result). A measured window opened around `go()` holds neither the connects nor the forks."""
    args = (engine_key, endpoint, dialect)
    released: dict[str, float] = {}
    if mode == "threads":
        ready, go_event = threading.Barrier(workers + 1), threading.Event()
        results: list[Any] = [None] * workers

        def body(w: int) -> None:
            try:
                results[w] = _worker(*args, w, workers, inserts, ready, go_event)
            except BaseException as exc:
                results[w] = exc
                ready.abort()

        threads = [threading.Thread(target=body, args=(w,), daemon=True) for w in range(workers)]
        for t in threads:
            t.start()

        def collect() -> list[Any]:
            for t in threads:
                t.join()
            return results
    else:
        # fork: children start at once and are this process's children, so RUSAGE_CHILDREN (the
        # client scope of this mode) counts their CPU once they are joined.
        ctx = multiprocessing.get_context("fork")
        ready, go_event, queue = ctx.Barrier(workers + 1), ctx.Event(), ctx.Queue()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads: children use none of ours
            procs = [ctx.Process(target=_process_main, args=(queue, *args, w, workers, inserts, ready, go_event))
                     for w in range(workers)]
            for p in procs:
                p.start()

        def collect() -> list[Any]:
            out = [queue.get(timeout=3600) for _ in procs]
            for p in procs:
                p.join()
            return out

    def go() -> tuple[float, list[WorkerResult]]:
        released["at"] = time.monotonic()
        go_event.set()
        done = collect()
        failures = [r for r in done if isinstance(r, BaseException) or r is None]
        if failures:
            raise RuntimeError(f"{len(failures)} of {workers} workers failed: {failures[0]!r}")
        return max(r.ended for r in done) - released["at"], done

    try:
        ready.wait(timeout=60)
    except threading.BrokenBarrierError:
        go_event.set()  # a worker failed to connect: release the others, then report it
        go()
        raise
    try:
        yield go
    finally:
        if "at" not in released:  # the window failed before releasing them: never leave workers waiting
            go_event.set()
            collect()
