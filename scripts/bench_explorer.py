"""Speed and size of the run explorer (reports/explorer.html) on a synthetic store: runs x
windows written through the Store API into a throw-away folder (half DML-shaped, half
sysbench-sweep-shaped, with every metric a real window records), the page written from it, then
loaded in headless Chromium from disk with name resolution disabled, timed through the DevTools
protocol.

    .venv/bin/python scripts/bench_explorer.py [runs] [windows per run] [loads]

Prints the page's size (and the charting bundle's share), the time to write it, and per load the time from
navigation start to drawn figures as the page measured it (`data-render-ms`) and the wall time of
the whole Chromium process. Nothing is written to the real store or reports folder."""
from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchlib.compare import explorer
from benchlib.data.store import Store

DML = {"engines": ["postgres", "mariadb", "mysql", "sqlite", "duckdb"], "phases": ["sleep", "insert", "update",
                                                                                   "select", "delete"]}
SWEEP = {"engines": ["postgres", "mariadb", "mysql", "mariadb-myrocks"], "tests": ["oltp_point_select",
                                                                                 "oltp_read_write"],
         "threads": [1, 2, 4, 8, 16]}
ENGINE_METRICS = [("cpu_time", "s"), ("cpu_user_time", "s"), ("cpu_system_time", "s"), ("io_read_bytes", "bytes"),
                  ("io_write_bytes", "bytes"), ("memory_peak_bytes", "bytes"), ("task_clock", "s")]
UNSUPPORTED = [("instructions_user", "instructions"), ("cycles", "cycles")]  # no PMU: NULL, as on this host
SYSBENCH = [("transactions", "count"), ("tps", "1/s"), ("qps", "1/s"), ("latency_avg", "ms"), ("latency_p95", "ms"),
            ("latency_p99", "ms"), ("latency_max", "ms"), ("errors", "count"), ("reconnects", "count"),
            ("client_elapsed", "s")]


def _cells(kind: str, windows: int) -> list[tuple[str, str, dict]]:
    """(engine, phase, labels) per window, repetitions filling up to `windows`."""
    if kind == "dml":
        one = [(e, p, {}) for e in DML["engines"] for p in DML["phases"]]
    else:
        one = [(e, t, {"test": t, "threads": n}) for e in SWEEP["engines"] for t in SWEEP["tests"]
               for n in SWEEP["threads"]]
    return [one[i % len(one)] + (i // len(one) + 1,) for i in range(windows)]


def build_store(root: Path, runs: int, windows: int) -> Store:
    store = Store(root)
    rng = random.Random(0)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    for r in range(runs):
        kind = "dml" if r % 2 == 0 else "sweep"
        run_id, at = f"bench-{r:04d}", start + dt.timedelta(hours=r)
        store.write_run({"run_id": run_id, "experiment": kind, "notebook": kind, "status": "ok", "started_at": at,
                         "ended_at": at, "hostname": "bench-host", "cpu_model": "Bench CPU", "cpu_cores": 2,
                         "git_sha": f"{r // 10:010x}", "git_dirty": False, "benchlib_version": "0.1.0",
                         "parameters": json.dumps({"rows": 100000} if kind == "dml" else {"table_size": 10000})})
        for engine in {c[0] for c in _cells(kind, windows)}:
            store.write_instance({"run_id": run_id, "instance_id": f"{engine}-1", "engine": engine,
                                  "kind": "server", "server_version": f"{engine} {1 + r // 25}.0",
                                  "image_ref": f"{engine}:bench", "image_source": "local-build", "started_at": at})
        rows = []  # one file per run, as compaction leaves it: writing a file per window takes minutes
        for seq, (engine, phase, labels, repetition) in enumerate(_cells(kind, windows), start=1):
            common = {"run_id": run_id, "instance_id": f"{engine}-1", "engine": engine, "experiment": kind,
                      "phase": phase, "repetition": repetition, "started_at": at, "ended_at": at, "seq": seq,
                      "labels": json.dumps(labels, sort_keys=True),
                      "window": "baseline" if phase == "sleep" else "phase"}
            cost = 1.0 + 0.1 * len(engine) + rng.gauss(0, 0.03)
            rows += [{**common, "metric": "wall_time", "value": 10.0, "unit": "s", "source": "clock", "scope": "server",
                      "status": "ok"}]
            rows += [{**common, "metric": m, "value": cost * (i + 1), "unit": u, "source": "cgroup", "scope": "server",
                      "status": "ok"} for i, (m, u) in enumerate(ENGINE_METRICS)]
            rows += [{**common, "metric": m, "value": None, "unit": u, "source": "perf", "scope": "server",
                      "status": "unsupported"} for m, u in UNSUPPORTED]
            rows += [{**common, "metric": "cpu_time", "value": cost / 3, "unit": "s", "source": "process",
                      "scope": "client", "status": "ok"}]
            if kind == "sweep":
                rows += [{**common, "metric": m, "value": 1000.0 * cost * (i + 1), "unit": u, "source": "sysbench",
                          "scope": "client", "status": "ok"} for i, (m, u) in enumerate(SYSBENCH)]
        store.append_measurements(run_id, 1, rows)
        store.compact(run_id)
    return store


TIMINGS = ("tables", "firstPaint", "firstView", "render")  # the page's data-*-ms attributes, in order


def load_once(page: Path, probe: str | None = None) -> tuple:
    """(ms to the controls and tables filled, to the first paint, to the bars drawn, to every figure
    drawn, as the page measured them from navigation start; s from navigation to all drawn, as seen
    from outside), and with `probe` the value of that JavaScript expression (awaited) once every
    figure is drawn. Through the DevTools protocol in real time: `--dump-dom` would dump at the load
    event, before the figures (drawn after it), and `--virtual-time-budget` would fake the clock."""
    import websocket  # websocket-client, installed with the project's Jupyter and Docker clients

    profile = tempfile.mkdtemp(prefix="bench-explorer-chromium-")
    browser = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-port=0",
                                f"--user-data-dir={profile}", "about:blank"], stderr=subprocess.PIPE, text=True)
    ws = None
    try:
        port = next(int(m.group(1)) for line in browser.stderr
                    if (m := re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)))
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as response:
            targets = json.loads(response.read())
        ws = websocket.create_connection(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"],
                                         timeout=120)
        calls = iter(range(1, 1 << 30))

        def call(method: str, **params):
            number = next(calls)
            ws.send(json.dumps({"id": number, "method": method, "params": params}))
            while True:
                reply = json.loads(ws.recv())
                if reply.get("id") == number:
                    return reply.get("result", {})

        t0 = time.perf_counter()
        call("Page.navigate", url=page.as_uri())
        deadline = t0 + 120
        while time.perf_counter() < deadline:
            found = call("Runtime.evaluate", returnByValue=True,
                         expression="document.body ? Object.assign({}, document.body.dataset) : {}")
            marks = found.get("result", {}).get("value") or {}
            if marks.get("ready") == "yes":
                wall = time.perf_counter() - t0
                # A mark the page could not take (no paint entry within its 5 s wait) is NaN, not a crash.
                timings = (*(float(marks.get(f"{name}Ms", "nan")) for name in TIMINGS), wall)
                if probe is None:
                    return timings
                found = call("Runtime.evaluate", expression=probe, returnByValue=True, awaitPromise=True)
                return (*timings, found.get("result", {}).get("value"))
            time.sleep(0.05)
        raise SystemExit("the page did not finish drawing its figures within 120 s")
    finally:
        if ws is not None:
            ws.close()
        browser.terminate()
        browser.wait(30)
        browser.stderr.close()
        shutil.rmtree(profile, ignore_errors=True)


