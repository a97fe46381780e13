"""The client-API workload's arithmetic on plain frames, so it is tested with known answers:
per-operation figures of each window, their summary over repetitions, the contended test, and
the findings (each layer against the raw driver, the engines against PostgreSQL as seed 002
ordered them, TCP against the Unix socket)."""
from __future__ import annotations

import json
import math

import pandas as pd

from ...data import findings as F
from ...data import results
from .workload import CONTENDED, HARNESS, LAYER_NAMES, LOOP_TIME, OPERATIONS, TRANSPORTS

# Seed 002's "local": the most efficient medium the API has. Ours: Unix socket, else TCP on this host.
LOCAL_ORDER = ("in-process", "unix", "tcp")
# Seed 002 measured ODB: prepared statements through each database's C library. Per engine, the
# first of these layers that ran stands in for it.
SEED_LIKE_LAYERS = ("c_prepared", "prepared", "driver")
BASE_ENGINE = "postgres"  # seed 002's tables compare to PostgreSQL: its ratios travel, its µs do not
SEED_HARDWARE = "Xeon E5520"  # seed 002's local figures for all three engines come from this machine
FIGURES = ("loop_us", "client_us", "server_us", "process_us")  # what findings compare, each with sd and CI
LAYER, ORDER, TRANSPORT, CONTENDED_KIND = "layer", "order", "transport", "contended"
SHORT_WINDOW_S = 1.0  # a contended window shorter than this is mostly its workers' start and finish
# Threads of one Python process share its interpreter lock: a pure-Python driver's side (PyMySQL) is then
# mostly that lock, not the engine, so a threads mode's ratio is set beside no ODB (C++) ratio of the seed's
# (hostile read 46b, 04 #1: MySQL's client 9.80 of 12.87 CPU-s with 32 threads).
SEED_CONTENDED_MODES = frozenset({"processes"})
THREADS_SEED_REASON = "threads share one interpreter lock"


def labelled(measurements: pd.DataFrame) -> pd.DataFrame:
    """The phase windows, with their labels as columns (layer, transport, objects, mode, workers)."""
    m = measurements.copy()
    labels = [json.loads(x) if isinstance(x, str) else {} for x in m["labels"]]
    for key in ("layer", "transport", "objects", "mode", "workers"):
        m[key] = [d.get(key) for d in labels]
    return m[m["window"] == "phase"]


def per_operation(m: pd.DataFrame) -> pd.DataFrame:
    """One row per window of the layers' part: µs per operation of wall (the loop's clock), of
    the client process's CPU and of the engine's CPU. A window's fixed cost in this process (perf
    control, cgroup reads) is not an operation's: the empty-operation window of the same engine,
    repetition and transport measures it (its CPU beyond its loop), and every window of that set
    has it subtracted."""
    m = m[m["phase"] != CONTENDED]
    keys = ["engine", "repetition", "layer", "transport", "phase", "objects", "seq"]

    def pick(metric: str, scopes: tuple[str, ...]) -> pd.Series:
        rows = m[(m["metric"] == metric) & m["scope"].isin(scopes)]
        return rows.groupby(keys)["value"].sum(min_count=1)

    out = pd.DataFrame({
        "loop_s": pick(LOOP_TIME, ("client",)), "window_s": pick("wall_time", ("server", "embedded")),
        "client_s": pick("cpu_time", ("client",)), "server_s": pick("cpu_time", ("server",)),
        "process_s": pick("cpu_time", ("embedded",)),
    }).reset_index()
    fixed = out[out["layer"] == HARNESS].assign(
        fixed_client_s=lambda d: d["client_s"] - d["loop_s"], fixed_process_s=lambda d: d["process_s"] - d["loop_s"])
    out = out.merge(fixed[["engine", "repetition", "transport", "fixed_client_s", "fixed_process_s"]],
                    on=["engine", "repetition", "transport"], how="left")
    layer_rows = out["layer"] != HARNESS
    for col in ("client", "process"):
        out[f"{col}_s"] = out[f"{col}_s"] - out[f"fixed_{col}_s"].fillna(0.0).where(layer_rows, 0.0)
    n = out["objects"].astype(float)
    for col in ("loop", "client", "server", "process"):
        out[f"{col}_us"] = out[f"{col}_s"] / n * 1e6
    out["window_overhead_ms"] = (out["window_s"] - out["loop_s"]) * 1e3
    # Embedded engines: one process holds Python and the engine, so its CPU is split no further.
    embedded = out["transport"] == "in-process"
    out["client_us"] = out["client_us"].where(~embedded)
    out["server_us"] = out["server_us"].where(~embedded)
    return out


