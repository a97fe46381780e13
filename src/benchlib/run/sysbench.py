"""Debian's sysbench (a C client, so the harness is never the bottleneck of a load test) against
a started engine: prepare, run, and its report parsed.

sysbench runs on the host, outside the engine's cgroup, as a child of this process: its CPU is
the `children` scope of a meter window (cgroups.children_scope()). A measured run's threads
connect, then wait at a gate until its window is open (`started`, sysbench_lua/gated.lua), so
connection set-up is outside the window and the whole run inside it. What it prints is parsed from
the final summary and the `--histogram` block; `--report-interval` lines are not used (on this
host some intervals go missing)."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import selectors
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..host import cgroups
from ..core.errors import BenchlibError
from ..containers.lifecycle import Instance

# sysbench's database driver per wire protocol of the engine's client.
DRIVERS = {"postgres wire": "pgsql", "mysql wire": "mysql"}


# Lua tests shipped with benchlib (sysbench takes a path to a .lua file as the test name; they
# `require("oltp_common")` from sysbench's own directory).
LUA_DIR = Path(__file__).parent / "sysbench_lua"


def packaged_test(name: str) -> str:
    path = LUA_DIR / name
    if not path.is_file():
        raise SysbenchError(f"no packaged sysbench test {name!r} in {LUA_DIR}")
    return str(path)


class SysbenchError(BenchlibError):
    pass


@dataclass(frozen=True)
class SysbenchResult:
    transactions: int
    tps: float
    queries: int
    qps: float
    ignored_errors: int
    reconnects: int
    total_time_s: float
    latency_min_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    latency_pct_ms: float | None  # the --percentile sysbench was asked for
    histogram: list[tuple[float, int]] = field(default_factory=list)  # (upper bound ms, count)
    connect_s: float | None = None  # from the process's start to all its threads connected (`started`)
    events_s: float | None = None  # from the gate's release to every thread's last event done (`run_events`)

    def percentile_ms(self, pct: float) -> float | None:
        """From the histogram: the smallest bucket value with at least pct% of events at or below it
        (sysbench's own rule for its percentile line)."""
        total = sum(c for _, c in self.histogram)
        if not total:
            return None
        need = total * pct / 100.0
        seen = 0
        for value, count in self.histogram:
            seen += count
            if seen >= need:
                return value
        return self.histogram[-1][0]


_NUM = r"([0-9]+(?:\.[0-9]+)?)"


def parse(text: str) -> SysbenchResult:
    """The summary of `sysbench ... run` (1.0.x), with its --histogram block when present."""
    def grab(pattern: str, cast=float):
        match = re.search(pattern, text)
        if not match:
            raise SysbenchError(f"sysbench output has no {pattern!r}: {text[-600:]}")
        return cast(match.group(1)), (cast(match.group(2)) if match.lastindex and match.lastindex > 1 else None)

    transactions, tps = grab(rf"transactions:\s+(\d+)\s+\({_NUM} per sec\.\)")
    queries, qps = grab(rf"queries:\s+(\d+)\s+\({_NUM} per sec\.\)")
    errors, _ = grab(rf"ignored errors:\s+(\d+)\s+\({_NUM} per sec\.\)")
    reconnects, _ = grab(rf"reconnects:\s+(\d+)\s+\({_NUM} per sec\.\)")
    total_time, _ = grab(rf"total time:\s+{_NUM}s")
    lat_min, _ = grab(rf"min:\s+{_NUM}")
    lat_avg, _ = grab(rf"avg:\s+{_NUM}")
    lat_max, _ = grab(rf"max:\s+{_NUM}")
    pct = re.search(rf"\d+th percentile:\s+{_NUM}", text)
    histogram = [(float(v), int(c)) for v, c in
                 re.findall(r"^\s+([0-9]+\.[0-9]+) \|\**\s+(\d+)\s*$", text, re.M)]
    return SysbenchResult(int(transactions), tps, int(queries), qps, int(errors), int(reconnects), total_time,
                          lat_min, lat_avg, lat_max, float(pct.group(1)) if pct else None, histogram)


def unavailable_reason() -> str | None:
    """Why sysbench cannot run here, or None."""
    if shutil.which("sysbench") is None:
        return "sysbench is not installed (Debian: apt-get install sysbench; `make setup` as root does it)"
    return None


def connection_args(instance: Instance) -> list[str]:
    """Driver and connection options for a started engine (password included: never log them)."""
    driver = DRIVERS.get(instance.engine.client.protocol)
    if driver is None:
        raise SysbenchError(f"{instance.key} speaks {instance.engine.client.protocol}: sysbench has no driver for it")
    e = instance.endpoint
    args = [f"--db-driver={driver}", f"--{driver}-host={e.host}", f"--{driver}-port={e.port}",
            f"--{driver}-user={e.user}", f"--{driver}-password={e.password}", f"--{driver}-db={e.database}"]
    # sysbench's MySQL driver writes ENGINE=innodb into every CREATE TABLE unless told otherwise:
    # without this, a MyRocks server would be measured on InnoDB tables.
    if driver == "mysql" and instance.storage_engine:
        args.append(f"--mysql-storage-engine={instance.storage_engine}")
    return args


def command_line(instance: Instance, test: str, command: str, options: Mapping[str, object]) -> list[str]:
    """The sysbench argv benchlib runs (with the password: never log it)."""
    return ["sysbench", test, *connection_args(instance), *(f"--{k}={v}" for k, v in options.items()), command]


# sysbench's access distributions. Debian's sysbench 1.0.20 defaults to "special" (most accesses to
# ~1% of the rows, so a table far larger than memory is still served from cache); seed 004 and
# sysbench's current source use "uniform". Every call states one.
RAND_TYPES = ("uniform", "special", "gaussian", "pareto", "zipfian")


def run_options(*, threads: int, seconds: float, tables: int, table_size: int, rand_type: str,
                options: Mapping[str, object] | None = None) -> dict[str, object]:
    return {"tables": tables, "table-size": table_size, "threads": threads, "time": int(seconds),
            "histogram": "on", "percentile": 95, "rand-type": rand_type, **(options or {})}


def _run(instance: Instance, test: str, command: str, options: Mapping[str, object], timeout: float) -> str:
    argv = command_line(instance, test, command, options)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SysbenchError(f"sysbench {test} {command} did not finish within {timeout:.0f}s") from None
    if done.returncode != 0:
        raise _failed(instance, f"{test} {command}", done.returncode, done.stderr, done.stdout)
    return done.stdout


def _failed(instance: Instance, what: str, returncode: int | None, stderr: str, stdout: str) -> SysbenchError:
    secret = instance.endpoint.password or "\0"
    tail = (stderr.strip() or stdout.strip())[-800:].replace(secret, "***")
    return SysbenchError(f"sysbench {what} on {instance.key} failed (exit {returncode}): {tail}")


def prepare(instance: Instance, *, tables: int, table_size: int, rand_type: str, timeout: float = 3600,
            check: bool = True, options: Mapping[str, object] | None = None) -> None:
    """Create and load the tables, then check every row is there: a load that stopped short
    (a full disk, a killed client) must not be measured as if it were the asked-for table.
    `rand_type`: the distribution of the loaded rows' `k` column (oltp_common draws it with
    sb_rand, which follows --rand-type: Debian's 1.0.20 default, `special`, gives most rows a `k`
    from about 1% of the range, a skewed index the tests' own distribution never sees).
    `check=False`: the caller checks (`check_loaded`) outside the window that measures the load.
    `options`: oltp_common's table options (create_secondary, auto_inc)."""
    _run(instance, "oltp_common", "prepare", {"tables": tables, "table-size": table_size, "rand-type": rand_type,
                                              **(options or {})}, timeout)
    if check:
        check_loaded(instance, tables=tables, table_size=table_size)


def check_loaded(instance: Instance, *, tables: int, table_size: int) -> None:
    session = instance.session()
    try:
        for table in range(1, tables + 1):
            rows = int(session.execute(f"select count(*) from sbtest{table}")[0][0])
            if rows != table_size:
                raise SysbenchError(f"sysbench prepare left sbtest{table} on {instance.key} with {rows:,} rows of "
                                    f"{table_size:,}: the load did not complete, and nothing is measured on it")
    finally:
        session.close()


def run(instance: Instance, test: str, *, threads: int, seconds: float, tables: int, table_size: int,
        rand_type: str, options: Mapping[str, object] | None = None) -> tuple[SysbenchResult, str]:
    """One timed step, unmeasured (a warm-up); returns the parsed result and the raw report."""
    with started(instance, test, threads=threads, seconds=seconds, tables=tables, table_size=table_size,
                 rand_type=rand_type, options=options) as running:
        return running.finish()


# Every sysbench run benchlib measures goes through this wrapper: the test's threads connect, then
# wait at a gate until the harness has opened its window (see the file).
GATED = LUA_DIR / "gated.lua"
CONNECTED = b"benchlib: connected\n"
DONE = b"benchlib: done\n"
# Where Debian's (and a source build's) sysbench keeps its stock tests (oltp_point_select.lua, ...).
SYSBENCH_DIRS = (Path("/usr/share/sysbench"), Path("/usr/local/share/sysbench"))
# How long a start may take to connect every thread (128 forked PostgreSQL backends take ~1 s here).
CONNECT_TIMEOUT_S = 120


def test_path(test: str) -> str:
    """A test's Lua file: benchlib's own are paths already; a stock test is found by name."""
    if "/" in test:
        return test
    for directory in SYSBENCH_DIRS:
        if (directory / f"{test}.lua").is_file():
            return str(directory / f"{test}.lua")
    raise SysbenchError(f"no sysbench test {test!r} in {', '.join(map(str, SYSBENCH_DIRS))}")


class Running:
    """A `sysbench ... run` whose threads have all connected and wait at the gate: nothing of the
    test has run yet. A measured window opens now and calls `run_events()` inside it, which lets
    the threads go and returns when every thread's last event is done; the window ends there, and
    `finish()` reaps sysbench and parses its report outside it. So a step's window holds its whole
    run and neither its connection set-up (on PostgreSQL a forked backend and a scram-sha-256
    handshake each) nor its disconnections, which would weigh more the more threads a step has and
    the shorter it is. Reading sysbench's "Threads started!" instead would open the window late
    whenever the harness waits for a core (up to 18% of a 1 s step was missed that way on 2 cores).
    `client`: sysbench's CPU from now on (what it spent connecting is left out)."""

    def __init__(self, instance: Instance, test: str, process: subprocess.Popen, stderr, head: str, seconds: float,
                 connect_s: float, gate: int, threads: int):
        self.instance, self.test, self.process, self.stderr, self.head = instance, test, process, stderr, head
        self.seconds, self.connect_s, self.gate, self.threads = seconds, connect_s, gate, threads
        self.client = cgroups.children_scope(running=process.pid)
        self.released = False
        self.events_s: float | None = None

    def _release(self) -> None:
        if not self.released:
            os.write(self.gate, b"g" * self.threads)  # one byte per waiting thread (<= PIPE_BUF: one write)
            self.released = True

    def run_events(self) -> None:
        """Let the threads go and return when each has done its last event (before any disconnects)."""
        t0 = time.perf_counter()
        self._release()
        self.head += _read_until(self.instance, self.test, self.process, self.stderr, DONE, self.threads,
                                 "finished their events", self.seconds + CONNECT_TIMEOUT_S)
        self.events_s = time.perf_counter() - t0

    def finish(self) -> tuple[SysbenchResult, str]:
        """Let the threads go if `run_events` has not, wait for the run to end and parse its report
        (the child is reaped here: a window still open then holds its client CPU whole)."""
        self._release()
        try:
            rest = self.process.communicate(timeout=self.seconds + 120)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            raise SysbenchError(f"sysbench {self.test} run did not finish within {self.seconds + 120:.0f}s") from None
        text = self.head + rest
        if self.process.returncode != 0:
            raise _failed(self.instance, f"{self.test} run", self.process.returncode, _read(self.stderr), text)
        return dataclasses.replace(parse(text), connect_s=self.connect_s, events_s=self.events_s), text


@contextlib.contextmanager
def started(instance: Instance, test: str, *, threads: int, seconds: float, tables: int, table_size: int,
            rand_type: str, options: Mapping[str, object] | None = None) -> Iterator[Running]:
    """Start `sysbench <test> run` and return once all its threads are connected and held at the
    gate (see `Running`). A run still going when the block ends (a failure in it) is killed."""
    opts = run_options(threads=threads, seconds=seconds, tables=tables, table_size=table_size, rand_type=rand_type,
                       options=options)
    env = {**os.environ, "BENCHLIB_SYSBENCH_TEST": test_path(test)}
    with tempfile.TemporaryDirectory(prefix="benchlib-sysbench-") as directory, \
            tempfile.TemporaryFile("w+") as stderr:
        fifo = Path(directory) / "gate"
        os.mkfifo(fifo, 0o600)
        # Read-write, so opening it never blocks and no thread ever sees it closed before its byte.
        gate = os.open(fifo, os.O_RDWR)
        try:
            t0 = time.perf_counter()
            process = subprocess.Popen(command_line(instance, str(GATED), "run", opts), stdout=subprocess.PIPE,
                                       stderr=stderr, bufsize=0, env={**env, "BENCHLIB_SYSBENCH_GATE": str(fifo)})
            try:
                head = _read_until(instance, test, process, stderr, CONNECTED, threads, "connected", CONNECT_TIMEOUT_S)
                yield Running(instance, test, process, stderr, head, seconds, time.perf_counter() - t0, gate, threads)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        finally:
            os.close(gate)


def _read_until(instance: Instance, test: str, process: subprocess.Popen, stderr, marker: bytes, threads: int,
                what: str, timeout_s: float) -> str:
    """sysbench's output until every thread has printed `marker`. Read from the pipe unbuffered: a
    buffered reader could hold the last line unseen while `select` waits for more."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    fd = process.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while seen.count(marker) < threads:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(timeout=left):
                raise SysbenchError(f"sysbench {test} run on {instance.key}: {seen.count(marker)} of {threads} "
                                    f"threads {what} within {timeout_s:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:  # ended before its threads got there: a connection, option or query error
                process.wait()
                raise _failed(instance, f"{test} run", process.returncode, _read(stderr), seen.decode(errors="replace"))
            seen += chunk
    return seen.decode(errors="replace")


def _read(file) -> str:
    file.flush()
    file.seek(0)
    return file.read()


def record(readings: Any, result: SysbenchResult) -> None:
    """sysbench's summary as readings of a meter window (measure.Readings)."""
    for metric, value, unit in (
        ("transactions", result.transactions, "count"), ("tps", result.tps, "1/s"), ("qps", result.qps, "1/s"),
        ("latency_avg", result.latency_avg_ms, "ms"), ("latency_p95", result.percentile_ms(95), "ms"),
        ("latency_p99", result.percentile_ms(99), "ms"), ("latency_max", result.latency_max_ms, "ms"),
        ("errors", result.ignored_errors, "count"), ("reconnects", result.reconnects, "count"),
        ("client_elapsed", result.total_time_s, "s"),
    ):
        readings.record(metric, None if value is None else float(value), unit, "sysbench")
    if result.connect_s is not None:
        readings.record("connect_time", result.connect_s, "s", "harness (before the window: sysbench start to "
                        "its threads connected)", scope="harness")
    if result.events_s is not None:
        readings.record("events_time", result.events_s, "s", "harness (the window's end: the gate's release to every "
                        "thread's last event, before the disconnections)", scope="harness")
