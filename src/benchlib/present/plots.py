"""Plotting helpers: one fixed colour per engine in every figure, and a plotly renderer that
works in JupyterLab (interactive mime bundle) and in the self-contained HTML reports (a div
that uses the plotly.js the report template embeds once)."""
from __future__ import annotations

import math

import re
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from ..engines import engine_color, engine_order, engine_title

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


def _value_axis(fig, unit: str, log_y: bool | None, spread: float, markers: bool = False) -> None:
    """The value axis: log when asked, or when the bars of one category spread beyond
    LOG_AXIS_SPREAD; the title says so (kept short: a long axis title is cut at the plot's height).
    `markers`: dots, not bars, so a wide spread is on a log axis from the start."""
    if markers and log_y is None and 1 < spread <= LOG_AXIS_SPREAD:
        log_y = True
    if log_y is None and spread > LOG_AXIS_SPREAD:
        fig.update_yaxes(title_text=f"{unit} (log scale, {spread:.0f}x spread)", type="log")
    elif log_y:
        fig.update_yaxes(title_text=f"{unit} (log scale)", type="log")
    else:
        fig.update_yaxes(title_text=unit)
        return
    _note_undrawable(fig, unit)
    # Labelled ticks 1, 2, 5 per decade as plain numbers (plotly's own crowd every digit of a short range),
    # over the bars and their upper whiskers: a lower whisker reaching towards 0 runs off the axis's foot
    # instead of stretching it decades below every bar.
    bars = [y for t in fig.data if getattr(t, "y", None) is not None for y in t.y if isinstance(y, (int, float))]
    tops = [y + (e or 0) for t in fig.data if getattr(t, "y", None) is not None and t.error_y and t.error_y.array
            is not None for y, e in zip(t.y, t.error_y.array) if isinstance(y, (int, float)) and y > 0
            and isinstance(e, (int, float)) and e == e]
    positive = [v for v in bars + tops if v > 0]
    if positive:
        fig.update_yaxes(range=[math.log10(min(v for v in bars if v > 0) / 2) if any(v > 0 for v in bars)
                                else math.log10(min(positive) / 2), math.log10(max(positive) * 1.3)],
                         **_log_ticks(positive))


def _note_undrawable(fig, unit: str) -> None:
    """A log axis has no place for zero or a negative value (a cost net of the idle baseline can
    fall below it, within the baseline's noise): such bars would be silently missing, so they are
    left out of the drawing and named under the figure with their values."""
    missing = []
    for trace in fig.data:
        if trace.type not in ("bar", "scatter") or trace.y is None:
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
                  error_minus: str | None = None, markers: bool = False, labels: Mapping[str, str] | None = None):
    """Grouped bars: phases on x (in `phases` order, else as they appear), one bar per engine in
    its fixed colour. `log_y`: None chooses from the data (see bar_spread), True or False forces.
    `error`: the error bar's length above the bar, and below it too unless `error_minus` gives that
    (a ratio's CI on the log scale is not symmetric). `markers`: a dot per value instead of a bar,
    for values far apart: on a log axis a bar's height means nothing (its foot is arbitrary).
    `labels`: an engine's name in the legend where it is not its title (an engine with its driver)."""
    import plotly.graph_objects as go

    present = [p for p in (phases or dict.fromkeys(df["phase"])) if p in set(df["phase"])]
    spread = bar_spread(df[df["phase"].isin(present)], value, ["phase"])
    # On a log axis a bar's length means nothing: whatever asks for the log axis, dots are drawn
    # (hostile read 44, 01 more-engines #3).
    markers = markers or bool(log_y) or (log_y is None and spread > LOG_AXIS_SPREAD)
    fig = go.Figure()
    for engine in engine_order(df["engine"]):
        sub = df[df["engine"] == engine].set_index("phase").reindex(present)
        (fig.add_scatter if markers else fig.add_bar)(
            name=(labels or {}).get(engine, engine_title(engine)), x=present, y=sub[value], marker_color=engine_color(engine),
            error_y=dict(type="data", array=sub[error], visible=True, symmetric=error_minus is None,
                         arrayminus=sub[error_minus] if error_minus else None) if error else None,
            hovertemplate=f"{engine_title(engine)} %{{x}}: %{{y:.4g}} {unit}<extra></extra>",
            **({"mode": "markers", "marker_size": 11} if markers else {}))
    fig.update_layout(
        title=title, barmode="group", scattermode="group", xaxis_title="phase", template="plotly_white",
        legend_title="engine", meta={"benchlib_name": name or slug(title)}, height=420,
        margin=dict(l=60, r=20, t=60, b=50),
    )
    _value_axis(fig, unit, log_y, spread, markers=markers)
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