def summarize(per_op: pd.DataFrame) -> pd.DataFrame:
    """Mean over repetitions per engine, layer, transport and operation, each figure with its
    standard deviation and 95% CI half width; the client's share of client + server CPU."""
    keys = ["engine", "layer", "transport", "phase"]
    extra = [c for c in ("objects", "fixed_client_s", "fixed_process_s") if c in per_op]
    # Labels arrive as Python objects: numbers here, so the means below keep them.
    per_op = per_op.assign(**{c: pd.to_numeric(per_op[c], errors="coerce") for c in extra})
    g = per_op.groupby(keys, sort=False, dropna=False)
    out = g[[*FIGURES, "window_overhead_ms", *extra]].mean(numeric_only=True).join(results.spread(g, FIGURES)) \
        .reset_index()
    out["client_share"] = out["client_us"] / (out["client_us"] + out["server_us"])
    return out


def contended(m: pd.DataFrame) -> pd.DataFrame:
    """The contended test per engine and mode: operations, completion time, throughput, errors
    and retries, and the engine's and the client's CPU. An embedded engine runs in its workers
    (threads of this process, or forked processes counted as the client): its engine CPU is
    theirs, one figure, and it has no client CPU of its own."""
    m = m[m["phase"] == CONTENDED]
    if m.empty:
        return pd.DataFrame()
    keys = ["engine", "mode", "transport", "workers", "seq"]
    wide = m.pivot_table(index=keys, columns=["metric", "scope"], values="value", aggfunc="sum")
    wide.columns = [f"{metric}:{scope}" for metric, scope in wide.columns]
    wide = wide.reset_index()
    get = lambda c: wide[c] if c in wide else float("nan")  # noqa: E731
    ops = sum(get(f"{k}:client") for k in ("inserts", "updates", "deletes", "selects"))
    in_process = pd.Series(get("cpu_time:embedded"), index=wide.index)
    embedded = in_process + pd.Series(get("cpu_time:client"), index=wide.index).fillna(0.0)
    return pd.DataFrame({
        "engine": wide["engine"], "mode": wide["mode"], "transport": wide["transport"],
        "workers": wide["workers"].astype(int),
        "completion_s": get("completion_time:client"), "operations": ops,
        "ops_per_s": ops / get("completion_time:client"), "errors": get("errors:client"),
        "retries": get("retries:client"), "failed": get("failed:client"),
        "engine_cpu_s": get("cpu_time:server").fillna(embedded) if "cpu_time:server" in wide else embedded,
        "client_cpu_s": get("cpu_time:client").where(in_process.isna()),
    })


def ordered(df: pd.DataFrame, engines) -> pd.DataFrame:
    """Rows in catalog order of engines, then transport, layer and operation."""
    from ...engines import engine_order

    order = {e: i for i, e in enumerate(engine_order(engines))}
    return df.assign(_e=df["engine"].map(order),
                     _l=df["layer"].map({n: i for i, n in enumerate((HARNESS, *LAYER_NAMES))}),
                     _t=df["transport"].map({t: i for i, t in enumerate(TRANSPORTS)}),
                     _o=df["phase"].map({o: i for i, o in enumerate(OPERATIONS)})
                     ).sort_values(["_e", "_t", "_l", "_o"]).drop(columns=["_e", "_l", "_t", "_o"])


def most_local(transports) -> str | None:
    return next((t for t in LOCAL_ORDER if t in set(transports)), None)


def seed_like(layers) -> str | None:
    return next((layer for layer in SEED_LIKE_LAYERS if layer in set(layers)), None)


def seed_ratios() -> dict[str, float]:
    """Seed 002's µs per load over PostgreSQL's, per engine, on its one machine that ran all three."""
    ref = results.reference("seed002_load")
    ref = ref[ref["client"].isna() & ref["hardware"].str.contains(SEED_HARDWARE, regex=False)]
    load = ref.set_index("engine")["load_us"]
    return {e: float(v / load[BASE_ENGINE]) for e, v in load.items() if e != BASE_ENGINE}


