"""Plotting helpers: one fixed colour per engine in every figure, and a plotly renderer that
works in JupyterLab (interactive mime bundle) and in the self-contained HTML reports (a div
that uses the plotly.js the report template embeds once)."""
from __future__ import annotations

import re
from typing import Sequence

import pandas as pd

from .engines import ENGINES

# Engines the reference articles measured that have no module (yet): the engines' own
# declarations come last, so a module always wins over this list.
_REFERENCE_ENGINES = {
    "oracle": ("Oracle", "#C74634"), "sqlserver": ("SQL Server", "#7A7574"), "mongodb": ("MongoDB", "#13AA52"),
    "tidb": ("TiDB", "#DC150B"), "yugabytedb": ("YugabyteDB", "#FF6E42"), "cockroachdb": ("CockroachDB", "#6933FF"),
}
ENGINE_COLORS = {**{k: c for k, (_, c) in _REFERENCE_ENGINES.items()}, **{k: e.color for k, e in ENGINES.items()}}
ENGINE_TITLES = {**{k: t for k, (t, _) in _REFERENCE_ENGINES.items()}, **{k: e.title for k, e in ENGINES.items()}}
# For keys nobody declared (an engine imported from another store, say): still drawn, in a
# colour fixed by the key so it is the same in every figure.
_FALLBACK_COLORS = ("#8C564B", "#E377C2", "#7F7F7F", "#17BECF", "#BCBD22", "#9467BD")


def engine_color(key: str) -> str:
    if key in ENGINE_COLORS:
        return ENGINE_COLORS[key]
    return _FALLBACK_COLORS[sum(key.encode()) % len(_FALLBACK_COLORS)]


def engine_order(keys) -> list[str]:
    """Engines in catalog order, then any others in the order given."""
    keys = list(dict.fromkeys(keys))
    return [e for e in ENGINE_COLORS if e in keys] + [e for e in keys if e not in ENGINE_COLORS]


def engine_title(key: str) -> str:
    return ENGINE_TITLES.get(key, key)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "figure"


def bars_by_phase(df: pd.DataFrame, value: str, *, title: str, unit: str, error: str | None = None,
                  name: str | None = None, phases: Sequence[str] | None = None, log_y: bool = False):
    """Grouped bars: phases on x (in `phases` order, else as they appear), one bar per engine in
    its fixed colour."""
    import plotly.graph_objects as go

    present = [p for p in (phases or dict.fromkeys(df["phase"])) if p in set(df["phase"])]
    fig = go.Figure()
    for engine in engine_order(df["engine"]):
        sub = df[df["engine"] == engine].set_index("phase").reindex(present)
        fig.add_bar(
            name=engine_title(engine), x=present, y=sub[value], marker_color=engine_color(engine),
            error_y=dict(type="data", array=sub[error], visible=True) if error else None,
            hovertemplate=f"{engine_title(engine)} %{{x}}: %{{y:.4g}} {unit}<extra></extra>",
        )
    fig.update_layout(
        title=title, barmode="group", yaxis_title=unit, xaxis_title="phase", template="plotly_white",
        legend_title="engine", meta={"benchlib_name": name or slug(title)}, height=420,
        margin=dict(l=60, r=20, t=60, b=50),
    )
    if log_y:
        fig.update_yaxes(type="log")
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
