"""reports/explorer.html: one self-contained, offline page over every run in the store.

It opens, like ClickBench's page, on what a reader compares: per experiment and host class, each
engine's newest finished run as one row relative to a base engine the reader picks, per phase or
test, the ratios on a log axis with their 95% CIs and verdicts, all findings rows
(benchlib.data.findings.compare, the one verdict rule) computed here for every base; the page only
shows them. One click below, the raw figures: the reader picks metric, runs, engines, phases and a
base run; bars relative to it with 95% CIs, a table with each figure's provenance and a link to
the report of the run (the report folder whose manifest lists it), the history of every series
over time and the changes between consecutive runs (benchlib.compare.changes, judged by the same rule). The data travels in the
page as JSON, aggregated per run, engine, phase and metric (mean, standard deviation, n), and
plotly.js's official "basic" partial bundle (bar and scatter, all the page draws; 1.2 MB where the
full plotly.js is 4.8 MB, vendored in benchlib/compare/vendor/ with its licence and source) is embedded
once: nothing is fetched, so the page works from a file or an archive. The notebooks' reports keep
the full plotly.js that plotly.py ships: a notebook may draw any trace type.

Past MAX_RUNS runs the page holds the newest ones and says so: the page stays small enough to open
quickly (scripts/bench_explorer.py measures it)."""
from __future__ import annotations

import datetime as dt
import json
import math
import sys
from pathlib import Path
from typing import Any

from ..present.pages import read_manifests, render_template, write_text
from ..core.settings import get_settings

PAGE = "explorer.html"
PLOTLY_DIR = Path(__file__).parent / "vendor" / "plotly.js-basic-dist-min"
# The cut: the newest MAX_RUNS runs, fewer when their figures (a run, engine, phase and metric
# each, ~30 bytes of JSON) pass MAX_FIGURES: with the charting bundle (1.2 MB) the page stays far
# under 10 MB, and its JSON (parsed before anything is drawn) small enough to open in < 2 s.
MAX_RUNS = 300
MAX_FIGURES = 120_000
SIGNIFICANT_DIGITS = 5  # far below any run-to-run noise, and a third of a float's JSON text
SD_DIGITS = 3  # a standard deviation only sets a CI's width


def write_explorer(root: Path | None = None, *, store=None, max_runs: int = MAX_RUNS,
                   max_figures: int = MAX_FIGURES) -> Path:
    """Write <reports>/explorer.html from the store. A store that cannot be read gives a page that
    says so: the site index calls this after every run, and a report must never fail over it."""
    root = Path(root or get_settings().reports_dir)
    root.mkdir(parents=True, exist_ok=True)
    try:
        data = page_data(root, store=store, max_runs=max_runs, max_figures=max_figures)
    except Exception as exc:  # noqa: BLE001 - any reading failure becomes the page's message
        data = {**_empty(), "problem": f"the results store could not be read: {type(exc).__name__}: {exc}"}
        print(f"benchlib: explorer: {data['problem']}", file=sys.stderr)
    path = root / PAGE  # with the site's own templates and atomic write, like reports/index.html
    write_text(path, render_template("explorer.html.j2", plotly_js=plotly_js(), plotly_source=plotly_source(),
                                          data_json=_script_safe(json.dumps(data, separators=(",", ":"))),
                                          data=data))
    return path


def plotly_source() -> dict[str, str]:
    """The vendored bundle's package, version, registry tarball and hashes (SOURCE.json, written
    by scripts/vendor_plotly_basic.sh)."""
    return json.loads((PLOTLY_DIR / "SOURCE.json").read_text())


def plotly_js() -> str:
    return (PLOTLY_DIR / plotly_source()["file"]).read_text(encoding="utf-8")