def seed_remote_ratios() -> dict[str, float]:
    """Seed 002's remote over local µs per load, per engine, where it gives both (over gigabit Ethernet)."""
    ref = results.reference("seed002_load")
    ref = ref[ref["client"].isna()].pivot_table(index=["engine", "hardware"], columns="configuration",
                                                values="load_us").dropna(subset=["remote", "local"], how="any") \
        if {"remote", "local"} <= set(ref["configuration"]) else pd.DataFrame()
    return {e: float(r["remote"] / r["local"]) for (e, _), r in ref.iterrows()}


def seed_contended_ratios() -> dict[str, float]:
    """Seed 002's contended throughput over PostgreSQL's (the same operations, so time inverted)."""
    ref = results.reference("seed002_contended").set_index("engine")["seconds"]
    return {e: float(ref[BASE_ENGINE] / s) for e, s in ref.items() if e != BASE_ENGINE}


# The caveat on every server CPU row: the cgroup's CPU holds the server's background work (no idle
# rate is subtracted), not only the request path's.
SERVER_BACKGROUND = "server-background"
SERVER_METRIC = "server CPU per operation"
# The caveat on the SQLAlchemy layers' rows of an engine whose driver would prepare by itself
# (psycopg after 5 executions): those layers send plain statements, as the raw driver does.
PLAIN_STATEMENTS = "plain-statements"
SQLALCHEMY_LAYERS = frozenset({"core", "orm_object", "orm_batch"})
# The caveat on a layer row whose CI spans over SEED_TESTABLE_SPAN and whose cheaper side's work in a
# window is under FIXED_COST_MULTIPLE times the window's fixed cost subtracted from it (client or
# in-process CPU): too few objects per window for the work to stand out of that cost.
FEW_OBJECTS = "few-objects"
FIXED_COST_MULTIPLE = 2.0
# A layer row's µs added per operation over the raw driver (the layer's mean less the driver's): what the
# answer states first and ranks by, its ratio second. A ratio over a small base (SQLite's 20.9 µs) reads
# large where the layer adds least (hostile read 46b, 04 #2: orm_object 22.3x on SQLite is +445 µs,
# 6.46x on PostgreSQL +694 µs).
ADDED = "added_us"
# The caveat on orm_batch's rows: one transaction per Session of orm_batch_size objects, where the
# raw driver commits each object.
BATCHED = "batched"


def findings(summary: pd.DataFrame, contended_runs: pd.DataFrame | None = None, *, host=lambda engine, base: None,
             operation: str = "load", headline_limit: int = 5, plain=frozenset()) -> pd.DataFrame:
    """The findings rows (findings.FINDING_COLUMNS plus `kind` and `layer`):
    - per engine, on its most local transport, each layer against the raw driver: client CPU and
      server CPU per `operation` (in-process CPU for an embedded engine);
    - seed 002's order: each engine with a seed figure against PostgreSQL, wall time per load
      through the ODB-like layer on each one's most local transport, with the seed's ratio;
    - per server engine, TCP against its Unix socket through the raw driver, with the seed's
      remote / local ratio;
    - the contended test per mode against PostgreSQL's, with the seed's ratio.
    `host(engine, base)`: the engine's calibration loop over the base's (results.host_factor);
    `plain`: the engines whose SQLAlchemy layers turn their driver's own preparing off (PLAIN_STATEMENTS)."""
    s = summary[(summary["phase"] == operation) & (summary["layer"] != HARNESS)]
    engines = list(dict.fromkeys(s["engine"]))
    rows = []
    for engine in engines:
        mine = s[s["engine"] == engine]
        local = most_local(mine["transport"])
        by = mine[mine["transport"] == local].set_index("layer")
        if "driver" not in by.index:
            continue
        figures = (("process_us", "in-process CPU per operation"),) if local == "in-process" else (
            ("client_us", "client CPU per operation"), ("server_us", SERVER_METRIC))
        for layer in [x for x in LAYER_NAMES if x in by.index and x != "driver"]:
            for column, metric in figures:
                contrast = results.contrast(by.loc["driver"], by.loc[layer], column)
                wide = F.all_wide(pd.DataFrame([{"verdict": F.Verdict.NOISE.value, "ratio_low": contrast.get("ratio_low"),
                                                 "ratio_high": contrast.get("ratio_high")}]))
                few = wide and _under_fixed_cost(by.loc["driver"], by.loc[layer], column)
                rows.append({**F.finding(engine=engine, base_engine=engine, step=operation, metric=metric, unit="µs",
                                         contrast=contrast,
                                         regime=f"{metric.split(' per ')[0]}, {layer} vs driver ({local})",
                                         caveats=[SERVER_BACKGROUND] * (metric == SERVER_METRIC)
                                         + [PLAIN_STATEMENTS] * (engine in plain and layer in SQLALCHEMY_LAYERS)
                                         + [FEW_OBJECTS] * few + [BATCHED] * (layer == "orm_batch")),
                             "kind": LAYER, "layer": layer, "base_label": "driver",
                             ADDED: contrast.get("mean", math.nan) - contrast.get("base_mean", math.nan)})
    rows += _order_rows(s, engines, host)
    rows += _transport_rows(s, engines)
    if contended_runs is not None and not contended_runs.empty:
        rows += _contended_rows(contended_runs, host)
    out = F.table(rows)
    if out.empty:
        return out
    out["headline"] = out.index.isin(_headline(out, headline_limit))
    return out


