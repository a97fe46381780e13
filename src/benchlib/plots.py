"""Plotting helpers: one fixed colour per engine in every figure, and a plotly renderer that
works in JupyterLab (interactive mime bundle) and in the self-contained HTML reports (a div
that uses the plotly.js the report template embeds once)."""
from __future__ import annotations

import re
from typing import Callable, Sequence

import pandas as pd

from .engines import CLUSTERS, ENGINES

# Engines a reference article measured that benchlib has no module for (MariaDB Xpand, a cloud
# service): drawn beside the modules' own, which come last so a module always wins.
_REFERENCE_ENGINES = {"xpand": ("MariaDB Xpand", "#7B3F00")}
_DECLARED = {**ENGINES, **CLUSTERS}
ENGINE_COLORS = {**{k: c for k, (_, c) in _REFERENCE_ENGINES.items()}, **{k: e.color for k, e in _DECLARED.items()}}
ENGINE_TITLES = {**{k: t for k, (t, _) in _REFERENCE_ENGINES.items()}, **{k: e.title for k, e in _DECLARED.items()}}
# For keys nobody declared (an engine imported from another store, say): still drawn, in a
# colour fixed by the key so it is the same in every figure.
_FALLBACK_COLORS = ("#8C564B", "#E377C2", "#7F7F7F", "#17BECF", "#BCBD22", "#9467BD")


def engine_color(key: str) -> str:
    """Versions share their engine's colour: `postgres@15` is drawn as `postgres`."""
    name = key.partition("@")[0]
    if name in ENGINE_COLORS:
        return ENGINE_COLORS[name]
    return _FALLBACK_COLORS[sum(name.encode()) % len(_FALLBACK_COLORS)]


def engine_order(keys) -> list[str]:
    """Engines in catalog order, then any others in the order given."""
    keys = list(dict.fromkeys(keys))
    return [e for e in ENGINE_COLORS if e in keys] + [e for e in keys if e not in ENGINE_COLORS]


def engine_title(key: str) -> str:
    name, at, version = key.partition("@")
    return f"{ENGINE_TITLES[name]} {version}" if at and name in ENGINE_TITLES else ENGINE_TITLES.get(key, key)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "figure"


# Beyond this ratio between the tallest and the shortest bar of one category, the shortest is a
# sliver on a linear axis (FerretDB's update_many is ~57x PostgreSQL's): the bar helpers then
# choose a log axis and say so in the axis title.
LOG_AXIS_SPREAD = 20.0


def bar_spread(df: pd.DataFrame, value: str, categories: Sequence[str]) -> float:
    """The widest ratio between the tallest and the shortest positive bar within one x category
    (1.0 when there is none). Categories whose tallest bar is itself a sliver beside the figure's
    tallest (an idle baseline beside the work) do not count: no axis makes them comparable to the
    rest, and a log axis for their sake would distort everything else."""
    positive = df[pd.to_numeric(df[value], errors="coerce") > 0]
    if positive.empty:
        return 1.0
    tallest = positive[value].max()
    extremes = positive.groupby(list(categories), sort=False)[value].agg(["max", "min"])
    spreads = [top / bottom for top, bottom in extremes.itertuples(index=False) if top * LOG_AXIS_SPREAD >= tallest]
    return max(spreads, default=1.0)


def _value_axis(fig, unit: str, log_y: bool | None, spread: float) -> None:
    """The value axis: log when asked, or when the bars of one category spread beyond
    LOG_AXIS_SPREAD; the title says so (kept short: a long axis title is cut at the plot's height)."""
    if log_y is None and spread > LOG_AXIS_SPREAD:
        fig.update_yaxes(title_text=f"{unit} (log scale, {spread:.0f}x spread)", type="log")
    elif log_y:
        fig.update_yaxes(title_text=f"{unit} (log scale)", type="log")
    else:
        fig.update_yaxes(title_text=unit)
        return
    _note_undrawable(fig, unit)


