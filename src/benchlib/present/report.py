"""What every notebook's report shows, read back from the store by run id (never from memory),
so any past run's report can be rebuilt: host and provenance tables, where the wall time went,
failures and check mismatches, caveats, and a comparison with a published reference.

A notebook's own report subclasses `RunReport` and adds its tables and figures; a minimal one
needs only the run id:

    report = RunReport(result.run_id)
    report.host_table(); report.provenance_table(); report.timing_table()
    Markdown(report.problems()); Markdown(report.caveats())
"""
from __future__ import annotations

import json
import math
from functools import cached_property, partial
from typing import Any, Iterable

import pandas as pd
import yaml

from ..data import findings as F
from ..data import results
from ..engines import get_engine
from ..core.errors import UnknownEngineError
from ..run.measure import NODE_SCOPE, WARMUP_PREFIX
from ..engines import engine_title


def fmt(value: float, unit: str = "", digits: int = 3) -> str:
    """A number for a table cell; NaN (not measured) reads n/a."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if abs(value) >= 10 ** digits:
        return f"{value:,.0f}{unit}"
    return f"{value:.{digits}g}{unit}"


CI_REACHES_ZERO = "{value}{unit} (95% CI reaches 0)"


def fmt_ci(value: float, half_width: float, unit: str = "", *, positive: bool = False) -> str:
    """`1.23 ± 0.05 s`: the mean and the half width of its 95% confidence interval. `positive`: a
    figure that cannot be below zero (a throughput), whose CI reaching zero says only that the
    repetitions disagreed: `11,616 (95% CI reaches 0)`, not `11,616 ± 35,698`."""
    if half_width is None or (isinstance(half_width, float) and math.isnan(half_width)):
        return fmt(value, unit)
    if positive and half_width >= abs(value):
        return CI_REACHES_ZERO.format(value=fmt(value), unit=unit)
    # A spread below the printed precision (counts that repeat) is `± 0`, not `± 2.77e-12`.
    if fmt(value) == fmt(value + half_width) == fmt(value - half_width):
        half_width = 0.0
    return f"{fmt(value)} ± {fmt(half_width)}{unit}"


def fmt_ratio_ci(ratio: float, low: float, high: float, unit: str = "") -> str:
    """`1.23x (1.05-1.44)`: a ratio with its 95% confidence interval, which on the log scale
    (results.contrast) is not symmetric, so it is printed as its two ends, never as `±`."""
    if low is None or high is None or low != low or high != high:
        return fmt(ratio, unit)
    return f"{fmt(ratio)}{unit} ({fmt(low)}-{fmt(high)})"


def _background_work(key: str) -> bool:
    try:
        embedded = get_engine(key).embedded
    except UnknownEngineError:  # a run stored by a benchlib that had this engine
        return False
    return bool(embedded and embedded.background_work)


def _verdict_label(fields: dict, phrases: F.Phrases) -> str:
    """A table cell's verdict: its words, with the direction first where better / worse mean something."""
    verdict = F.Verdict(fields["verdict"])
    directed = phrases.directed and verdict in (F.Verdict.BETTER, F.Verdict.WORSE)
    return f"{verdict.value}, {fields['words']}" if directed else fields["words"]


# A cell that says nothing measured: a column holding one of these in every row tells a reader
# nothing a row could differ by, and is left out of the table shown (hostile read 46d, 05 #5).
DEAD_VALUES = frozenset({"0", "ok", "not measured", "n/a", ""})


def dead_columns(frame: pd.DataFrame) -> list:
    """The columns of a table of two or more rows whose every cell holds the same DEAD_VALUES
    value (a number 0 or a missing one counts as "0" or "n/a")."""
    if len(frame) < 2:
        return []
    def words(v) -> str:
        if isinstance(v, str):
            return v.strip()
        return "n/a" if pd.api.types.is_scalar(v) and pd.isna(v) else "0" if pd.api.types.is_number(v) and v == 0 else str(v)
    return [c for c in frame.columns if len(cells := set(map(words, frame[c]))) == 1 and cells <= DEAD_VALUES]


def plural(n: int, noun: str) -> str:
    """`1 repetition`, `2 repetitions`."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _markdown(lines: Iterable[str]) -> str:
    return "\n".join(f"- {line}" for line in lines) or "- none"


def _markdown_html(text: str) -> str:
    import mistune  # nbconvert's own Markdown renderer

    return mistune.html(text)


def _plain(text: str) -> str:
    """One line of Markdown as plain text (for the indexes and summary.txt)."""
    import html
    import re

    # A footnote mark points into the page's notes: an index line has none.
    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<sup>.*?</sup>", "", _inline(text))))


def _inline(text: str) -> str:
    """One line of Markdown (bold, code) as HTML without a wrapping paragraph."""
    html = _markdown_html(text).strip()
    return html[3:-4] if html.startswith("<p>") and html.endswith("</p>") else html


# The first screen (1280x900) holds the title and question (~150 px), the answer's five lines,
# how sure and the seed line (~220 px): the chart gets the rest.
ANSWER_FIGURE_HEIGHT = 460


def report_css() -> str:
    """The report's own styles (answer, findings table, appendix): one file, inlined by the HTML
    template and by `answer()` for JupyterLab."""
    from ..core.settings import REPORT_TEMPLATE_DIR

    return (REPORT_TEMPLATE_DIR / "benchlib" / "benchlib.css").read_text()


def known(value):
    """A stored value, or None for a missing one (NULL reads back as None or NaN)."""
    return None if value is None or (isinstance(value, float) and value != value) else value


def host_label(info: dict, priced_as: str | None = None) -> str:
    """`c6i.large (0.085 USD/h), fingerprint 3f2a9c0d1e2b`: the declared class and price and the
    fingerprint a run recorded; runs older than both say so. `priced_as`: the instance a workload
    priced this host's throughput as, named where the host itself declares no class."""
    klass, price, fingerprint = (known(info.get(k)) for k in ("host_class", "host_price", "host_fingerprint"))
    if fingerprint is None:
        return "not recorded (an older run)"
    declared = f"{klass}" if klass else (f"priced as if {priced_as} (this host declares no class, and its CPU is not "
                                         "calibrated against that instance's)" if priced_as else "undeclared")
    if price is not None:
        declared += f" ({price:g} {info.get('host_price_unit')})"
    return f"{declared}, fingerprint {fingerprint}"