def _empty() -> dict[str, Any]:
    from .changes import DEFAULT_THRESHOLD, PAIRING_RULE

    return {"runs": [], "engines": [], "variants": [], "metrics": [], "experiments": {}, "hosts": [],
            "cells": {k: [] for k in ("run", "engine", "variant", "metric", "mean", "sd", "n")}, "versions": [],
            "changes": [], "compare": {}, "verdicts": _verdicts(),
            "threshold": DEFAULT_THRESHOLD, "pairing_rule": PAIRING_RULE, "t975": _t_table(),
            "cut": {"total": 0, "shown": 0, "max_runs": MAX_RUNS, "max_figures": MAX_FIGURES, "oldest_shown": None},
            "problem": None,
            "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}


def page_data(root: Path, *, store=None, max_runs: int = MAX_RUNS, max_figures: int = MAX_FIGURES) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready structures with repeated strings as indexes."""
    import pandas as pd

    from . import changes
    from ..engines import engine_color, engine_order, engine_title
    from ..data.store import Store

    store = store or Store.default()
    data = _empty()
    all_runs = changes.run_table(store)
    runs = all_runs.tail(max_runs)  # oldest first: the newest max_runs
    data["cut"].update(total=len(all_runs), max_runs=max_runs, max_figures=max_figures)
    if runs.empty:
        return data
    samples, metrics = changes.observations(list(runs["run_id"]), store)
    summary = changes.summaries(samples)
    figures = summary.groupby("run_id").size().reindex(runs["run_id"], fill_value=0)
    within = figures[::-1].cumsum()[::-1] <= max_figures  # counted from the newest run back
    runs = runs[runs["run_id"].map(within).to_numpy()].reset_index(drop=True)
    run_ids = list(runs["run_id"])
    summary = summary[summary["run_id"].isin(run_ids)]
    data["cut"].update(shown=len(runs), oldest_shown=_iso(runs["started_at"].iloc[0]) if len(runs) else None)
    if runs.empty:
        return data
    versions = changes.versions(store, run_ids)

    run_index = {r: i for i, r in enumerate(run_ids)}
    engines = engine_order(summary["engine"])
    engine_index = {e: i for i, e in enumerate(engines)}
    variant_keys = list(dict.fromkeys(zip(summary["phase"], summary["labels"])))
    variant_index = {v: i for i, v in enumerate(variant_keys)}
    metric_ids = _metric_order(list(metrics["id"]))
    metric_index = {m: i for i, m in enumerate(metric_ids)}
    hosts = list(dict.fromkeys(runs["host_class"]))
    links = report_links(root)
    varying = _varying_parameters(runs)

    data["runs"] = [{
        "id": r.run_id, "experiment": r.experiment, "notebook": r.notebook, "status": r.status,
        "started": _iso(r.started_at), "host": hosts.index(r.host_class), "cores": _int(r.cpu_cores),
        "git": changes.git_label({"git_sha": r.git_sha, "git_dirty": r.git_dirty}), "benchlib": r.benchlib_version,
        "measuring": r.measuring, "params": varying[r.run_id], "report": links.get(r.run_id),
    } for r in runs.itertuples()]
    data["hosts"] = hosts
    data["engines"] = [{"key": e, "title": engine_title(e), "color": engine_color(e)} for e in engines]
    data["variants"] = [{"phase": phase, "labels": labels, "name": _variant_name(phase, labels)}
                        for phase, labels in variant_keys]
    titles = metrics.set_index("id")
    data["metrics"] = [{"id": m, "title": titles.at[m, "title"], "unit": titles.at[m, "unit"],
                        "better": titles.at[m, "better"]} for m in metric_ids]
    data["cells"] = {  # columns as plain lists first: iterating pandas' Arrow strings is slow
        "run": summary["run_id"].map(run_index).tolist(), "engine": summary["engine"].map(engine_index).tolist(),
        "variant": [variant_index[v] for v in zip(summary["phase"].tolist(), summary["labels"].tolist())],
        "metric": summary["metric"].map(metric_index).tolist(), "mean": [_num(v) for v in summary["value"].tolist()],
        "sd": [_num(v, SD_DIGITS) for v in summary["value_std"].tolist()], "n": summary["n"].astype(int).tolist(),
    }
    data["experiments"] = _experiments(summary.merge(runs[["run_id", "experiment"]], on="run_id"), metric_index)
    data["versions"] = [[run_index[v.run_id], engine_index[v.engine], v.server_version, v.image_ref, v.image_source]
                        for v in versions.itertuples() if v.engine in engine_index]
    found = [changes.pairs(summary, runs, versions, list(changes.COST_PREFERENCE))] + [
        changes.pairs(summary, runs, versions, [m]) for m in changes.HEADLINE_METRICS if m in metric_index]
    tested = pd.concat(found, ignore_index=True)
    beyond = tested[tested["flagged"].astype(bool)]  # judged better or worse (findings.judge)
    data["changes"] = [{
        "from": run_index[c["from_run"]], "to": run_index[c["to_run"]], "engine": engine_index[c["engine"]],
        "variant": variant_index[(c["phase"], c["labels"])], "metric": metric_index[c["metric"]],
        "direction": c["direction"], "ratio": _num(c["ratio"]), "ratio_ci95": _num(c["ratio_ci95"]),
        "base_mean": _num(c["base_mean"]), "mean": _num(c["mean"]), "welch_t": _num(c["welch_t"]),
        "welch_dof": _num(c["welch_dof"]), "from_version": c["from_version"], "to_version": c["to_version"],
        "verdict": VERDICT_CODES[c["verdict"]],
    } for c in beyond.to_dict("records")]
    data["compare"] = compared(summary, runs, store, metric_index, run_index, engine_index, variant_index, hosts)
    return data


def _verdicts() -> list[dict[str, Any]]:
    """The verdicts as the page shows them: key, words (findings.VERDICT_WORDS) and decided."""
    from ..data.findings import VERDICT_WORDS, Verdict

    return [{"key": v.value, "words": VERDICT_WORDS[v], "decided": v.decided} for v in Verdict]


VERDICT_CODES = {v["key"]: i for i, v in enumerate(_verdicts())}


def compared(summary, runs, store, metric_index, run_index, engine_index, variant_index, hosts) -> dict[str, Any]:
    """Per experiment and host class ("<experiment>|<host index>"): each engine's newest finished
    run in the experiment's cost metric, and the findings rows of every engine against every other
    as base, per variant (phase and labels): [engine, base, variant, ratio, low, high, verdict code].
    The drift band: the engine's median calibration loop over the base's (none where a run has none)."""

    from . import changes
    from ..data import results
    from ..data import findings as F

    loops = _calibration_medians(store, list(runs["run_id"]))
    finished = runs[runs["status"].isin(changes.FINISHED)]
    out: dict[str, Any] = {}
    for (experiment, host), group in finished.groupby(["experiment", "host_class"], sort=False):
        cells = summary[summary["run_id"].isin(group["run_id"])]
        metric = next((m for m in changes.COST_PREFERENCE if (cells["metric"] == m).any()), None)
        if metric is None:
            continue
        cells = cells[cells["metric"] == metric].merge(group[["run_id", "started_at"]], on="run_id")
        # Each engine's newest finished run holding this metric.
        newest = cells.sort_values("started_at").groupby("engine")["run_id"].last()
        cells = cells[cells["run_id"] == cells["engine"].map(newest)]
        cells = cells.assign(variant=[variant_index[v] for v in zip(cells["phase"], cells["labels"])])
        engines = list(newest.index)
        parsed = changes.Metric.parse(metric)
        higher, unit = parsed.better == "higher", dict(results.COST_METRICS).get(parsed.name, "s")
        rows = []
        for base in engines:
            for engine in engines:
                if engine == base:
                    continue
                factor = _factor(loops.get((newest[engine], engine)), loops.get((newest[base], base)))
                found = F.compare(cells[cells["engine"].isin([base, engine])], base_engine=base, by="variant",
                                  metric=metric, unit=unit, higher_is_better=higher, host_factor=factor)
                rows += [[engine_index[r.engine], engine_index[r.base_engine], int(r.step), _num(r.ratio),
                          _num(r.ratio_low), _num(r.ratio_high), VERDICT_CODES[r.verdict]]
                         for r in found.itertuples()]
        out[f"{experiment}|{hosts.index(host)}"] = {
            "metric": metric_index[metric], "runs": {engine_index[e]: run_index[r] for e, r in newest.items()},
            "rows": rows}
    return out


def _calibration_medians(store, run_ids: list[str]) -> dict[tuple[str, str], float]:
    """(run, engine) -> the median calibration loop (results.calibrations: the host's speed)."""
    rows = store.query(
        "select run_id, engine, median(value) as loop from measurements where metric = 'calibration_cpu_time' "
        "and \"window\" = 'calibration' and run_id in (select unnest(?)) group by run_id, engine", [run_ids])
    return {(r, e): float(v) for r, e, v in zip(rows["run_id"], rows["engine"], rows["loop"]) if v and v > 0}


def _factor(subject: float | None, base: float | None) -> float:
    return subject / base if subject and base else float("nan")


def report_links(root: Path) -> dict[str, str]:
    """Run id -> its report, relative to the reports folder: the notebook's HTML in the newest
    folder whose manifest lists the run (the folder's index when the HTML is missing)."""
    links: dict[str, str] = {}
    for manifest in read_manifests(root):  # newest first
        for outcome in manifest.get("outcomes", []):
            target = f"{manifest['folder']}/{outcome.get('html') or 'index.html'}"
            for run_id in outcome.get("run_ids", []):
                links.setdefault(run_id, target)
    return links


def _metric_order(metric_ids: list[str]) -> list[str]:
    """The engine's cost first (what the change list follows), then TPS and p95, then the rest."""
    from .changes import COST_PREFERENCE, HEADLINE_METRICS

    first = [m for m in (*COST_PREFERENCE, *HEADLINE_METRICS) if m in metric_ids]
    return first + sorted(m for m in metric_ids if m not in first)


def _experiments(cells, metric_index: dict[str, int]) -> dict[str, dict[str, Any]]:
    out = {}
    for experiment, frame in cells.groupby("experiment"):
        present = sorted(metric_index[m] for m in frame["metric"].unique())
        out[experiment] = {"metrics": present, "default": present[0]}  # in _metric_order: the cost first
    return out


def _varying_parameters(runs) -> dict[str, str]:
    """Per run, its measuring parameters that differ between runs of its experiment ("rows=20000"):
    what tells two series of one cell apart."""
    out = {}
    for _, frame in runs.groupby("experiment"):
        parsed = [json.loads(m) for m in frame["measuring"]]
        keys = sorted({k for p in parsed for k in p if len({json.dumps(q.get(k), sort_keys=True) for q in parsed}) > 1})
        for run_id, p in zip(frame["run_id"], parsed):
            out[run_id] = " ".join(f"{k}={json.dumps(p.get(k), separators=(',', ':'))}" for k in keys)
    return out


def _variant_name(phase: str, labels: str | None) -> str:
    """`insert`, or `oltp_point_select threads=16`: the labels that say more than the phase name.
    No commas: the page's URL lists phases separated by commas."""
    parsed = json.loads(labels or "{}")
    extra = " ".join(f"{k}={v}" for k, v in sorted(parsed.items()) if str(v) != phase)
    return f"{phase} {extra}".strip().replace(",", ";")


def _t_table() -> list[float | None]:
    """results.t_quantile_975 for 0..60 degrees of freedom: the page tests a ratio against a base it
    picks itself with the same quantiles as the Python side (1.96 above 60)."""
    from ..data.results import t_quantile_975

    return [_num(t_quantile_975(dof)) for dof in range(61)]


def _num(value, digits: int = SIGNIFICANT_DIGITS) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(f"{float(value):.{digits}g}")


def _int(value) -> int | None:
    return None if value is None or value != value else int(value)


def _iso(value) -> str | None:
    return None if value is None or value != value else value.isoformat(timespec="seconds")


def _script_safe(text: str) -> str:
    """JSON inside a <script> element: `</script>` or `<!--` in a parameter must not end it."""
    return text.replace("<", "\\u003c")