def _note_undrawable(fig, unit: str) -> None:
    """A log axis has no place for zero or a negative value (a cost net of the idle baseline can
    fall below it, within the baseline's noise): such bars would be silently missing, so they are
    left out of the drawing and named under the figure with their values."""
    missing = []
    for trace in fig.data:
        if trace.type != "bar" or trace.y is None:
            continue
        ys = list(trace.y)
        nested = len(trace.x) > 0 and isinstance(trace.x[0], (list, tuple))  # a two-level category axis
        for i, y in enumerate(ys):
            if y is not None and y == y and y <= 0:
                where = " / ".join(str(level[i]) for level in trace.x) if nested else trace.x[i]
                missing.append(f"{trace.name} {where} ({y:.3g} {unit})")
                ys[i] = None
        trace.y = ys
    if missing:
        fig.add_annotation(text="not drawn on the log axis (≤ 0): " + ", ".join(missing), showarrow=False,
                           xref="paper", yref="paper", x=0, y=-0.16, xanchor="left", yanchor="top",
                           font=dict(size=11))
        fig.update_layout(margin=dict(b=max(fig.layout.margin.b or 0, 90)))


def bars_by_phase(df: pd.DataFrame, value: str, *, title: str, unit: str, error: str | None = None,
                  name: str | None = None, phases: Sequence[str] | None = None, log_y: bool | None = None,
                  error_minus: str | None = None):
    """Grouped bars: phases on x (in `phases` order, else as they appear), one bar per engine in
    its fixed colour. `log_y`: None chooses from the data (see bar_spread), True or False forces.
    `error`: the error bar's length above the bar, and below it too unless `error_minus` gives that
    (a ratio's CI on the log scale is not symmetric)."""
    import plotly.graph_objects as go

    present = [p for p in (phases or dict.fromkeys(df["phase"])) if p in set(df["phase"])]
    fig = go.Figure()
    for engine in engine_order(df["engine"]):
        sub = df[df["engine"] == engine].set_index("phase").reindex(present)
        fig.add_bar(
            name=engine_title(engine), x=present, y=sub[value], marker_color=engine_color(engine),
            error_y=dict(type="data", array=sub[error], visible=True, symmetric=error_minus is None,
                         arrayminus=sub[error_minus] if error_minus else None) if error else None,
            hovertemplate=f"{engine_title(engine)} %{{x}}: %{{y:.4g}} {unit}<extra></extra>",
        )
    fig.update_layout(
        title=title, barmode="group", xaxis_title="phase", template="plotly_white",
        legend_title="engine", meta={"benchlib_name": name or slug(title)}, height=420,
        margin=dict(l=60, r=20, t=60, b=50),
    )
    shown = df[df["phase"].isin(present)]
    _value_axis(fig, unit, log_y, bar_spread(shown, value, ["phase"]))
    return fig


def use_report_renderer() -> None:
    """Make fig.show() emit both the plotly mime bundle (JupyterLab) and an HTML div (reports)."""
    import plotly.io as pio
    from plotly.io._base_renderers import MimetypeRenderer

    class BenchlibRenderer(MimetypeRenderer):
        def to_mimebundle(self, fig_dict):
            html = pio.to_html(fig_dict, include_plotlyjs=False, full_html=False, validate=False,
                               config={"displaylogo": False, "responsive": True})
            return {"application/vnd.plotly.v1+json": {"data": fig_dict.get("data", []),
                                                       "layout": fig_dict.get("layout", {})},
                    "text/html": html}

    pio.renderers["benchlib"] = BenchlibRenderer()
    pio.renderers.default = "benchlib"