def counted(found: pd.DataFrame, split) -> pd.DataFrame:
    """The findings rows the answer's counts count, given `split` (found -> the rows the findings
    table shows, those it leaves out): the shown ones, or all where it leaves none or every row out."""
    shown, out = split(found)
    return found if out.empty or shown.empty else shown


class RunReport:
    """A run's report. A workload's report sets `phrases`, and overrides `findings()` (its
    analysis's findings table), `caveat_notes()` (the caveats its rows cite) and
    `headline_figure()` (the one chart that shows the answer); `answer()`, `findings_table()` and
    `appendix()` are drawn here, the same for every notebook."""

    phrases: F.Phrases = F.DEFAULT_PHRASES
    answer_limit = 5  # lines of the answer on the first screen
    workload = None  # the workload whose precision rule (floor, per) the run's repetitions followed
    seed_set: str | None = None  # the parameter set at the seed's scale: it tests what this run cannot
    notebook: str | None = None  # its parameter sets' folder under papermill_params/ (`set_values`)

    def __init__(self, run_id: str, store=None):
        self.run_id = run_id
        self.store = store
        self.info = results.run_info(run_id, store)
        self.measurements = results.measurements(run_id, store)
        self.instances = results.instances(run_id, store)
        measured = set(self.measurements["engine"])
        requested = self.info["parameters"].get("engines", [])
        self.engines = [e for e in requested if e in measured] + sorted(measured - set(requested))
        self.metric, self.metric_unit, self.metric_explanation = results.cost_metric(self.measurements)
        # A count (instructions) does not move with the host's speed: the host's loop neither
        # normalises it nor is said to be in it (findings.drift_applies).
        self.host_moves_cost = F.drift_applies(self.metric_unit)

    @cached_property
    def calibrations(self) -> pd.DataFrame:
        """The run's calibration loops (results.calibrations), taken out of its measurements once."""
        return results.calibrations(self.measurements)

    @cached_property
    def host_factor(self):
        """results.host_factor of a pair (subject, base) of the run's engines, over `calibrations`:
        a report asks it for every pair it compares."""
        return partial(results.loop_factor, self.calibrations)

    # -- findings: what the run found, as data -------------------------------------------------------
    def findings(self) -> pd.DataFrame:
        """The findings table (`findings.FINDING_COLUMNS`); empty where a workload has none."""
        return F.table([])

    def caveat_notes(self) -> list[F.Caveat]:
        """The caveats the findings rows cite by id, each a short sentence."""
        return []

    def headline_figure(self):
        """The one chart that shows the answer (a plotly figure), or None."""
        return None

    def counted_findings(self) -> pd.DataFrame:
        """The rows the answer's counts (how sure, against the seed) count: those the findings
        table shows (a workload that leaves rows out of its table leaves them out here too)."""
        return counted(self.findings(), self.shown_and_left_out)

    def shown_and_left_out(self, found: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The findings rows the findings table shows, and those it leaves to another place, which
        `left_out_line` names under it (none here; where it would leave every row, it shows all)."""
        return found, found.iloc[0:0]

    def left_out_line(self, out: pd.DataFrame) -> str:
        """The line under the findings table saying which rows it left out, and where they are."""
        return ""

    def phrases_of(self, row) -> F.Phrases:
        """The phrase table of one findings row (a workload with rows of several kinds picks by kind)."""
        return self.phrases

    def answer_lines(self) -> list[str]:
        """The answer: at most `answer_limit` lines rendered from the headline rows (one per row,
        or one per group of rows where the phrase table sets `line_by`)."""
        rows = F.headline(self.findings(), self.answer_limit, by=self.phrases.line_by)
        if not self.phrases.line_by:  # one row a line, each in the phrase table of its kind
            return [F.render(row, self.phrases_of(row)) for row in rows.to_dict("records")]
        return F.render_lines(rows, self.phrases)[:self.answer_limit]

    def answer_support(self) -> list[int]:
        """Per line of `answer_lines`, how well the run supports it (`Verdict.support` of the best
        row it states); a report whose answer has lines of its own beyond its rows says theirs."""
        rows = F.headline(self.findings(), self.answer_limit, by=self.phrases.line_by)
        if rows.empty:
            return []
        support = rows["verdict"].map(lambda v: F.Verdict(v).support)
        if self.phrases.line_by:
            return [int(support[rows[self.phrases.line_by] == g].max()) for g in dict.fromkeys(rows[self.phrases.line_by])]
        return [int(s) for s in support]

    def index_line(self, lines: list[str]) -> str | None:
        """The line the indexes show: the best-supported one (`answer_support`), the first of those."""
        if not lines:
            return None
        support = self.answer_support()
        if len(support) != len(lines):
            return _plain(lines[0])
        return _plain(lines[max(range(len(lines)), key=lambda i: (support[i], -i))])

    def set_values(self, key: str) -> dict[str, Any]:
        """Per parameter set of this report's notebook that sets `key`, its value, read from the
        set's file: a page that names another set's scale never carries a copy of it."""
        from ..core.settings import get_settings

        folder = get_settings().params_dir / (self.notebook or "")
        sets = {p.stem: yaml.safe_load(p.read_text()) or {} for p in sorted(folder.glob("*.yaml"))} \
            if self.notebook else {}
        return {name: values[key] for name, values in sets.items() if key in values}

    def seed_line(self, found: pd.DataFrame) -> str:
        """The answer's one line on the seed (findings.seed_line); a workload whose seed may not have
        run this run's engines says so where no row has a seed figure."""
        return F.seed_line(found, self.seed_set)

    def counts_shown(self) -> bool:
        """Whether the page shows the certainty line under the answer: not where an answer line
        already counts the same rows (a rerun's false-positive count)."""
        return True

    def answer(self) -> None:
        """The first screen: the answer in at most `answer_limit` lines with its numbers, how sure
        the run is, the comparison with the seed in one line, then the one chart, at a height that
        keeps the whole (with the notebook's title and question above it) within 1280x900. The
        lines travel to the batch and site indexes through the output's metadata."""
        from IPython.display import HTML, display

        found = self.counted_findings()
        lines = self.answer_lines()
        sure = F.certainty(found)
        seed = self.seed_line(found)
        shown = lines or ["This run measured no comparison to answer with; see the tables below."]
        items = "".join(f"<li>{_inline(line)}</li>" for line in shown)
        below = " ".join([f"{_inline(sure)}." if self.counts_shown() else ""] + [_inline(seed)] * bool(seed)).strip()
        html = (f"<style>{report_css()}</style>"  # JupyterLab has no report template: the answer brings it
                f'<div class="benchlib-answer"><ul>{items}</ul>'
                + (f'<p class="benchlib-sure">{below}</p>' if below else "") + "</div>")
        display(HTML(html), metadata={"benchlib": {"answer": self.index_line(lines),
                                                   "lines": [_plain(line) for line in lines],
                                                   "certainty": sure, "count": F.count_line(found), "seed": seed,
                                                   "certainty_shown": self.counts_shown()}})
        figure = self.headline_figure()
        if figure is not None:
            height = figure.layout.height or ANSWER_FIGURE_HEIGHT
            figure.update_layout(height=min(height, ANSWER_FIGURE_HEIGHT))
            figure.show()

    @staticmethod
    def show(item) -> None:
        """A figure or table a notebook cell shows, or the one line (a str) saying why there is none."""
        from IPython.display import Markdown, display

        if item is None:
            return
        if isinstance(item, str):
            display(Markdown(item))
        elif hasattr(item, "show") and hasattr(item, "layout"):  # a plotly figure
            item.show()
        else:
            display(item)

    def findings_grid(self, found: pd.DataFrame, *, index: str = "engine", columns: str = "step",
                      caption: str = "") -> "HTML":
        """Findings rows as a grid, one row per `index` value and one column per `columns` value:
        each cell the row's ratio with its CI, the verdict's words (set apart where it is not
        decided), and a mark for how it stands against the seed (the legend under it)."""
        from IPython.display import HTML

        if found.empty:
            return HTML("<p>No comparisons to show.</p>")
        label = engine_title if index in ("engine", "base_engine") else str
        cells: dict[tuple[Any, Any], str] = {}
        for row in found.to_dict("records"):
            # A grid's cells share their pairs: whose host ran slower is said by the findings table, once a row.
            f = {**F.fields_of(row, self.phrases), "words": F.verdict_words(row, host=False)}
            verdict = F.Verdict(f["verdict"])
            mark = F.SEED_MARKS[F.SeedAgreement(f["seed"] or "no_seed")]
            kind = "decided" if verdict.decided else "undecided"
            cells[(row[index], row[columns])] = (
                f"{f['ratio']} <span class='benchlib-{kind}'>{_verdict_label(f, self.phrases)}</span>"
                + (f" <span class='benchlib-seed'>{mark}</span>" if mark else ""))
        rows, cols = list(dict.fromkeys(found[index])), list(dict.fromkeys(found[columns]))
        head = "<tr><th></th>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr>"
        body = "".join(f"<tr><th>{label(r)}</th>" + "".join(f"<td>{cells.get((r, c), '–')}</td>" for c in cols)
                       + "</tr>" for r in rows)
        seen = [a for a in F.SeedAgreement if F.SEED_MARKS[a] and a.value in set(found["seed"])]
        legend = "; ".join(f"{F.SEED_MARKS[a]} {F.SEED_WORDS[a]}" for a in seen)
        return HTML(f'<table class="benchlib-findings benchlib-grid"><caption>{_inline(caption)}</caption>{head}{body}</table>'
                    + (f'<p class="benchlib-legend">{legend}.</p>' if legend else ""))

    def findings_table(self, limit: int | None = None, found: pd.DataFrame | None = None) -> "HTML":
        """The findings rows the table shows (`shown_and_left_out`) as `table_of` draws them, and
        the line saying where the others are. `found`: other rows than `findings()`'s."""
        from IPython.display import HTML

        found = self.findings() if found is None else found
        shown, out = self.shown_and_left_out(found)
        if out.empty or shown.empty:
            return self.table_of(found, limit)
        return HTML(self.table_of(shown, limit).data + f'<p class="benchlib-legend">{self.left_out_line(out)}</p>')

    def table_of(self, found: pd.DataFrame, limit: int | None = None) -> "HTML":
        """Findings rows as a table: the ratio with its CI, the verdict's words, the seed's figure,
        and a footnote mark per caveat the row cites, the caveats' sentences under it."""
        from IPython.display import HTML

        if found.empty:
            return HTML("<p>No comparisons in this run.</p>")
        notes = {c.id: c for c in self.caveat_notes()}
        shown = found if limit is None else found.head(limit)
        marks_by_row = self.row_marks(shown)
        # A caveat every row cites is said once, in the caption, not marked on each row; a seed column
        # no row fills is left out (hostile read 46d, 06 #4).
        everywhere = [c for c in self.caveat_marks(shown) if c not in marks_by_row]
        with_seed = not shown["seed"].fillna(F.SeedAgreement.NO_SEED.value).eq(F.SeedAgreement.NO_SEED.value).all()
        rows = []
        # Rows against several bases or in several metrics say theirs per row; one of each goes in the caption.
        # A row's base is an engine, or (`base_label`) what it is set beside within one engine (a part).
        bases = [label if isinstance(label, str) and label else engine_title(e) for e, label in
                 zip(found["base_engine"], found["base_label"] if "base_label" in found else [None] * len(found))]
        many_bases = len(set(bases)) > 1
        many_metrics = found["metric"].nunique() > 1
        for base, row in zip(bases, shown.to_dict("records")):
            phrases = self.phrases_of(row)
            f = F.fields_of(row, phrases)
            sup = self.footnote(row, marks_by_row)
            step = f"{f['step']}" + (f" ({f['regime']})" if f.get("regime") else "")
            seed = "" if f["seed"] in (None, "no_seed") else f"{f['seed_text']}x: {f['seed_words']}"
            words = _verdict_label(f, phrases)
            base_value = f"{base}: {f['base_value']}" if many_bases else f["base_value"]
            metric = f"<td>{f['metric']}</td>" if many_metrics else ""
            rows.append(f"<tr><td>{f['subject']}</td><td>{step}</td>{metric}<td>{f['value']}</td><td>{base_value}</td>"
                        f"<td>{f['ratio']}{sup}</td><td>{words}</td>" + (f"<td>{seed}</td>" if with_seed else "")
                        + "</tr>")
        first = F.fields_of(found.iloc[0].to_dict(), self.phrases)
        caption = ("" if many_bases else f"Base: {bases[0]}. ") + \
            ("" if many_metrics else f"Metric: {first['metric']}. ") + F.host_pairs_line(found) + \
            "".join(f" {_inline(notes[c].text)}" for c in everywhere)
        head = ("<tr><th>engine</th><th>step</th>" + ("<th>metric</th>" if many_metrics else "")
                + "<th>value</th><th>base</th><th>ratio to base (95% CI)</th><th>verdict</th>"
                + ("<th>seed</th>" if with_seed else "") + "</tr>")
        foot = "".join(f"<li value='{n}'>{_inline(notes[c].text)}</li>" for c, n in marks_by_row.items())
        return HTML(f'<table class="benchlib-findings"><caption>{caption.strip()}</caption>'
                    f"{head}{''.join(rows)}</table>" + (f'<ol class="benchlib-notes">{foot}</ol>' if foot else ""))

    def caveat_marks(self, found: pd.DataFrame) -> dict[str, int]:
        """Each caveat id the rows cite (and `caveat_notes` words), numbered in order of first
        citation: the findings table's footnotes, which an answer line may point to as well."""
        return F.caveat_marks(found, {c.id for c in self.caveat_notes()})

    def row_marks(self, shown: pd.DataFrame) -> dict[str, int]:
        """`caveat_marks` less a caveat every one of several rows cites (the table says that once, in
        its caption): the marks the table of `shown` prints on its rows and numbers under it."""
        marks = self.caveat_marks(shown)
        return {c: n for c, n in marks.items()
                if len(shown) < 2 or not all(c in (cs or ()) for cs in shown["caveats"])}

    def answer_marks(self, shown: pd.DataFrame | None = None) -> dict[str, int]:
        """The marks the body's findings table (`findings_table`; `shown`: its rows, where a workload
        picks them) prints, for the answer's lines: a mark on the first screen points to a note under
        that table, never to a numbering over rows it leaves out (hostile read 47, 07)."""
        if shown is None:
            found = self.findings()
            shown, out = self.shown_and_left_out(found)
            shown = found if out.empty or shown.empty else shown
        return self.row_marks(shown)

    @staticmethod
    def footnote(row: dict, marks: dict[str, int]) -> str:
        """A row's footnote marks (`<sup>1,3</sup>`), numbered by `caveat_marks`."""
        cited = [str(marks[c]) for c in (row.get("caveats") or ()) if c in marks]
        return f"<sup>{','.join(cited)}</sup>" if cited else ""

    def appendix_parts(self) -> list[tuple[str, Any]]:
        """What every report shares, in the collapsed appendix: (heading, a DataFrame, Styler or
        Markdown text). A workload adds its own shared facts by extending the list."""
        return [("Problems", self.problems()), ("Host", self.host_table()), ("Engines and images", self.provenance_table()),
                ("Run conditions", self.caveats()), ("Where the wall time went", self.timing_table())]

    def appendix(self) -> "HTML":
        """One collapsed section for what is true of every report: problems, host, provenance,
        durability, isolation, client path, host speed, images, harness time."""
        from IPython.display import HTML

        parts = []
        for heading, body in self.appendix_parts():
            if isinstance(body, str):
                html = _markdown_html(body)
            elif isinstance(body, pd.DataFrame):
                html = body.drop(columns=dead_columns(body)).to_html()
            elif isinstance(getattr(body, "data", None), pd.DataFrame) and hasattr(body, "hide"):  # a Styler
                html = body.hide(dead_columns(body.data), axis="columns").to_html()
            elif hasattr(body, "to_html"):
                html = body.to_html()
            else:
                html = str(body)
            parts.append(f"<h4>{_inline(heading)}</h4>{html}")
        return HTML('<details class="benchlib-appendix"><summary>About this run: host, engines, images, '
                    f"conditions, problems</summary>{''.join(parts)}</details>")

    def precision_outcome(self) -> "results.PrecisionOutcome | None":
        """The run's precision by the rule its driver stopped on (results.precision_outcome, with its
        workload's floor and divisor); None where the report knows no workload or no ci_target."""
        target = self.param("ci_target")
        if self.workload is None or target is None:
            return None
        return results.precision_outcome(self.run_id, float(target), floor=self.workload.precision_floor,
                                         per=self.workload.precision_per, store=self.store, recurring_only=True)

    def priced_as(self) -> str | None:
        """The instance a workload prices this host's throughput as (None: it prices nothing)."""
        return None

    # -- tables ------------------------------------------------------------------------------------
    def host_table(self):
        i = self.info
        perf_events = ", ".join(f"{k} {v}" for k, v in i["perf_support"].get("events", {}).items())
        facts = {
            "run id": i["run_id"], "status": i["status"], "host": i["hostname"],
            "CPU": f"{i['cpu_model']} ({i['cpu_cores']} cores)",
            "memory": f"{(i['memory_bytes'] or 0) / 2**30:.1f} GiB", "kernel": i["kernel"], "OS": i["os"],
            "cgroup layout": i["cgroup_layout"], "host class": host_label(i, self.priced_as()), "Docker": i["docker_version"],
            "perf": f"{i['perf_version']}: {perf_events or i['perf_support'].get('reason', '')}",
            "benchlib": f"{i['benchlib_version']} (git {str(i['git_sha'])[:10]}"
                        f"{' + local changes' if i['git_dirty'] else ''})",
            # As a parameter set's YAML takes them (papermill_params/, `-P`): no Python values on a page.
            "parameters (YAML)": yaml.safe_dump({k: v for k, v in i["parameters"].items() if k != "skipped"},
                                                default_flow_style=True, width=10 ** 6, sort_keys=False).strip(),
        }
        return (pd.DataFrame({"": list(facts), "value": list(facts.values())}).style.hide(axis="index")
                .set_properties(**{"text-align": "left"}))

    def provenance_table(self):
        inst = self.instances.drop_duplicates("engine")
        return pd.DataFrame({
            "engine": [engine_title(e) for e in inst["engine"]], "server version": inst["server_version"],
            "image": inst["image_ref"], "image source": inst["image_source"],
            "image id / digest": [d if isinstance(d, str) else (i[:19] if isinstance(i, str) else "")
                                  for d, i in zip(inst["image_digest"], inst["image_id"])],
            "start-to-ready (s)": inst["startup_seconds"],
        }).style.format("{:.2f}", subset=["start-to-ready (s)"]).hide(axis="index")

    def timing_table(self):
        """Where the run's wall time went: measured windows versus everything else (engine starts,
        set-up, checks), i.e. the harness overhead."""
        # One wall time per window: a cluster's nodes store their own copies of it (scope node).
        wall = self.measurements[(self.measurements["metric"] == "wall_time")
                                 & (self.measurements["scope"] != NODE_SCOPE)]
        measured = wall.groupby("window")["value"].sum()
        ended = self.info["ended_at"]
        total = ((ended if pd.notna(ended) else pd.Timestamp.now(tz="UTC")) - self.info["started_at"]).total_seconds()
        warmup = measured[measured.index.str.startswith(WARMUP_PREFIX)].sum()
        rows = [(f"measured: {w} windows", measured.get(w, 0.0)) for w in ("baseline", "phase", "settle", "calibration")
                if w != "calibration" or w in measured.index]
        if warmup:
            rows.append(("warm-up repetitions (measured, discarded)", warmup))
        rows += [("everything else (starts, set-up, checks)", total - measured.sum()), ("run total", total)]
        out = pd.DataFrame(rows, columns=["", "seconds"])
        out["share"] = out["seconds"] / total if total > 0 else float("nan")
        # Two harness shares exist; this one is the run's own span, the batch summary's the notebook's.
        return (out.style.format({"seconds": "{:.1f}", "share": "{:.1%}"}).hide(axis="index")
                .set_caption("The run's own wall time, from its start to its end as the store records them. The "
                             "batch's summary.txt counts the whole notebook execution (kernel start, imports, "
                             "rendering this report) as well, so its share outside measured windows is larger."))

    # -- problems and caveats ----------------------------------------------------------------------
    def check_mismatches(self) -> pd.DataFrame:
        m = self.measurements
        bad = m[m["check_status"].isin(["mismatch", "error"])].drop_duplicates("seq")
        return bad[["engine", "repetition", "labels", "phase", "check_name", "check_value", "check_expected"]]

    def problems(self, extra: Iterable[str] = ()) -> str:
        """Failed engine starts and checks that did not hold, and a workload's own `extra` lines
        (errors its client counted and went on past), as Markdown ("none" when clean)."""
        lines = []
        if self.info["status"] in ("failed", "partial", "aborted") and self.info["error"]:
            lines.append(f"**Run {self.info['status']}:** {self.info['error']}")
        if self.info.get("failures"):
            lines.append(f"Each failure's full traceback: `benchlib runs --show {self.run_id}`.")
        note = self.info.get("status_note") or ""
        if note and self.info["status"] != "ok":  # an ok run's note is in the caveats
            lines.append(f"**Status note:** {note}")
        elif (outcome := self.precision_outcome()) is not None and not outcome.met \
                and int(self.param("max_repetitions") or 0) < 2:  # one value has no CI to be wide
            lines.append(f"**Precision target not tested:** {outcome.targeted} phase windows with a target ran "
                         "once (max_repetitions = 1): one value has no CI.")
        elif outcome is not None and not outcome.met:
            lines.append(f"**Precision target not met:** {outcome.wide} of {outcome.targeted} phase windows with a "
                         f"target still had a 95% CI wider than ±{float(self.param('ci_target')):.0%} after "
                         f"{plural(int(self.param('max_repetitions') or 0), 'repetition')}.")
        for row in self.check_mismatches().itertuples():
            variant = "" if row.labels in (None, "{}") else f" {row.labels}"
            if row.check_value != row.check_value:  # the check itself raised: its window is kept
                lines.append(f"**Check could not run:** {engine_title(row.engine)}{variant} repetition "
                             f"{row.repetition}, {row.phase}: its {row.check_name} check raised (see the run's "
                             "failures); the window's figures are stored but unverified.")
                continue
            lines.append(f"**Check failed:** {engine_title(row.engine)}{variant} repetition {row.repetition}, "
                         f"{row.phase}: {row.check_name} = {row.check_value:g}, expected {row.check_expected:g}. "
                         "Its figures are kept but describe different work.")
        lines += [line for line in extra if line]
        return _markdown(lines)

    def _started(self, key: str) -> dict[str, list[str]]:
        """Per engine, the distinct values of `key` its starts found out (durability, client path),
        from the instances' stored configuration; cluster nodes and older runs have none."""
        seen: dict[str, list[str]] = {}
        for engine, kind, config in zip(self.instances["engine"], self.instances["kind"], self.instances["config"]):
            value = json.loads(config or "{}").get(key) if kind != "node" else None
            if value and value not in seen.setdefault(engine, []):
                seen[engine].append(value)
        order = {e: i for i, e in enumerate(self.engines)}  # the run's engine order, not the store's
        return {k: seen[k] for k in sorted(seen, key=lambda e: order.get(e, len(order))) if seen[k]}

    def _client_path_lines(self) -> list[str]:
        paths = self._started("client_path")
        relayed = [engine_title(k) for k, v in paths.items() if any(p.startswith("the published port") for p in v)]
        direct = [engine_title(k) for k, v in paths.items() if k not in relayed]
        lines = []
        if direct:
            lines.append(f"**Client path:** benchlib's clients reached "
                         f"{', '.join(direct)} over TCP at the container's own address on its Docker network, not "
                         "through the "
                         "port published on 127.0.0.1, so no userland proxy (docker-proxy) relayed a round trip: no "
                         "process outside the measured scopes sat between client and server.")
        if relayed:
            lines.append(f"**Client path:** {', '.join(relayed)} could only be reached through the port published on "
                         "127.0.0.1: where Docker's userland proxy (docker-proxy) relays it, the proxy's CPU is in no "
                         "measured scope, and its relay is in every round trip's wall time.")
        return lines

    def durability(self) -> dict[str, str]:
        """Per engine, its durability settings as read when it started (every distinct reading,
        where starts differed); engines stored before benchlib read them are left out."""
        return {k: " / ".join(v) for k, v in self._started("durability").items()}

    def isolation_note(self) -> str:
        """Each engine's transaction isolation as its starts read it (`Engine.isolation`), or its
        declared single level: the level decides which row versions a read must see, so engines
        compared at different levels are said to be."""
        read = {k: " / ".join(v) for k, v in self._started("isolation").items()}
        unread = [engine_title(e) for e in self.engines if e not in read]
        if not read:
            return ""
        def level(value: str) -> str:  # "transaction_isolation=REPEATABLE-READ, ..." or a declared note
            found = dict(pair.partition("=")[::2] for pair in value.split(", ") if "=" in pair)
            return (found.get("transaction_isolation") or value.split(",")[0]).lower().replace("-", " ")

        levels = {level(v) for v in read.values()}
        text = ("**Isolation as each engine started** (read from the engine, or its declared only level): "
                + "; ".join(f"{engine_title(k)} {v}" for k, v in read.items()) + ". Within a transaction of several "
                "statements the level decides which row versions a later read sees (READ COMMITTED: a snapshot per "
                "statement; REPEATABLE READ: one per transaction) and, with concurrent writers, which writes "
                "conflict or lock gaps; a one-statement autocommit read takes one snapshot at either level. "
                "So, for multi-statement or concurrent work, "
                + ("every engine here ran at that one level." if len(levels) <= 1 else
                   "the engines compared here each ran at its own level above, not at a common one."))
        if unread:
            text += f" Not read (a start older than this reading, or a cluster node): {', '.join(unread)}."
        return text

    def caveats(self, extra: Iterable[str] = ()) -> str:
        lines = [f"**Cost metric:** {self.metric_explanation}."]
        if self.info.get("status_note"):
            lines.append(f"**How the run went:** {self.info['status_note']}")
        local = self.instances[self.instances["image_source"] == "local-build"]
        for row in local.drop_duplicates("engine").itertuples():
            lines.append(f"**{engine_title(row.engine)}** ran from `{row.image_ref}`, {row.image_note}; its version "
                         f"is `{row.server_version}`, not the official image's.")
        lines += self._client_path_lines()
        durability = self.durability()
        if durability:
            lines.append("**Durability as each engine started** (what a commit waits for: read from the engine, or "
                         "its declared note where it has no setting to read): "
                         + "; ".join(f"{engine_title(k)} {v}" for k, v in durability.items()) + ".")
        if isolation := self.isolation_note():
            lines.append(isolation)
        for key, reason in (self.info["parameters"].get("skipped") or {}).items():
            lines.append(f"**{engine_title(key)}** was skipped: {reason}.")
        for key in self.engines:
            try:
                note = get_engine(key).report_note
            except UnknownEngineError:  # a run stored by a benchlib that had this engine
                note = ""
            if note:
                lines.append(f"**{engine_title(key)}:** {note}")
        if (self.instances["kind"] == "embedded").any():
            background = [engine_title(k) for k in self.engines if _background_work(k)]
            lines.append("Embedded engines run in the notebook's own process: their cost is that process's CPU (the "
                         "Python driver included), and they have no settle window"
                         + (f", except {', '.join(background)}, whose library keeps working on threads of its own "
                            "after a call returns." if background else "."))
        m = self.measurements
        if ((m["source"] == "perf") & (m["status"] == "skipped")).any():
            lines.append("**perf** was not run during this workload's windows: this host counts only software events, "
                         "which cgroup accounting gives without perf's cost on every context switch (a few percent "
                         "of a throughput benchmark's result).")
        if (self.measurements["scope"] == "client").any():
            lines.append("Client CPU (scope `client`) is the process that drives a server engine (the notebook's "
                         "Python driver, or sysbench); it is shown beside the engine's, and added to it only where a "
                         "table or figure says engine + driver.")
        if self.info["cgroup_layout"] in ("v1", "hybrid"):
            lines.append("Block-device I/O bytes (the blkio figures) come from cgroup v1 blkio, which does not see "
                         "buffered writes flushed later by the kernel: on this host they undercount writes. Storage "
                         "reads, where a table shows them, come from /proc/<pid>/io instead.")
        speed = results.host_speed(m)
        if speed is not None and speed["n"] > 1:
            lines.append(f"**Host speed:** a fixed CPU loop run on the engine's CPUs once per repetition (beside "
                         "every step's repetition where a start runs each step's repetitions back to back) took "
                         f"{speed['max_over_min']:.2f}x as long in its slowest run as in its fastest (relative sd "
                         f"{speed['rel_sd']:.1%} over {speed['n']} runs; mean {speed['mean_s'] * 1e3:.0f} ms, "
                         f"±{speed['rel_ci95']:.1%} 95% CI of the mean): the host's own speed moved that much during "
                         "the run, whatever the engines did.")
            lines.append(self.host_speed_by_engine())
        noisy = m[(m["metric"] == "quiet_wait_time") & (m["status"] != "ok")]
        if not noisy.empty:
            reps = ", ".join(f"{engine_title(e)} {'warm-up' if int(r) == 0 else f'repetition {int(r)}'}"
                             for e, r in zip(noisy["engine"], noisy["repetition"]))
            lines.append(f"**Idle baseline:** {len(noisy)} baseline(s) ({reps}) followed a wait for quiet that "
                         "reached its bound: the engine was above the quiet floor until then, and if that work went "
                         "on into the baseline, its idle rate is too high and the costs net of it in that repetition "
                         "are understated.")
        lines += [line for line in extra if line]
        return _markdown(lines)

    def host_speed_by_engine(self, beyond: float = 0.10) -> str:
        """Which engine the host's drift fell on: each engine's median calibration loop. Engines are
        measured one after another, so a slow spell of the host lines up with one engine and would
        read as that engine's cost; named where an engine's median is `beyond` the fastest's."""
        c = self.calibrations.dropna(subset=["calibration_s"])
        medians = c.groupby("engine")["calibration_s"].median()
        if len(medians) < 2:
            return ""
        fastest = medians.min()
        slow = medians[medians > fastest * (1 + beyond)]
        text = ("**Host speed by engine** (median calibration loop of each engine's repetitions): "
                + ", ".join(f"{engine_title(e)} {v * 1e3:.0f} ms" for e, v in medians.items()) + ".")
        # An engine started more than once (02's regimes) can meet the host at different speeds in each
        # start: one median over both would blame both starts for one's slow spell.
        order = "started_at" if "started_at" in c else "repetition"
        starts = sorted(((g[order].min(), g["engine"].iloc[0], g["calibration_s"].median())
                         for _, g in c.groupby("instance_id")), key=lambda start: start[0])
        if len(starts) > len(medians):
            text += (" Median loop per engine start, in the order the starts ran: "
                     + ", ".join(f"{engine_title(e)} {v * 1e3:.0f} ms" for _, e, v in starts) + ".")
        # A median hides a slow stretch that fell on some of an engine's loops (one regime, one test):
        # every loop over the bound is counted.
        bound = fastest * (1 + beyond)
        slow_loops = c[c["calibration_s"] > bound].groupby("engine").size()
        if not slow_loops.empty:
            text += (f" Loops over {1 + beyond:.2f}x the fastest engine's median: "
                     + ", ".join(f"{engine_title(e)} {int(slow_loops.get(e, 0))} of {int(n)} (slowest "
                                 f"{c[c['engine'] == e]['calibration_s'].max() * 1e3:.0f} ms)"
                                 for e, n in c.groupby("engine").size().items()) + ".")
        steal = self.steal_by_engine()
        if steal:
            text += (" Steal time, the CPU time the hypervisor gave other guests during each engine's phase windows "
                     "(/proc/stat, as a share of the host's CPU time then): "
                     + ", ".join(f"{engine_title(e)} {v:.1%}" for e, v in steal.items()) + ".")
            if not slow_loops.empty and max(steal.values()) < 0.02:
                text += (" Steal did not capture the slow loops: the guest kept its CPU time and did less work per "
                         "second (a neighbour contending for caches or memory, or a lower clock).")
        if slow.empty:
            return text + f" No engine's median loop is more than {beyond:.0%} above the fastest's" + (
                "; the slow loops above still lie in some of its windows." if not slow_loops.empty else ".")
        return text + (" " + ", ".join(f"{engine_title(e)}'s median loop (all its starts) ran {v / fastest:.2f}x the fastest engine's"
                                       for e, v in slow.items())
                       + ": the loop runs on the engine's CPUs, so either the host was slower then (steal says how "
                       "much of that a neighbour took) or the engine's own background work shared those CPUs; "
                       + ("its costs and throughput may carry either, and comparisons with it are not the engines' "
                          "alone." if self.host_moves_cost else
                          f"the costs here are counted ({self.metric_unit}), which neither moves."))

    def steal_by_engine(self) -> dict[str, float]:
        """Per engine, steal time over its measured phase windows as a share of the host's CPU time in
        them (wall x cores); empty for runs stored before steal was read."""
        m = self.measurements
        if not (m["metric"] == "host_steal_time").any():
            return {}
        phase = m[(m["window"] == "phase") & (m["scope"] != NODE_SCOPE)]
        steal = phase[phase["metric"] == "host_steal_time"].drop_duplicates("seq")
        wall = phase[(phase["metric"] == "wall_time") & phase["seq"].isin(steal["seq"])].drop_duplicates("seq")
        cores = float(self.info.get("cpu_cores") or 1)
        capacity = wall.groupby("engine", sort=False)["value"].sum() * cores
        return {e: float(v / capacity[e]) for e, v in steal.groupby("engine", sort=False)["value"].sum().items()
                if capacity.get(e, 0) > 0}

    # -- reference ---------------------------------------------------------------------------------
    @staticmethod
    def ratio_comparison(ours: pd.DataFrame, ours_value: str, reference: pd.DataFrame, reference_value: str,
                         *, base_engine: str, columns: list[str], reference_name: str,
                         column: str = "phase") -> pd.DataFrame:
        """Each engine's value relative to `base_engine` per `column`, this run beside a published
        reference: ratios travel between hosts, absolute figures do not."""
        frames = []
        for df, value, source in ((ours, ours_value, "this run"), (reference, reference_value, reference_name)):
            ratios = results.ratios_to(df.rename(columns={column: "phase"}), value, base_engine)
            frames.append(ratios[ratios["engine"] != base_engine].assign(source=source))
        both = pd.concat(frames, ignore_index=True)
        both = both[both["phase"].isin(columns)]
        both["engine"] = [engine_title(e) for e in both["engine"]]
        table = both.pivot_table(index=["source", "engine"], columns="phase", values="ratio", sort=False)
        return table.reindex(columns=[c for c in columns if c in table.columns]).round(2)

    def param(self, name: str, default: Any = None) -> Any:
        return self.info["parameters"].get(name, default)
