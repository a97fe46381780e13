"""A rendered report as a reader sees it: loaded in headless Chromium at 1280 px (a laptop's
browser), is the page wider than the window (a table or a printed line pushing the right edge
out), and does every bar with a nonzero value show at least a couple of pixels (a linear axis
where engines differ by orders of magnitude draws the small ones as hairlines)?"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import browser

WIDTH = 1280
MIN_BAR_PX = 2.0  # below this a bar reads as an empty slot

# Runs once the page has loaded and plotly has drawn: the page's width against the window's,
# and per figure each bar's value and visible height (a bar on a log axis is drawn from far below
# the plot area and clipped to it: only the part inside the area counts), written into the DOM
# for the shared browser's tab (browser.py) to read back. A bar point's bound datum holds its value as `s`.
CHECK_SCRIPT = """
<pre id="benchlib-check"></pre>
<script>
window.addEventListener("load", function () { setTimeout(function () {
  var figures = [];
  document.querySelectorAll(".js-plotly-plot").forEach(function (gd, f) {
    var title = (gd.layout && gd.layout.title && (gd.layout.title.text || gd.layout.title)) || ("figure " + (f + 1));
    var bars = [];
    gd.querySelectorAll(".cartesianlayer .subplot").forEach(function (subplot) {
      var id = Array.from(subplot.classList).filter(function (c) { return c !== "subplot"; })[0];
      var drag = gd.querySelector(".draglayer ." + id + " .nsewdrag");
      if (!drag) { return; }
      var area = drag.getBoundingClientRect();
      subplot.querySelectorAll(".barlayer .trace").forEach(function (trace) {
        var bound = trace.__data__ && trace.__data__[0] && trace.__data__[0].trace;
        var name = bound ? (bound.name || "") : "";
        trace.querySelectorAll(".point").forEach(function (point) {
          var path = point.querySelector("path");
          if (!path) { return; }
          var r = path.getBoundingClientRect();
          var horizontal = bound && bound.orientation === "h";
          var shown = horizontal ? Math.min(r.right, area.right) - Math.max(r.left, area.left)
                                 : Math.min(r.bottom, area.bottom) - Math.max(r.top, area.top);
          var datum = point.__data__ || {};
          var categories = bound ? (horizontal ? bound.y : bound.x) : null;
          var category = datum.p;
          if (categories && datum.i !== undefined) {
            category = Array.isArray(categories[0]) ? categories.map(function (level) { return level[datum.i]; }).join(" / ")
                                                     : categories[datum.i];
          }
          var centre = horizontal ? (r.top + r.bottom) / 2 : (r.left + r.right) / 2;
          bars.push({trace: name, x: String(category === undefined ? "" : category), subplot: id,
                     centre: Math.round(centre), value: typeof datum.s === "number" ? datum.s : null,
                     px: Math.max(0, shown)});
        });
      });
    });
    var mode = (gd._fullLayout && gd._fullLayout.barmode) || "group";
    figures.push({title: String(title), stacked: mode === "stack" || mode === "relative", bars: bars});
  });
  document.getElementById("benchlib-check").textContent = JSON.stringify({
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, figures: figures});
}, 1000); });
</script>
"""


class LayoutError(RuntimeError):
    """The page could not be loaded and measured (no chromium, a crash, the script never ran)."""


@dataclass
class Layout:
    page: Path
    width: int  # the window's
    scroll_width: int  # the page's
    figures: list[dict] = field(default_factory=list)  # {title, bars: [{trace, x, value, px}]}

    @property
    def bars(self) -> int:
        return sum(len(f["bars"]) for f in self.figures)

    def thin_bars(self) -> list[tuple[str, str, str, float]]:
        """(figure title, trace, category, px) of each bar with a nonzero value drawn under
        MIN_BAR_PX tall: there, but not readable. In a stacked figure the stack is the bar (a
        small share of it is a small segment, and reads as such): its total height counts."""
        out = []
        for f in self.figures:
            bars = [b for b in f["bars"] if b["value"] not in (None, 0) and b["value"] == b["value"]]
            if f.get("stacked"):
                stacks: dict[tuple, dict] = {}
                for b in bars:
                    stack = stacks.setdefault((b["subplot"], b["centre"]), {**b, "px": 0.0, "trace": "stack"})
                    stack["px"] += b["px"]
                bars = list(stacks.values())
            out += [(f["title"], b["trace"], b["x"], b["px"]) for b in bars if b["px"] < MIN_BAR_PX]
        return out

    def problems(self) -> list[str]:
        out = []
        if self.scroll_width > self.width:
            out.append(f"{self.page.name}: the page is {self.scroll_width} px wide in a {self.width} px window")
        for title, trace, x, px in self.thin_bars():
            out.append(f"{self.page.name}: figure '{title}': {trace or 'a bar'} at {x} drawn {px:.1f} px tall")
        return out

    def summary(self) -> str:
        problems = self.problems()
        if not problems:
            return (f"fits {self.width} px; {len(self.figures)} figures, {self.bars} bars, no nonzero bar "
                    f"under {MIN_BAR_PX:g} px")
        return f"{len(problems)} layout problems at {self.width} px: " + "; ".join(problems[:3]) + (
            f"; and {len(problems) - 3} more" if len(problems) > 3 else "")


def available() -> bool:
    return shutil.which("chromium") is not None


def check(page: Path, width: int = WIDTH) -> Layout:
    """Load a copy of `page` with the check script in headless Chromium at `width` px."""
    data = _probe(page, CHECK_SCRIPT, width)
    return Layout(Path(page), data["innerWidth"], data["scrollWidth"], data["figures"])


HEIGHT = 900  # a laptop's browser window: the first screen

# The text a reader sees without scrolling: every text node whose box starts above the first
# screen's bottom edge (SVG text included: a chart's title and ticks), in document order, and how
# far down the answer's chart ends. The edge is HEIGHT px from the page's top, not the headless
# window's inner height: Chromium takes its own window chrome out of --window-size (900 gives an
# 813 or 757 px viewport), and a page 1280 px wide lays out the same whatever the window's height.
FIRST_SCREEN_SCRIPT = """
<pre id="benchlib-check"></pre>
<script>
window.addEventListener("load", function () { setTimeout(function () {
  window.scrollTo(0, 0);
  var seen = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  var range = document.createRange();
  while (walker.nextNode()) {
    var node = walker.currentNode, text = node.textContent.trim();
    // A footnote mark (sup) points into the notes: the text read is the sentence without it.
    if (!text || node.parentElement.closest("script, style, sup, pre#benchlib-check")) { continue; }
    range.selectNodeContents(node);
    var box = range.getBoundingClientRect();
    if (box.height > 0 && box.top < SCREEN && box.bottom > 0) { seen.push(text); }
  }
  var answer = document.querySelector(".benchlib-answer");
  var chart = null;
  if (answer) {
    var after = Array.from(document.querySelectorAll(".js-plotly-plot")).filter(function (gd) {
      return answer.compareDocumentPosition(gd) & Node.DOCUMENT_POSITION_FOLLOWING; })[0];
    if (after) { chart = after.getBoundingClientRect().bottom; }
  }
  // A table on the first screen wider than the window, or than the box that scrolls it sideways.
  var wide = Array.from(document.querySelectorAll("table")).filter(function (t) {
    var box = t.getBoundingClientRect(), up = t.parentElement;
    return box.height > 0 && box.top < SCREEN && box.bottom > 0 && (box.right > window.innerWidth + 1
      || (up && up.scrollWidth > up.clientWidth + 1));
  }).map(function (t) { return ((t.querySelector("caption") || t).textContent || "").trim().slice(0, 80); });
  document.getElementById("benchlib-check").textContent = JSON.stringify({
    text: seen.join(" "), answer: !!answer, chartBottom: chart, height: SCREEN, wideTables: wide});
}, 1000); });
</script>
"""


@dataclass
class FirstScreen:
    page: Path
    text: str  # what is readable without scrolling, in document order
    answered: bool  # the page has an answer (RunReport.answer's block)
    chart_bottom: float | None  # where the chart after the answer ends, in px from the top
    height: int
    wide_tables: list[str]  # tables on the first screen overflowing its width (their captions)


def first_screen(page: Path, width: int = WIDTH, height: int = HEIGHT) -> FirstScreen:
    """What a reader sees of `page` at width x height before scrolling."""
    data = _probe(page, FIRST_SCREEN_SCRIPT.replace("SCREEN", str(int(height))), width, height)
    return FirstScreen(Path(page), data["text"], data["answer"], data["chartBottom"], data["height"],
                       data.get("wideTables", []))


def _probe(page: Path, script: str, width: int, height: int = HEIGHT) -> dict:
    """Load a copy of `page` with `script` (which writes JSON into pre#benchlib-check) in headless
    Chromium at width x height, and return what it wrote."""
    if not available():
        raise LayoutError("chromium is not installed (make setup installs it)")
    page = Path(page)
    with tempfile.TemporaryDirectory(prefix="benchlib-layout-") as tmp:
        probe = Path(tmp) / page.name
        text = page.read_text()
        probe.write_text(text.replace("</body>", script + "</body>") if "</body>" in text else text + script)
        try:
            return browser.shared().read_check(probe.as_uri(), width, height)
        except Exception as exc:
            raise LayoutError(f"chromium could not load {page.name}: {type(exc).__name__}: {exc}") from exc