def _under_fixed_cost(base: pd.Series, row: pd.Series, column: str) -> bool:
    """Whether the cheaper side's work in one window (objects x its µs per operation in `column`) is
    under FIXED_COST_MULTIPLE times the window's fixed cost subtracted from that column (FEW_OBJECTS);
    a column with no fixed cost subtracted (the server's) never is."""
    fixed = {"client_us": "fixed_client_s", "process_us": "fixed_process_s"}.get(column)
    if fixed is None or fixed not in base or not (base[fixed] > 0) or not (base.get("objects", 0) > 0):
        return False
    work_s = base["objects"] * min(base[column], row[column]) / 1e6
    return bool(work_s < FIXED_COST_MULTIPLE * base[fixed])


def _order_rows(s: pd.DataFrame, engines: list[str], host) -> list[dict]:
    """Seed 002's per-load order: each engine it measured against PostgreSQL, ODB-like layers."""
    if BASE_ENGINE not in engines:
        return []
    seed = seed_ratios()
    family = {results.product_key(e) for e in engines}
    # MariaDB speaks MySQL's protocol through the same drivers: it stands in where MySQL did not run.
    stand_in = {"mariadb": "mysql"} if "mysql" not in family else {}

    def where(engine: str, layer: str) -> tuple[str, pd.Series]:
        at = s[(s["engine"] == engine) & (s["layer"] == layer)]
        transport = most_local(at["transport"])
        return transport, at.set_index("transport").loc[transport]

    rows = []
    for engine in engines:
        key = results.product_key(engine)
        seed_key = stand_in.get(key, key)
        if engine == BASE_ENGINE or seed_key not in seed:
            continue
        # Each side's own ODB-like layer (its first of SEED_LIKE_LAYERS), as seed 002 ran ODB's prepared
        # statements on each: the raw driver is PostgreSQL's ODB-like layer only where it ran no other.
        layer = seed_like(s[s["engine"] == engine]["layer"])
        base_layer = seed_like(s[s["engine"] == BASE_ENGINE]["layer"])
        if layer is None or base_layer is None:
            continue
        (transport, row), (base_transport, base) = where(engine, layer), where(BASE_ENGINE, base_layer)
        layers = layer if layer == base_layer else f"{layer} vs {base_layer}"
        rows.append({**F.finding(engine=engine, base_engine=BASE_ENGINE, step="load", metric="wall time per operation",
                                 unit="µs", contrast=results.contrast(base, row, "loop_us"),
                                 regime=f"wall time, ODB-like: {layers} ({transport} vs {base_transport})",
                                 host_factor=host(engine, BASE_ENGINE), seed_ratio=seed[seed_key],
                                 caveats=["odb-like"] + (["stand-in"] if key in stand_in else [])),
                     "kind": ORDER, "layer": layer})
    return rows


