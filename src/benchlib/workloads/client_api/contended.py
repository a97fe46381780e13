"""Seed 002's contended test: 19,200 inserts, 6,400 updates, 19,200 deletes and 134,400 selects
from 32 workers on one table, as ODB's odb-tests/common/threads/driver.cxx runs them (2.4.0's
source, whose four counts are the seed's), through the raw driver. ODB runs its test four times,
32 threads x 50 iterations each; here one round of 200 iterations per worker (at scale 1) stands
for the four. An iteration is 23 transactions on three objects of the worker's own: persist the
three; load the first and update its string member (retried whole on a deadlock: a read lock
upgraded to a write lock); 20 times, one transaction running the query "string member = the
updated value" (no index: it reads the whole table, which grows by the two objects each iteration
leaves behind) and reading the result until it finds its own object; erase the first object.
When every worker is done, one transaction erases what is left, one object at a time, as ODB's
clean-up does. Per iteration 3 inserts, 1 update, 21 selects, 1 delete, and 2 deletes at the end:
over 32 x 200 iterations the seed's four counts. A transaction that fails (deadlock, lock timeout,
"database is locked") is rolled back and retried whole, at most RETRIES times.

Not reproduced: ODB's rounds 2 to 4 share a pool of 31, 16 and 8 connections among the 32 threads;
here every worker has a connection of its own throughout.

Workers run as threads of this process (one GIL) or as forked processes; each opens its own
connection before a shared start signal, and the time to completion runs from that signal to
the last worker's end: 32 connects and forks are set-up, not the statements under contention,
so they stay outside the measured window (seed 002 does not say where its clock started)."""
from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ...engines import Endpoint, get_engine
from .dialects import COLUMNS, STRINGS, TABLE, ApiDialect
from .layers import object_values

QUERIED_MEMBER = STRINGS[0]  # a member with no index: each query scans the table, as ODB's does

SEED_WORKERS = 32
SEED_COUNTS = {"insert": 19_200, "update": 6_400, "delete": 19_200, "select": 134_400}
OBJECTS_PER_ITERATION = 3
QUERIES_PER_ITERATION = 20  # ODB's sub_iteration_count: one transaction each
# Statements per iteration, by kind: the persist, load + update, query and erase transactions, and
# the two objects each iteration leaves to the clean-up.
PER_ITERATION = {"insert": OBJECTS_PER_ITERATION, "update": 1, "delete": OBJECTS_PER_ITERATION,
                 "select": 1 + QUERIES_PER_ITERATION}
UPDATED = "another value"  # what the update writes into the queried member, and the query looks for
RETRIES = 5
MODES = ("threads", "processes")
ID_SPAN = 10_000_000  # ids of worker w start at (w + 1) * ID_SPAN


def inserts_per_worker(scale: float) -> int:
    """Seed 002's 600 inserts per worker (200 iterations of 3 objects), scaled, kept a multiple of
    3: whole iterations, so the mix stays 3:1:3:21."""
    return 3 * max(1, round(SEED_COUNTS["insert"] / SEED_WORKERS / 3 * scale))


class LostUpdate(Exception):
    """A worker's own committed update is missing from its query: a wrong result, never retried."""


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
    conn = session.raw
    dialect.manual_commit(conn)
    cur = dialect.cursor(conn)
    ts = dialect.timestamp
    counts = {"insert": 0, "update": 0, "delete": 0, "select": 0}
    errors = retries = failed = 0
    queried = dialect.query_by(QUERIED_MEMBER)

    def transaction(statements: Callable[[], dict[str, int]], size: int) -> None:
        """Run `statements` in one transaction, committed; on an error roll back and run it again.
        Its statements count once it commits; `size` of them count as failed when every attempt
        failed."""
        nonlocal errors, retries, failed
        for attempt in range(RETRIES + 1):
            try:
                if dialect.begin is not None:
                    dialect.begin(conn)
                done = statements()
                conn.commit()
            except LostUpdate:
                raise
            except Exception:  # deadlock, lock timeout, "database is locked": the test counts them
                errors += 1
                with contextlib.suppress(Exception):
                    conn.rollback()
                if attempt == RETRIES:
                    failed += size
                    return
                retries += 1
                time.sleep(0.001 * (attempt + 1))
                continue
            for kind, n in done.items():
                counts[kind] += n
            return

    ready.wait()
    go.wait()
    base = (worker + 1) * ID_SPAN
    for i in range(inserts // OBJECTS_PER_ITERATION):
        ids = [base + OBJECTS_PER_ITERATION * i + k for k in range(OBJECTS_PER_ITERATION)]
        objects = [object_values(n) for n in ids]

        def persist() -> dict[str, int]:
            for values in objects:
                cur.execute(dialect.insert, (*values[:-1], ts(values[-1])))
            return {"insert": len(objects)}

        def load_and_update() -> dict[str, int]:
            cur.execute(dialect.select, (ids[0],))
            row = list(cur.fetchall()[0])
            row[COLUMNS.index(QUERIED_MEMBER)] = UPDATED
            cur.execute(dialect.update, (*row[1:-1], ts(objects[0][-1]), ids[0]))
            return {"select": 1, "update": 1}

        def query() -> dict[str, int]:
            cur.execute(queried, (UPDATED,))
            # Read until its own object, as ODB's loop does (then the rest is dropped unread).
            if not any(r[0] == ids[0] for r in cur.fetchall()):
                raise LostUpdate(f"worker {worker}: object {ids[0]}, updated in its own committed "
                                 "transaction, is missing from the query's result")
            return {"select": 1}

        def erase() -> dict[str, int]:
            cur.execute(dialect.delete, (ids[0],))
            return {"delete": 1}

        transaction(persist, OBJECTS_PER_ITERATION)
        transaction(load_and_update, 2)
        for _ in range(QUERIES_PER_ITERATION):
            transaction(query, 1)
        transaction(erase, 1)
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

    # Opened after the forks (no child inherits it) and before the window: ODB's clean-up runs on
    # the database once every thread has joined.
    cleaner = get_engine(engine_key).client.open(endpoint, timeout=30.0)

    def go() -> tuple[float, list[WorkerResult]]:
        released["at"] = time.monotonic()
        go_event.set()
        done = collect()
        failures = [r for r in done if isinstance(r, BaseException) or r is None]
        if failures:
            raise RuntimeError(f"{len(failures)} of {workers} workers failed: {failures[0]!r}")
        done.append(_clean_up(cleaner, dialect))
        return done[-1].ended - released["at"], done

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
        cleaner.close()


def _clean_up(session, dialect: ApiDialect) -> WorkerResult:
    """ODB's end of a round: one transaction reading every object left and erasing each by id."""
    conn = session.raw
    dialect.manual_commit(conn)
    cur = dialect.cursor(conn)
    if dialect.begin is not None:
        dialect.begin(conn)
    cur.execute(f"select id from {TABLE}")
    ids = [r[0] for r in cur.fetchall()]
    for n in ids:
        cur.execute(dialect.delete, (n,))
    conn.commit()
    # Its one listing query is not among the seed's 134,400 selects (1,600 x 21 x 4 without it).
    return WorkerResult({"insert": 0, "update": 0, "delete": len(ids), "select": 0}, 0, 0, 0, time.monotonic())