def plotly_only_page(path: Path) -> Path:
    """The floor: the explorer's plotly.js bundle evaluated and one bar drawn, timed like the
    explorer. What a host's load does to the script alone, apart from the explorer's own work."""
    path.write_text(
        f"<!DOCTYPE html><html><head><script>{explorer.plotly_js()}</script></head><body><div id=f></div>"
        "<script>Plotly.newPlot('f', [{type: 'bar', x: ['a'], y: [1]}]).then(() => {"
        "const ms = Math.round(performance.now()); document.body.dataset.tablesMs = ms;"
        "document.body.dataset.firstPaintMs = ms;"
        "document.body.dataset.firstViewMs = ms;"
        "document.body.dataset.renderMs = ms; document.body.dataset.ready = 'yes'; });</script></body></html>")
    return path


def main(runs: int = 100, windows: int = 200, loads: int = 3) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="benchlib-explorer-bench-"))
    try:
        t0 = time.perf_counter()
        store = build_store(tmp / "results", runs, windows)
        built = time.perf_counter() - t0
        rows = int(store.query("select count(*) n from measurements")["n"][0])
        t0 = time.perf_counter()
        page = explorer.write_explorer(tmp / "reports", store=store)
        written = time.perf_counter() - t0
        size, plotly_size = page.stat().st_size, len(explorer.plotly_js().encode())
        bundle = explorer.plotly_source()
        print(f"store: {runs} runs x {windows} windows, {rows:,} measurement rows (built in {built:.1f} s)")
        print(f"page: {size / 1e6:.2f} MB ({plotly_size / 1e6:.2f} MB {bundle['package']} {bundle['version']}, {(size - plotly_size) / 1e6:.2f} MB "
              f"data and page), written in {written:.1f} s; the page holds at most the newest {explorer.MAX_RUNS} runs "
              f"and {explorer.MAX_FIGURES:,} figures")
        cut = re.sub(r"<[^>]+>|\s+", " ", re.search(r'<span id="cut">(.*?)</span>', page.read_text(), re.S).group(1))
        print(f"the page says: {cut.strip()}")
        timings = [load_once(page) for _ in range(loads)]
        for tables_ms, paint_ms, bars_ms, every_ms, wall in timings:
            print(f"load: after navigation start, controls and tables filled at {tables_ms:.0f} ms, first paint at "
                  f"{paint_ms:.0f} ms, bars drawn at {bars_ms:.0f} ms, the history at {every_ms:.0f} ms "
                  f"({wall:.2f} s seen from outside)")
        medians = [statistics.median(t[k] for t in timings) for k in range(4)]
        print("median: tables {:.0f} ms, first paint {:.0f} ms, bars {:.0f} ms, every figure {:.0f} ms".format(*medians))
        floor = statistics.median(load_once(plotly_only_page(tmp / "plotly-only.html"))[2] for _ in range(loads))
        print(f"floor: a page of plotly.js and one bar, {floor:.0f} ms (median); load average now "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