def _transport_rows(s: pd.DataFrame, engines: list[str]) -> list[dict]:
    """Seed 002's local < remote: TCP to the container on this host against the Unix socket."""
    seed = seed_remote_ratios()
    rows = []
    for engine in engines:
        by = s[(s["engine"] == engine) & (s["layer"] == "driver")].set_index("transport")
        if not {"unix", "tcp"} <= set(by.index):
            continue
        rows.append({**F.finding(engine=engine, base_engine=engine, step="load", metric="wall time per operation",
                                 unit="µs", contrast=results.contrast(by.loc["unix"], by.loc["tcp"], "loop_us"),
                                 regime="wall time, driver: TCP vs Unix socket",
                                 seed_ratio=seed.get(results.product_key(engine)), caveats=["remote-ethernet"],
                                 seed_comparable=False),
                     "kind": TRANSPORT, "layer": "driver", "base_label": "Unix socket"})
    return rows


def _contended_rows(c: pd.DataFrame, host) -> list[dict]:
    """The contended test's throughput against PostgreSQL's, per mode (one window each: untested)."""
    seed = seed_contended_ratios()
    g = c.groupby(["engine", "mode"], sort=False)
    summary = g[["ops_per_s", "workers", "completion_s"]].mean().join(results.spread(g, ["ops_per_s"]))
    rows = []
    for (engine, mode), row in summary.iterrows():
        if engine == BASE_ENGINE or (BASE_ENGINE, mode) not in summary.index:
            continue
        rows.append({**F.finding(engine=engine, base_engine=BASE_ENGINE, step=f"contended ({mode})",
                                 metric="operations per second", unit="1/s", higher_is_better=True,
                                 contrast=results.contrast(summary.loc[(BASE_ENGINE, mode)], row, "ops_per_s"),
                                 regime=f"operations per second ({int(row['workers'])} workers)",
                                 host_factor=host(engine, BASE_ENGINE), seed_ratio=seed.get(results.product_key(engine)),
                                 seed_comparable=mode in SEED_CONTENDED_MODES,
                                 caveats=["contended"] + (["short-window"] if min(
                                     row["completion_s"], summary.loc[(BASE_ENGINE, mode), "completion_s"])
                                                           < SHORT_WINDOW_S else [])),
                     "kind": CONTENDED_KIND, "layer": "driver",
                     **({} if mode in SEED_CONTENDED_MODES else {"seed_reason": THREADS_SEED_REASON})})
    return rows


def _headline(found: pd.DataFrame, limit: int) -> list:
    """What the answer states: the decided rows, layers first (the question), the layers by µs
    added over the driver (ADDED, either way), the other kinds furthest from 1 first; where nothing is decided, seed 002's order, then the base engine's costliest
    layer (its client and server rows), then the other layers' client CPU, costliest first."""
    decided = found[found["verdict"].isin([v.value for v in F.Verdict if v.decided])]
    if not decided.empty:
        distance = decided["ratio"].map(lambda r: abs(math.log(r)) if r == r and r > 0 else 0.0)
        if ADDED in decided:
            added = pd.to_numeric(decided[ADDED], errors="coerce").abs()
            distance = added.where((decided["kind"] == LAYER) & added.notna(), distance)
        ranked = decided.assign(_layer=decided["kind"] != LAYER, _d=-distance).sort_values(["_layer", "_d"])
        # Each direction's largest decided row is stated: costs added must not crowd out the one layer
        # that saves (hostile read 44, 04 #3: MySQL c_driver's client 0.385x).
        firsts = [ranked.index[ranked["verdict"] == v][0] for v in (F.Verdict.BETTER.value, F.Verdict.WORSE.value)
                  if (ranked["verdict"] == v).any()]
        rest = [i for i in ranked.index if i not in firsts][:max(limit - len(firsts), 0)]
        return [i for i in ranked.index if i in set(firsts[:limit]) | set(rest)]
    picked = list(found.index[found["kind"] == ORDER][:2])
    layers = found[found["kind"] == LAYER]
    engine = BASE_ENGINE if BASE_ENGINE in set(layers["engine"]) else next(iter(layers["engine"]), None)
    mine = layers[layers["engine"] == engine]
    cost = mine[mine["metric"] != SERVER_METRIC].sort_values(
        "ratio", ascending=False, key=lambda r: r.map(lambda x: x if x == x else -math.inf))
    for layer in cost["layer"]:
        picked += [i for i in mine.index[mine["layer"] == layer] if i not in picked]
        if len(picked) >= limit:
            break
    return picked[:limit]