def throughput_latency(summary: pd.DataFrame, *, title: str, name: str, knees: pd.DataFrame | None = None):
    """Seed 004's chart, on a log threads axis (a doubling is the same width wherever it falls, so
    8 -> 32 is not drawn like 32 -> 45): throughput per engine as a solid line with its 95% CI (one
    colour per engine), p95 latency as a dotted line on the right axis, the useful-capacity knee
    marked where it is determined."""
    from plotly.subplots import make_subplots

    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for engine in engine_order(summary["engine"]):
        df = summary[summary["engine"] == engine].sort_values("threads")
        color, label = engine_color(engine), engine_title(engine)
        fig.add_scatter(x=df["threads"], y=df["tps"], name=f"{label} TPS", mode="lines+markers",
                        line=dict(color=color), error_y=dict(type="data", array=df.get("tps_ci95"), visible=True),
                        hovertemplate=f"{label} %{{x}} threads: %{{y:.4g}} TPS<extra></extra>", secondary_y=False)
        fig.add_scatter(x=df["threads"], y=df["latency_p95"], name=f"{label} p95", mode="lines+markers",
                        line=dict(color=color, dash="dot"), secondary_y=True,
                        hovertemplate=f"{label} %{{x}} threads: p95 %{{y:.3g}} ms<extra></extra>")
        if knees is not None:
            k = knees[(knees["engine"] == engine) & knees["knee_threads"].notna()]  # no star where undetermined
            if not k.empty:
                fig.add_scatter(x=[int(k["knee_threads"].iloc[0])], y=[k["knee_p95_ms"].iloc[0]],
                                mode="markers", marker=dict(symbol="star", size=16, color=color,
                                                            line=dict(color="black", width=1)),
                                name=f"{label} useful capacity", secondary_y=True)
    ticks = sorted(set(int(t) for t in summary["threads"]))
    fig.update_layout(title=title, template="plotly_white", height=460, legend_title="",
                      meta={"benchlib_name": name}, margin=dict(l=60, r=60, t=60, b=50))
    fig.update_xaxes(title_text="threads (concurrent sessions, log scale)", type="log", tickvals=ticks,
                     ticktext=[str(t) for t in ticks])
    fig.update_yaxes(title_text="transactions per second", secondary_y=False, rangemode="tozero")
    fig.update_yaxes(title_text="p95 latency (ms)", secondary_y=True, rangemode="tozero")
    return fig