def throughput_latency(summary: pd.DataFrame, *, title: str, name: str, knees: pd.DataFrame | None = None,
                       goal_ms: float | None = None):
    """Seed 004's chart with throughput and p95 latency in panels of their own (one axis each, so
    a marker on one is read on its own scale): per test a column, TPS on top (per engine a solid
    line with its 95% CI, the useful-capacity knee starred where determined, steps left out of the
    knee walk hollow), p95 below on a log axis with the goal as a dashed line. Threads on a log
    axis: a doubling is the same width wherever it falls, so 8 -> 32 is not drawn like 32 -> 45."""
    from plotly.subplots import make_subplots

    tests = list(dict.fromkeys(summary["test"])) if "test" in summary else [None]
    fig = make_subplots(rows=2, cols=len(tests), shared_xaxes=True, vertical_spacing=0.08, horizontal_spacing=0.07,
                        column_titles=[t for t in tests] if tests != [None] else None, row_heights=[0.55, 0.45])
    shown: set[str] = set()
    clipped = hollow = starred = False
    for col, test in enumerate(tests, start=1):
        part = summary if test is None else summary[summary["test"] == test]
        for engine in engine_order(part["engine"]):
            df = part[part["engine"] == engine].sort_values("threads")
            color, label = engine_color(engine), engine_title(engine)
            k = pd.DataFrame() if knees is None else knees[(knees["engine"] == engine) & (
                knees["test"] == test if test is not None and "test" in knees else True)]
            slow = k["slow_start_threads"].iloc[0] if "slow_start_threads" in k and not k.empty else float("nan")
            symbols = [100 if slow == slow and t <= slow else 0 for t in df["threads"]]  # circle-open, circle
            first = engine not in shown
            shown.add(engine)
            ci = df["tps_ci95"] if "tps_ci95" in df else pd.Series(float("nan"), index=df.index)
            # TPS is never below 0: a whisker reaching past it (two repetitions' t-quantile) stops at 0.
            clipped |= bool((ci > df["tps"]).any())
            hollow |= any(symbols)
            fig.add_scatter(x=df["threads"], y=df["tps"], name=label, legendgroup=engine, showlegend=first,
                            mode="lines+markers", line=dict(color=color), marker=dict(symbol=symbols, size=8),
                            error_y=dict(type="data", array=ci, arrayminus=ci.clip(upper=df["tps"]), visible=True,
                                         width=3),
                            hovertemplate=f"{label} %{{x}} threads: %{{y:.4g}} TPS<extra></extra>", row=1, col=col)
            fig.add_scatter(x=df["threads"], y=df["latency_p95"], name=f"{label} p95", legendgroup=engine,
                            showlegend=False, mode="lines+markers", line=dict(color=color, dash="dot"),
                            hovertemplate=f"{label} %{{x}} threads: p95 %{{y:.3g}} ms<extra></extra>", row=2, col=col)
            known = k[k["knee_threads"].notna()] if "knee_threads" in k else k
            starred |= not known.empty
            if not known.empty:  # no star where the knee is not determined
                fig.add_scatter(x=[int(known["knee_threads"].iloc[0])], y=[known["knee_tps"].iloc[0]],
                                mode="markers", marker=dict(symbol="star", size=16, color=color,
                                                            line=dict(color="black", width=1)),
                                name=f"{label} useful capacity", legendgroup=engine, showlegend=False,
                                hovertemplate=f"{label} useful capacity: %{{x}} threads, %{{y:.4g}} TPS<extra></extra>",
                                row=1, col=col)
        if goal_ms is not None:  # a trace, not a shape: a shape's y on a log axis is read as its log
            fig.add_scatter(x=[part["threads"].min(), part["threads"].max()], y=[goal_ms, goal_ms], mode="lines",
                            line=dict(color="#888", dash="dash", width=1), name=f"p95 goal {goal_ms:g} ms",
                            legendgroup="goal", showlegend=col == 1, hoverinfo="skip", row=2, col=col)
    ticks = sorted(set(int(t) for t in summary["threads"]))
    # The marks' legend names only the marks drawn.
    marks = ["bars: 95% CI" + (", cut at 0" if clipped else "")] + ["★ useful capacity"] * starred \
        + ["○ left out of the knee"] * hollow
    fig.update_layout(title=f"{title}<br><sup>{'; '.join(marks)}</sup>", template="plotly_white", height=430,
                      legend_title="",
                      meta={"benchlib_name": name}, margin=dict(l=60, r=20, t=85, b=45))
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])
    fig.update_xaxes(title_text="threads (log scale)", row=2)
    fig.update_yaxes(rangemode="nonnegative", row=1)  # a wide CI's whisker does not pull the axis below 0
    fig.update_yaxes(title_text="TPS", row=1, col=1)
    fig.update_yaxes(type="log", row=2, **_log_ticks([*summary["latency_p95"], *([goal_ms] if goal_ms else [])]))
    fig.update_yaxes(title_text="p95 ms (log)", row=2, col=1)
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


UNSCORED = "#d9d9d9"  # a heatmap cell with a value but no score (neither better nor worse)


