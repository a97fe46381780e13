"""What the B-tree/LSM (load_fetch) and star-schema (ssb) reports share: a workload's dialect found
from an engine key, a byte count for a caption, and the headline chart of a findings table (each
subject's ratio to its base on a log axis with its 95% CI, the verdict as the marker, the seed's
ratio beside). Imports only the shared layers (engines, findings, plots), never a workload."""
from __future__ import annotations

import math
from typing import Any, Callable

import pandas as pd

from .. import findings as F
from ..engines import find_engine
from ..plots import engine_color, engine_title


def finite(x: Any) -> bool:
    """A number that is neither missing, NaN nor infinite."""
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def dialect_of(key: str, dialect_for: Callable[[Any], Any]):
    """The workload's dialect for an engine key; None for a key this benchlib no longer declares
    (a stored run's engine) or one the workload has no dialect for."""
    engine = find_engine(key)
    return dialect_for(engine) if engine is not None else None


def size_text(value: float | None) -> str:
    """Bytes in the largest binary unit under the value (`1.5 GiB`); `unknown` for a missing one."""
    if value is None or value != value:
        return "unknown"
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


# A verdict drawn as a marker: filled where the run tells the sides apart (or shows them equal),
# open where it cannot, a cross where the two sides did different work.
_SYMBOLS = {F.Verdict.NOT_COMPARABLE.value: "x-thin-open"}


def _symbol(verdict: str) -> str:
    if verdict in _SYMBOLS:
        return _SYMBOLS[verdict]
    return "circle" if F.Verdict(verdict).decided else "circle-open"


# Series of one subject engine after its first: drawn in these, so that side by side they differ.
_MORE = ("#7F7F7F", "#17BECF", "#BCBD22", "#8C564B")


def ratio_figure(found: pd.DataFrame, *, x: Callable[[dict], str], series: Callable[[dict], str], title: str,
                 name: str, y_title: str, height: int = 330):
    """Findings rows as points: `x(row)` their category (in the rows' order), one series per
    `series(row)` side by side (a subject engine's first series in its colour), the ratio on a log
    axis with its 95% CI as error bars, a line at 1, the seed's ratio as a grey diamond where the
    row has one. Rows without a ratio are left out."""
    import plotly.graph_objects as go

    rows = [r for r in found.to_dict("records") if finite(r.get("ratio")) and r["ratio"] > 0]
    fig = go.Figure()
    seen: list[str] = []
    for label in dict.fromkeys(series(r) for r in rows):
        mine = [r for r in rows if series(r) == label]
        subject = mine[0]["engine"]
        color = engine_color(subject) if subject not in seen else _MORE[(len(seen) - 1) % len(_MORE)]
        seen.append(subject)
        ratio = [r["ratio"] for r in mine]
        high = [r["ratio_high"] - r["ratio"] if finite(r.get("ratio_high")) else 0 for r in mine]
        low = [r["ratio"] - r["ratio_low"] if finite(r.get("ratio_low")) else 0 for r in mine]
        fig.add_scatter(
            name=label, x=[x(r) for r in mine], y=ratio, mode="markers",
            marker=dict(color=color, size=10, symbol=[_symbol(r["verdict"]) for r in mine], line=dict(width=2, color=color)),
            error_y=dict(type="data", symmetric=False, array=high, arrayminus=low, visible=True, color=color),
            customdata=[[F.fmt_ratio(r["ratio"], r.get("ratio_low"), r.get("ratio_high")),
                         F.VERDICT_WORDS[F.Verdict(r["verdict"])], engine_title(r["base_engine"])] for r in mine],
            hovertemplate=f"{label}, %{{x}}: %{{customdata[0]}} of %{{customdata[2]}}'s (%{{customdata[1]}})"
                          "<extra></extra>")
    seeded = [r for r in rows if finite(r.get("seed_ratio"))]
    if seeded:
        fig.add_scatter(name="seed 001", x=[x(r) for r in seeded], y=[r["seed_ratio"] for r in seeded],
                        mode="markers", marker=dict(color="#9E9E9E", size=10, symbol="diamond"),
                        hovertemplate="seed 001, %{x}: %{y:.3g}x<extra></extra>")
    values = [v for r in rows for v in (r["ratio"], r.get("ratio_low"), r.get("ratio_high"), r.get("seed_ratio"))
              if finite(v) and v > 0]
    span = (math.log10(min(values + [1.0])) - 0.15, math.log10(max(values + [1.0])) + 0.15)
    fig.add_hline(y=1, line=dict(color="#555", width=1, dash="dot"))
    fig.update_layout(
        title=title, template="plotly_white", height=height, margin=dict(l=60, r=20, t=50, b=40),
        meta={"benchlib_name": name}, legend_title="● decided ○ not told apart × not comparable", showlegend=True,
        scattermode="group", scattergap=0.4,
        xaxis=dict(categoryorder="array", categoryarray=list(dict.fromkeys(x(r) for r in rows))))
    fig.update_yaxes(type="log", title_text=f"{y_title} (log scale)", range=list(span))
    return fig


def one_each(base: float, subject: float) -> dict:
    """A `results.contrast`-shaped comparison of one measurement per side (a load, a size, a cold
    run): the ratio, no CI and no test, so findings.judge calls it untested."""
    return {"mean": subject, "base_mean": base, "n": 1, "base_n": 1,
            "ratio": subject / base if base and finite(base) and finite(subject) else None, "beyond_noise": None}