def normalised_curves(curves: pd.DataFrame, *, title: str, name: str, x_title: str = "threads (log scale)"):
    """Throughput relative to each system's own peak against concurrency: the shape travels
    between a cloud cluster and a laptop, the absolute numbers do not. `curves` has columns
    system, source, threads (or any concurrency measure `x_title` names), relative_tps."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for (system, source), df in curves.groupby(["system", "source"], sort=False):
        df = df.sort_values("threads")
        fig.add_scatter(x=df["threads"], y=df["relative_tps"], mode="lines+markers",
                        name=f"{engine_title(system)} ({source})", line=dict(
                            color=engine_color(system), dash="solid" if source == "this run" else "dash"))
    fig.update_layout(title=title, template="plotly_white", height=420, meta={"benchlib_name": name},
                      yaxis_title="throughput / own peak", xaxis_title=x_title,
                      margin=dict(l=60, r=20, t=60, b=50))
    fig.update_xaxes(type="log", dtick=0.30102999566)  # one tick per doubling
    return fig


def heatmaps(df: pd.DataFrame, *, x: str, y: str, value: str, facet: str, title: str, name: str, unit: str,
             x_title: str, y_title: str, log_color: bool = False, columns: int = 3,
             text_format: str | Callable[[float], str] = ".3g", x_order: Sequence | None = None,
             empty_note: str = "no values to show", color: str | None = None):
    """One heatmap per `facet` value (engines in catalog order, titled by engine), sharing one
    colour scale so the same colour is the same number in every panel; each cell shows its value.
    `log_color`: the colour follows log10 of the value (for figures that span decades). Axes are
    categories in sorted order (`x_order` to choose the x order). `text_format`: a format spec or a
    function that writes a cell's value. With no row, the figure says `empty_note` instead.
    `color`: a column of signed scores to colour by instead of the value (> 0 better: green, < 0
    worse: red, on one scale symmetric about 0); a cell whose score is NaN is grey, its value still
    written in it."""
    import math

    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    keys = engine_order(df[facet]) if facet == "engine" else list(dict.fromkeys(df[facet]))
    cols = max(1, min(columns, len(keys)))
    nrows = max(1, math.ceil(len(keys) / cols))
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=[engine_title(k) for k in keys],
                        horizontal_spacing=0.08, vertical_spacing=0.12)
    xs = [str(v) for v in (x_order or dict.fromkeys(df.sort_values(x)[x]))]
    ys = [str(v) for v in dict.fromkeys(df.sort_values(y)[y])]
    finite = df[value][(df[value] > 0) if log_color else df[value].notna()]
    scale = (lambda v: math.log10(v) if v == v and v > 0 else float("nan")) if log_color else (lambda v: v)
    zmin, zmax = (scale(finite.min()), scale(finite.max())) if not finite.empty else (0.0, 1.0)
    if color is not None:
        reach = float(df[color].abs().max()) if df[color].notna().any() else 1.0
        zmin, zmax, scale = -(reach or 1.0), reach or 1.0, (lambda v: v)
    for i, key in enumerate(keys):
        sub = df[df[facet] == key].assign(_x=lambda d: d[x].astype(str), _y=lambda d: d[y].astype(str))
        grid = sub.pivot_table(index="_y", columns="_x", values=value, aggfunc="first").reindex(index=ys, columns=xs)
        shade = grid if color is None else sub.pivot_table(index="_y", columns="_x", values=color, aggfunc="first",
                                                           dropna=False).reindex(index=ys, columns=xs)
        # None, not NaN, for an empty cell: plotly writes it as null, where a NaN warns in the report
        # ("Out of range float values are not JSON compliant") on its way to the same null.
        z = [[None if (s := scale(v)) != s else s for v in row] for row in shade.to_numpy()]
        write = text_format if callable(text_format) else (lambda v: format(v, text_format))
        text = [[("" if v != v else write(v)) for v in row] for row in grid.to_numpy()]
        fig.add_trace(go.Heatmap(
            x=xs, y=ys, z=z, text=text, texttemplate="%{text}", zmin=zmin, zmax=zmax, coloraxis="coloraxis",
            # With `color`, the unit names the colour's score, not the value written in the cell.
            hovertemplate=f"{engine_title(key)}<br>{x_title} %{{x}}<br>{y_title} %{{y}}<br>%{{text}}"
                          f"{'' if color is not None else ' ' + unit}<extra></extra>"), row=i // cols + 1, col=i % cols + 1)
    if not keys:
        fig.add_annotation(text=empty_note, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    # Axis titles on the outer panels only: an x title above another panel sat on that panel's title.
    for i in range(max(len(keys), 1)):
        place = dict(row=i // cols + 1, col=i % cols + 1)
        if i + cols >= len(keys):
            fig.update_xaxes(title_text=x_title, **place)
        if i % cols == 0:
            fig.update_yaxes(title_text=y_title, **place)
    if color is not None:
        # Cells with no score are left empty by plotly: the grey plot background shows through.
        fig.update_xaxes(showgrid=False)
        fig.update_yaxes(showgrid=False)
    fig.update_layout(title=title, template="plotly_white", height=300 * nrows + 120,
                      # The shared axis's own bounds: plotly ignores each trace's zmin / zmax once traces share a
                      # coloraxis, and would stretch the scale over the data, drawing a better cell red.
                      coloraxis=dict(cmin=zmin, cmax=zmax, colorscale="Viridis" if color is None else "RdYlGn", colorbar=dict(
                          title=f"log10 {unit}" if log_color and color is None else unit)),
                      meta={"benchlib_name": name}, margin=dict(l=70, r=20, t=90, b=50))
    if color is not None:
        fig.update_layout(plot_bgcolor="#d9d9d9")
    return fig


def _category_axis(df: pd.DataFrame, x: Sequence[str]):
    """One x category per row: a plain axis for one column, plotly's nested (multicategory) axis
    for two (outer group, inner label)."""
    return [df[c].astype(str).tolist() for c in x] if len(x) > 1 else df[x[0]].astype(str).tolist()


def magnitude_panels(totals: Sequence[float], spread: float = LOG_AXIS_SPREAD) -> list[int]:
    """A panel number per bar, so that within a panel the tallest bar is at most `spread` times
    the shortest positive one: bars of different magnitudes each on an axis that shows them, in
    the order of their size (panel 0 holds the tallest). Bars with no positive value go with the
    tallest."""
    values = [float(t) if t == t and t is not None else 0.0 for t in totals]
    order = sorted((i for i, v in enumerate(values) if v > 0), key=lambda i: -values[i])
    panel_of = [0] * len(values)
    panel, top = 0, None
    for i in order:
        if top is None:
            top = values[i]
        elif values[i] * spread < top:
            panel, top = panel + 1, values[i]
        panel_of[i] = panel
    return panel_of


def stacked_bars(df: pd.DataFrame, *, x: Sequence[str], segments: dict[str, tuple[str, str]], title: str,
                 unit: str, name: str, marker: tuple[str, str] | None = None):
    """Bars stacked from `segments` (column -> (legend label, colour)) per row, rows on x by the
    columns `x` (one, or two for nested categories); `marker` (column, label) draws a further
    value per row as a point, e.g. the wall time beside the CPU stacked under it. A log axis would
    misdraw the segments' shares, so when stacks differ beyond LOG_AXIS_SPREAD the small ones get
    panels of their own (magnitude_panels), each with its own linear axis."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    df = df.reset_index(drop=True)
    totals = df[list(segments)].apply(pd.to_numeric, errors="coerce").fillna(0).clip(lower=0).sum(axis=1)
    panels = magnitude_panels(totals.tolist())
    count = max(panels, default=0) + 1
    fig = make_subplots(rows=count, cols=1, vertical_spacing=0.12 if count > 1 else 0.0) if count > 1 else go.Figure()
    for panel in range(count):
        part = df[[p == panel for p in panels]]
        xs = _category_axis(part, x)
        cell = dict(row=panel + 1, col=1) if count > 1 else {}
        for column, (label, color) in segments.items():
            fig.add_bar(x=xs, y=part[column], name=label, marker_color=color, legendgroup=label,
                        showlegend=panel == 0, hovertemplate=f"{label}: %{{y:.4g}} {unit}<extra></extra>", **cell)
        if marker is not None:
            column, label = marker
            fig.add_scatter(x=xs, y=part[column], name=label, mode="markers", legendgroup=label,
                            showlegend=panel == 0, marker=dict(symbol="diamond", size=9, color="black"),
                            hovertemplate=f"{label}: %{{y:.4g}} {unit}<extra></extra>", **cell)
    fig.update_layout(title=title, barmode="stack", template="plotly_white", height=460 if count == 1 else 80 + 330 * count,
                      meta={"benchlib_name": name}, margin=dict(l=60, r=20, t=60, b=90), legend_title="")
    if count == 1:
        fig.update_yaxes(title_text=unit)
    else:
        for panel in range(count):
            fig.update_yaxes(title_text=unit if panel == 0 else f"{unit} (own scale)", row=panel + 1, col=1)
    return fig


def grouped_bars(df: pd.DataFrame, *, x: Sequence[str], group: str, value: str, title: str, unit: str, name: str,
                 colors: dict[str, str] | None = None, log_y: bool | None = None):
    """One bar per value of `group` side by side in each x category (`x`: one column, or two for
    nested categories), coloured by `colors` where given. `log_y`: None chooses from the data (see
    bar_spread), True or False forces."""
    import plotly.graph_objects as go

    fig = go.Figure()
    cats = df[list(x)].drop_duplicates()
    for key in dict.fromkeys(df[group]):
        sub = cats.merge(df[df[group] == key], on=list(x), how="left")
        fig.add_bar(x=_category_axis(sub, x), y=sub[value], name=str(key),
                    marker_color=(colors or {}).get(key),
                    hovertemplate=f"{key}: %{{y:.4g}} {unit}<extra></extra>")
    fig.update_layout(title=title, barmode="group", template="plotly_white", height=460,
                      legend_title=group, meta={"benchlib_name": name}, margin=dict(l=60, r=20, t=60, b=90))
    _value_axis(fig, unit, log_y, bar_spread(df, value, list(x)))
    return fig