def heatmaps(df: pd.DataFrame, *, x: str, y: str, value: str, facet: str, title: str, name: str, unit: str,
             x_title: str, y_title: str, log_color: bool = False, columns: int = 3,
             text_format: str | Callable[[float], str] = ".3g", x_order: Sequence | None = None,
             empty_note: str = "no values to show", color: str | None = None, top_down: bool = False,
             ratio: bool = False):
    """One heatmap per `facet` value (engines in catalog order, titled by engine), sharing one
    colour scale so the same colour is the same number in every panel; each cell shows its value.
    `log_color`: the colour follows log10 of the value (for figures that span decades). Axes are
    categories in sorted order (`x_order` to choose the x order). `text_format`: a format spec or a
    function that writes a cell's value. With no row, the figure says `empty_note` instead.
    `color`: a column of signed scores to colour by instead of the value (> 0 better: green, < 0
    worse: red, on one scale symmetric about 0); a cell whose score is NaN is grey, its value still
    written in it. `top_down`: the first y category at the top (steps in the order they ran).
    `ratio`: the values are ratios: log colour on a diverging scale centred at 1 (white), its
    colour bar labelled in ratios; any other value gets a sequential scale."""
    import math

    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    keys = engine_order(df[facet]) if facet == "engine" else list(dict.fromkeys(df[facet]))
    cols = max(1, min(columns, len(keys)))
    nrows = max(1, math.ceil(len(keys) / cols))
    # Every panel has the same rows (`ys`): one shared y axis per row of panels, labelled once at its
    # left, so a panel's long labels cannot spill into the panel beside it (run 20261127T220533Z).
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=[engine_title(k) for k in keys], shared_yaxes=True,
                        horizontal_spacing=0.04, vertical_spacing=0.12)
    xs = [str(v) for v in (x_order or dict.fromkeys(df.sort_values(x)[x]))]
    ys = [str(v) for v in dict.fromkeys(df.sort_values(y)[y])]
    log_color = log_color or ratio
    finite = df[value][(df[value] > 0) if log_color else df[value].notna()]
    scale = (lambda v: math.log10(v) if v == v and v > 0 else float("nan")) if log_color else (lambda v: v)
    zmin, zmax = (scale(finite.min()), scale(finite.max())) if not finite.empty else (0.0, 1.0)
    if ratio:  # symmetric about log10(1) = 0, so 1 is the scale's middle
        reach = max(abs(zmin), abs(zmax)) or 1.0
        zmin, zmax = -reach, reach
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
        # With `color`, the unit names the colour's score, not the value written in the cell.
        hover = (f"{engine_title(key)}<br>{x_title} %{{x}}<br>{y_title} %{{y}}<br>%{{text}}"
                 f"{'' if color is not None else ' ' + unit}<extra></extra>")
        at = dict(row=i // cols + 1, col=i % cols + 1)
        if color is not None:
            # A value with no score is drawn grey by a trace of its own, with its value written in it:
            # plotly draws nothing of a heatmap whose z is all null, not even its text (02's cached panel
            # was an empty box when no cell of it was better or worse).
            unscored = [[0 if t and zz is None else None for t, zz in zip(trow, zrow)] for trow, zrow in zip(text, z)]
            fig.add_trace(go.Heatmap(x=xs, y=ys, z=unscored, text=[[t if u == 0 else "" for t, u in zip(trow, urow)]
                                                                   for trow, urow in zip(text, unscored)],
                                     texttemplate="%{text}", colorscale=[[0, UNSCORED], [1, UNSCORED]],
                                     showscale=False, hovertemplate=hover), **at)
            text = [[t if zz is not None else "" for t, zz in zip(trow, zrow)] for trow, zrow in zip(text, z)]
        fig.add_trace(go.Heatmap(x=xs, y=ys, z=z, text=text, texttemplate="%{text}", zmin=zmin, zmax=zmax,
                                 coloraxis="coloraxis", hovertemplate=hover), **at)
    if not keys:
        fig.add_annotation(text=empty_note, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=xs)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=ys, autorange="reversed" if top_down else True)
    # Axis titles on the outer panels only: an x title above another panel sat on that panel's title.
    for i in range(max(len(keys), 1)):
        place = dict(row=i // cols + 1, col=i % cols + 1)
        if i + cols >= len(keys):
            fig.update_xaxes(title_text=x_title, **place)
        if i % cols == 0:
            fig.update_yaxes(title_text=y_title, **place)
    if color is not None:
        fig.update_xaxes(showgrid=False)
        fig.update_yaxes(showgrid=False)
    fig.update_layout(title=title, template="plotly_white", height=300 * nrows + 120,
                      # The shared axis's own bounds: plotly ignores each trace's zmin / zmax once traces share a
                      # coloraxis, and would stretch the scale over the data, drawing a better cell red.
                      coloraxis=dict(cmin=zmin, cmax=zmax, colorscale="RdYlGn" if color is not None else
                                     "RdBu_r" if ratio else "Viridis", colorbar=dict(
                          title=f"log10 {unit}" if log_color and color is None and not ratio else unit,
                          **_ratio_ticks(zmax) if ratio else {})),
                      meta={"benchlib_name": name}, margin=dict(l=70, r=20, t=90, b=50))
    if color is not None:
        fig.update_layout(plot_bgcolor=UNSCORED)
    return fig


def _log_ticks(values) -> dict:
    """Ticks of a log axis written as plain numbers: 1, 2, 5 per decade over the values' range, or
    decades alone where that would crowd the axis."""
    import math

    finite = [float(v) for v in values if v == v and v is not None and float(v) > 0]
    if not finite:
        return {}
    low, high = math.floor(math.log10(min(finite))), math.ceil(math.log10(max(finite)))
    for mantissas in ((1, 2, 5), (1, 3), (1,)):  # the finest that labels the range without crowding it
        steps = [float(f"{m * 10.0 ** e:.12g}") for e in range(low, high + 1) for m in mantissas]
        steps = [t for t in steps if min(finite) / 2 <= t <= max(finite) * 2]
        if len(steps) <= 7:
            break
    return dict(tickvals=steps, ticktext=[f"{t:g}" for t in steps])


def _ratio_ticks(reach: float) -> dict:
    """Colour-bar ticks of a log10 ratio scale, written as ratios (0.5x, 1x, 2x)."""
    import math

    steps = [v for v in (0.01, 0.1, 0.2, 0.5, 1, 2, 5, 10, 100) if abs(math.log10(v)) <= reach + 1e-9]
    return dict(tickvals=[math.log10(v) for v in steps], ticktext=[f"{v:g}x" for v in steps])


BAR_SPAN = 0.8  # of a category's width, shared by its bars


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


def joined_panels(panels: Sequence[int], groups: Sequence[Any]) -> list[int]:
    """`panels` with the bars of one group (a value other than None) in one panel, its tallest
    bar's: a compared pair is read on one scale. Panels left empty are closed up."""
    joined = list(panels)
    for group in {g for g in groups if g is not None}:
        members = [i for i, g in enumerate(groups) if g == group]
        for i in members:
            joined[i] = min(panels[m] for m in members)
    renumber = {p: n for n, p in enumerate(sorted(set(joined)))}
    return [renumber[p] for p in joined]


def stacked_bars(df: pd.DataFrame, *, x: Sequence[str], segments: dict[str, tuple[str, str]], title: str,
                 unit: str, name: str, marker: tuple[str, str] | None = None, together: str | None = None):
    """Bars stacked from `segments` (column -> (legend label, colour)) per row, rows on x by the
    columns `x` (one, or two for nested categories); `marker` (column, label) draws a further
    value per row as a point, e.g. the wall time beside the CPU stacked under it. A log axis would
    misdraw the segments' shares, so when stacks differ beyond LOG_AXIS_SPREAD the small ones get
    panels of their own (magnitude_panels), each with its own linear axis; rows with the same value
    in the column `together` (a compared pair) share one (joined_panels)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    df = df.reset_index(drop=True)
    totals = df[list(segments)].apply(pd.to_numeric, errors="coerce").fillna(0).clip(lower=0).sum(axis=1)
    panels = magnitude_panels(totals.tolist())
    if together is not None:
        panels = joined_panels(panels, [g if g == g else None for g in df[together]])
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


def stacked_panels(df: pd.DataFrame, *, panel: str, category: str, segments: dict[str, tuple[str, str]], title: str,
                   unit: str, name: str, row: str | None = None, marker: tuple[str, str] | None = None,
                   category_order: Sequence[str] | None = None, panel_titles: dict[str, str] | None = None,
                   shared_scale: bool = False):
    """Small multiples of horizontal stacked bars: one panel per value of `panel` (columns, each
    with its own linear value axis, so a small engine's bars are not slivers beside a large one's;
    `shared_scale`: one value axis per row of panels, where panels are read against each other)
    and of `row` (rows), `category` on the shared vertical axis. Category labels run horizontally,
    once per row of panels, so no label is rotated, cut or drawn over by another panel; a panel's
    title names its group whole. `segments`: column -> (legend label, colour); `marker` (column,
    label): a further value per bar as a diamond (the wall time beside the CPU stacked under it)."""
    from plotly.subplots import make_subplots

    panels = list(dict.fromkeys(df[panel]))
    rows = list(dict.fromkeys(df[row])) if row else [None]
    order = [c for c in (category_order or dict.fromkeys(df[category])) if c in set(df[category])]
    titles = [(panel_titles or {}).get(p, str(p)) for p in panels]
    height_per_row = 40 + 22 * len(order)
    fig = make_subplots(rows=len(rows), cols=len(panels), shared_yaxes=True, horizontal_spacing=0.015,
                        vertical_spacing=min(0.3, 60 / (height_per_row * len(rows) + 60)), column_titles=titles,
                        row_titles=[str(r) for r in rows] if row else None)
    for i, r in enumerate(rows, start=1):
        for j, p in enumerate(panels, start=1):
            part = df[(df[panel] == p) & ((df[row] == r) if row else True)].set_index(category).reindex(order)
            first = i == 1 and j == 1
            for column, (label, color) in segments.items():
                fig.add_bar(y=order, x=part[column], orientation="h", name=label, marker_color=color, legendgroup=label,
                            showlegend=first, meta={"panel": p, "row": r},
                            hovertemplate=f"{titles[j - 1]} %{{y}}: {label} %{{x:.4g}} {unit}<extra></extra>",
                            row=i, col=j)
            if marker is not None:
                column, label = marker
                fig.add_scatter(y=order, x=part[column], mode="markers", name=label, legendgroup=label,
                                showlegend=first, meta={"panel": p, "row": r},
                                marker=dict(symbol="diamond", size=8, color="black"),
                                hovertemplate=f"{titles[j - 1]} %{{y}}: {label} %{{x:.4g}} {unit}<extra></extra>",
                                row=i, col=j)
    fig.update_layout(title=title, barmode="stack", template="plotly_white", meta={"benchlib_name": name},
                      height=150 + height_per_row * len(rows), margin=dict(l=90, r=30, t=90, b=85),
                      legend=dict(orientation="h", yref="container", y=0.01, yanchor="bottom"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(nticks=3, tickfont=dict(size=10), rangemode="tozero")
    fig.update_annotations(font_size=11)
    if shared_scale:
        for i in range(len(rows)):
            first = "x" if i == 0 else f"x{i * len(panels) + 1}"
            for j in range(2, len(panels) + 1):
                fig.update_xaxes(matches=first, row=i + 1, col=j)
    fig.add_annotation(text=unit + (" (one scale per row)" if shared_scale and len(rows) > 1 else "" if shared_scale
                                    else " (each panel its own scale)"),
                       showarrow=False, xref="paper", yref="paper", x=0.5, y=0, yshift=-28, font=dict(size=11))
    return fig


def grouped_bars(df: pd.DataFrame, *, x: Sequence[str], group: str, value: str, title: str, unit: str, name: str,
                 colors: dict[str, str] | None = None, log_y: bool | None = None):
    """One bar per value of `group` side by side in each x category (`x`: one column, or two for
    nested categories), coloured by `colors` where given: a category holds only the groups it has
    a value for, side by side across its width (no empty slot for a group it lacks, as plotly's
    grouped mode would leave). `log_y`: None chooses from the data (see bar_spread), True or False
    forces."""
    import plotly.graph_objects as go

    fig = go.Figure()
    cats = df[list(x)].drop_duplicates()
    groups = list(dict.fromkeys(df[group]))
    has = df[df[value].notna()]
    # Per category, the groups with a value, in the legend's order: each bar's slot among them.
    present = {(k if isinstance(k, tuple) else (k,)): [g for g in groups if g in set(v)]
               for k, v in has.groupby(list(x), sort=False)[group]}
    for key in groups:
        sub = cats.merge(df[df[group] == key], on=list(x), how="left")
        slots = [present.get(tuple(row), [key]) for row in sub[list(x)].itertuples(index=False)]
        width = [BAR_SPAN / len(s) for s in slots]
        offset = [-BAR_SPAN / 2 + (s.index(key) if key in s else 0) * w for s, w in zip(slots, width)]
        fig.add_bar(x=_category_axis(sub, x), y=sub[value], name=str(key), width=width, offset=offset,
                    marker_color=(colors or {}).get(key),
                    hovertemplate=f"{key}: %{{y:.4g}} {unit}<extra></extra>")
    fig.update_layout(title=title, barmode="overlay", template="plotly_white", height=460,
                      legend_title=group, meta={"benchlib_name": name}, margin=dict(l=60, r=20, t=60, b=90))
    _value_axis(fig, unit, log_y, bar_spread(df, value, list(x)))
    return fig


# Steps (phases, tests) told apart by colour and symbol where engines are the rows.
STEP_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


_RATIO_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20, 50, 100)
# A verdict as a marker: filled where the run tells the sides apart (or shows them equal), open
# where it cannot, a cross where the two sides did different work.
_MARKS = {"decided": ("circle", "● decided"), "undecided": ("circle-open", "○ not told apart"),
          "untested": ("square-open", "□ measured once: no test"),
          "not_comparable": ("x-thin-open", "× not comparable"),
          "false_positive": ("circle-open-dot", "⊙ flagged on a rerun: a false positive")}


def _mark(verdict: str) -> str:
    from ..data.findings import Verdict

    v = Verdict(verdict)
    # Measured once is not "not told apart": no test ran (hostile read 44, 08 #2).
    if v in (Verdict.NOT_COMPARABLE, Verdict.FALSE_POSITIVE, Verdict.UNTESTED):
        return v.value
    return "decided" if v.decided else "undecided"


def _positive(x) -> bool:
    try:
        return x is not None and float(x) > 0 and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def ratio_chart(found: pd.DataFrame, *, y: Callable[[dict], str], series: Callable[[dict], str], title: str,
                name: str, axis_title: str, colors: dict[str, str] | None = None, seed_label: str | None = None):
    """THE chart of findings rows: each row's ratio to its base as a dot on one log axis with its
    95% CI, one line of the chart per `y(row)` (in the rows' order, first at the top), one series
    per `series(row)` side by side (`colors` by series, else a palette), a line at 1 (the base).
    The marker is the verdict (filled: decided, open: not told apart, open square: measured once,
    ×: not comparable; the
    subtitle names only the marks drawn); the seed's ratio a grey diamond where a row has one.
    Rows without a positive ratio are left out."""
    import plotly.graph_objects as go

    from ..data.findings import VERDICT_WORDS, Verdict, fmt_ratio

    rows = [r for r in found.to_dict("records") if _positive(r.get("ratio"))]
    order = list(dict.fromkeys(y(r) for r in rows))
    labels = list(dict.fromkeys(series(r) for r in rows))
    fig, keys = go.Figure(), []
    for k, label in enumerate(labels):
        mine = [r for r in rows if series(r) == label]
        color = (colors or {}).get(label) or STEP_COLORS[k % len(STEP_COLORS)]
        # The legend would copy the first point's verdict mark (an open "not told apart" circle for a
        # whole series): it shows a filled marker from a trace of its own, in the same lane.
        fig.add_scatter(
            name=str(label), legendgroup=str(label), offsetgroup=str(label), showlegend=False,
            x=[r["ratio"] for r in mine], y=[y(r) for r in mine], mode="markers", orientation="h",
            marker=dict(color=color, size=10, symbol=[_MARKS[_mark(r["verdict"])][0] for r in mine],
                        line=dict(width=2, color=color)),
            error_x=dict(type="data", symmetric=False, color=color, thickness=1.5,
                         visible=any(_positive(r.get("ratio_low")) for r in mine),
                         array=[r["ratio_high"] - r["ratio"] if _positive(r.get("ratio_high")) else 0 for r in mine],
                         arrayminus=[r["ratio"] - r["ratio_low"] if _positive(r.get("ratio_low")) else 0
                                     for r in mine]),
            customdata=[[fmt_ratio(r["ratio"], r.get("ratio_low"), r.get("ratio_high")),
                         VERDICT_WORDS[Verdict(r["verdict"])]] for r in mine],
            hovertemplate=f"{label}, %{{y}}: %{{customdata[0]}} (%{{customdata[1]}})<extra></extra>")
        keys.append(go.Scatter(name=str(label), legendgroup=str(label), offsetgroup=str(label), x=[None], y=[None],
                               mode="markers", marker=dict(color=color, size=10, symbol="circle"), hoverinfo="skip"))
    fig.add_traces(keys)
    seeded = [r for r in rows if _positive(r.get("seed_ratio"))]
    if seeded and seed_label:
        fig.add_scatter(name=seed_label, offsetgroup=seed_label, x=[r["seed_ratio"] for r in seeded],
                        y=[y(r) for r in seeded],
                        mode="markers", marker=dict(color="#9E9E9E", size=10, symbol="diamond"),
                        hovertemplate=f"{seed_label}, %{{y}}: %{{x:.3g}}x<extra></extra>")
    ends = [v for r in rows for v in (r["ratio"], r.get("ratio_low"), r.get("ratio_high"), r.get("seed_ratio"))
            if _positive(v)] + [1.0]
    ticks = [t for t in _RATIO_TICKS if min(ends) / 1.5 <= t <= max(ends) * 1.5]
    if len(ticks) > 9:  # a wide span: decades and the halves and doubles of 1, so labels never crowd
        ticks = [t for t in ticks if t in (0.01, 0.1, 0.5, 1, 2, 10, 100)]
    fig.add_vline(x=1, line=dict(color="#555", width=1, dash="dot"))
    fig.update_xaxes(type="log", title_text=f"{axis_title} (log scale)", tickvals=ticks,
                     ticktext=[f"{t:g}x" for t in ticks],
                     range=[math.log10(min(ends)) - 0.1, math.log10(max(ends)) + 0.1])
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=order, autorange="reversed", title_text="")
    drawn = [text for key, (_, text) in _MARKS.items() if any(_mark(r["verdict"]) == key for r in rows)]
    drawn += ["bars: 95% CI"] if any(_positive(r.get("ratio_low")) for r in rows) else ["one value each side: no CI"]
    lanes = len(order) * max(1, min(len(labels), 3))
    fig.update_layout(title=f"{title}<br><sup>{'; '.join(drawn)}</sup>", template="plotly_white",
                      scattermode="group", scattergap=0.35, height=max(260, 140 + 16 * lanes), showlegend=True,
                      legend=dict(orientation="h", y=1.0, yanchor="bottom", x=1, xanchor="right"),
                      meta={"benchlib_name": name}, margin=dict(l=10, r=20, t=90, b=50))
    return fig


# One colour per subsystem (instruction_subsystems.SUBSYSTEMS), the same in every figure: the
# storage layers in blues and greens, the SQL layer in oranges, the process's plumbing in greys;
# the instructions no symbol names, and a bar left unsplit, in hatched greys of their own.
SUBSYSTEM_COLORS = {
    "WAL / redo log": "#1F77B4", "B-tree / index": "#2CA02C", "table storage": "#98DF8A",
    "buffer pool": "#17BECF", "locks / latches": "#D62728", "transactions / MVCC": "#9467BD",
    "LSM memtable / compaction": "#AEC7E8", "executor": "#FF7F0E", "parser / planner": "#FFBB78",
    "network / protocol": "#8C564B", "memory allocation": "#E377C2", "crypto / random": "#BCBD22",
    "Python interpreter / driver": "#F7B6D2", "libc": "#7F7F7F", "other": "#C7C7C7",
}
NO_SYMBOL, NOT_SPLIT = "no symbol", "named, not split"
# Above this share of a bar in functions no symbol names, its named part is not split either: the
# unnamed functions' own subsystems are unknown, so the named part's split would misdraw the whole
# (hostile read 46a, 01 instructions #2: MariaDB's stripped server showed 0 B-tree instructions).
UNSPLIT_SHARE = 0.20


def symbol_shares(df: pd.DataFrame, windows: Sequence[str] = ("phase",)) -> pd.DataFrame:
    """Per engine and phase of results.instruction_profile rows (kind 'subsystem'): the mean over
    repetitions of its instructions (`total`) and of those in functions no symbol names
    (`no_symbol`: the `by_caller` part, placed by their callers when stored), their `share`, and
    `split`: whether the named part is drawn by subsystem (share at most UNSPLIT_SHARE)."""
    rows = df[(df["kind"] == "subsystem") & df["window"].isin(list(windows))]
    rows = rows.assign(by_caller_instructions=rows["by_caller_instructions"].fillna(0))
    per = (rows.groupby(["engine", "phase", "run_id", "instance_id", "repetition"], dropna=False)
           [["self_instructions", "by_caller_instructions"]].sum().reset_index()
           .groupby(["engine", "phase"])[["self_instructions", "by_caller_instructions"]].mean().reset_index())
    out = per.rename(columns={"self_instructions": "total", "by_caller_instructions": "no_symbol"})
    out["share"] = out["no_symbol"] / out["total"].where(out["total"] > 0)
    out["split"] = ~(out["share"] > UNSPLIT_SHARE)
    return out


def unsplit_lines(shares: pd.DataFrame, phases: Sequence[str] | None = None) -> list[str]:
    """One line per engine whose bars symbol_shares left unsplit, naming its phases (in `phases`'
    order where given) and their share (a range where several are); none where every bar is split."""
    order = {p: i for i, p in enumerate(phases or ())}
    shares = shares.sort_values("phase", key=lambda s: s.map(order).fillna(len(order)), kind="stable")
    parts = []
    for engine in engine_order(shares.loc[~shares["split"], "engine"]):
        mine = shares[(shares["engine"] == engine) & ~shares["split"]]
        low, high = mine["share"].min(), mine["share"].max()
        span = f"{low:.0%}" if round(low, 2) == round(high, 2) else f"{low:.0%}–{high:.0%}"
        parts.append(f"{engine_title(engine)} ({', '.join(mine['phase'])}): {span} of its instructions have no "
                     f"symbol; not split")
    return parts


def subsystem_bars(df: pd.DataFrame, *, title: str, name: str, phases: Sequence[str] | None = None,
                   windows: Sequence[str] = ("phase",), share: bool = False):
    """Instructions by subsystem per phase and engine: one panel per phase (its own linear axis:
    phases differ by orders of magnitude, and a log axis would misdraw stacked segments), in it one
    horizontal bar per engine stacked from its subsystems, engines side by side in catalog order.
    `df`: results.instruction_profile(run_id) rows (kind 'subsystem'); each bar is the mean over
    repetitions of the sum over `windows`. `share`: each bar as shares of its engine's total.
    Functions no symbol names are their own segment ('no symbol'), not their callers' subsystem; a
    bar with more than UNSPLIT_SHARE of them is drawn as 'no symbol' and 'named, not split', and a
    line under the chart names it (symbol_shares, unsplit_lines)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from ..counters.instruction_subsystems import SUBSYSTEMS

    rows = df[(df["kind"] == "subsystem") & df["window"].isin(list(windows))] if not df.empty else df
    if rows.empty:
        fig = go.Figure()
        fig.add_annotation(text="no instruction profile in this run (nothing was counted under valgrind)",
                           showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
        fig.update_layout(title=title, template="plotly_white", height=200, meta={"benchlib_name": name})
        return fig
    rows = rows.assign(by_caller_instructions=rows["by_caller_instructions"].fillna(0))
    per_window = (rows.groupby(["engine", "phase", "run_id", "instance_id", "repetition", "subsystem"], dropna=False)
                  [["self_instructions", "by_caller_instructions"]].sum().reset_index())
    means = (per_window.groupby(["engine", "phase", "subsystem"])[["self_instructions", "by_caller_instructions"]]
             .mean().reset_index())
    shares = symbol_shares(rows, windows)
    # Each subsystem keeps only its named functions; the unnamed ones are one segment per bar, and
    # an unsplit bar's named part is one segment too.
    means["self_instructions"] -= means["by_caller_instructions"]
    keyed = shares.set_index(["engine", "phase"])
    split = [bool(keyed.at[k, "split"]) for k in zip(means["engine"], means["phase"])]
    whole = means[[not s for s in split]].groupby(["engine", "phase"])["self_instructions"].sum().reset_index()
    means = pd.concat([means[split][["engine", "phase", "subsystem", "self_instructions"]],
                       whole.assign(subsystem=NOT_SPLIT),
                       shares.rename(columns={"no_symbol": "self_instructions"})
                       [["engine", "phase", "self_instructions"]].assign(subsystem=NO_SYMBOL)], ignore_index=True)
    totals = means.groupby(["engine", "phase"])["self_instructions"].transform("sum")
    means["share"] = means["self_instructions"] / totals
    value = "share" if share else "self_instructions"
    present = [p for p in (phases or dict.fromkeys(rows["phase"])) if p in set(means["phase"])]
    engines = engine_order(means["engine"])
    titles = [engine_title(e) for e in engines]
    named = [*SUBSYSTEMS, *sorted(set(means["subsystem"]) - set(SUBSYSTEMS) - {NO_SYMBOL, NOT_SPLIT})]
    used = [s for s in [*named, NOT_SPLIT, NO_SYMBOL]
            if means.loc[means["subsystem"] == s, "self_instructions"].sum() > 0]
    # Pixel sizes first (a bar per engine, a gap for each panel's title and ticks), then plotly's
    # fractions from them, so the layout holds for one phase or eight, one engine or six.
    per_panel, gap = 30 + 34 * len(engines), 60
    plot_height = per_panel * len(present) + gap * (len(present) - 1)
    legend_rows = -(-len(used) // 5)
    fig = make_subplots(rows=len(present), cols=1, subplot_titles=present,
                        vertical_spacing=gap / plot_height if len(present) > 1 else 0.0, shared_xaxes=share)
    patterns = {NO_SYMBOL: dict(shape="/", fgcolor="#555"), NOT_SPLIT: dict(shape=".", fgcolor="#777")}
    for i, phase in enumerate(present, start=1):
        part = means[means["phase"] == phase]
        for subsystem in used:
            sub = part[part["subsystem"] == subsystem].set_index("engine").reindex(engines)
            fig.add_bar(y=titles, x=sub[value], orientation="h", name=subsystem, legendgroup=subsystem,
                        marker=dict(color=SUBSYSTEM_COLORS.get(subsystem, "#E0E0E0"),
                                    pattern=patterns.get(subsystem, {})), showlegend=i == 1,
                        customdata=list(zip(sub["self_instructions"], sub["share"])),
                        hovertemplate=f"{phase} · %{{y}} · {subsystem}: %{{customdata[0]:,.0f}} instructions "
                                      f"(%{{customdata[1]:.1%}})<extra></extra>", row=i, col=1)
        fig.update_yaxes(autorange="reversed", row=i, col=1)
        fig.update_xaxes(tickformat=".0%" if share else "~s", row=i, col=1)
    fig.update_xaxes(title_text="share of the engine's instructions in the phase" if share else
                     "instructions (each phase on its own scale)", row=len(present), col=1)
    lines = unsplit_lines(shares[shares["phase"].isin(present)], present)
    top, bottom = 100, 70 + 24 * legend_rows + 10 + 20 * len(lines)
    if lines:
        fig.add_annotation(text="<br>".join(lines), align="left", showarrow=False, xref="paper", yref="paper", x=0, xanchor="left",
                           y=-(70 + 24 * legend_rows) / plot_height, yanchor="top", font=dict(size=13))
    caption = ("each bar: one engine's instructions in the phase, stacked by the subsystem its functions' names "
               f"belong to; {NO_SYMBOL}: functions the binary does not name")
    fig.update_layout(title=f"{title}<br><sup>{caption}</sup>", barmode="stack", template="plotly_white",
                      meta={"benchlib_name": name}, height=top + plot_height + bottom, legend_title="",
                      legend=dict(orientation="h", yanchor="top", y=-55 / plot_height, x=0, xanchor="left",
                                  entrywidth=0.2, entrywidthmode="fraction", font=dict(size=13), traceorder="normal"),
                      margin=dict(l=150, r=30, t=top, b=bottom))
    return fig
