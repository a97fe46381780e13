/* The run explorer (benchlib.compare.explorer writes the data). It opens on DATA.compare: findings rows
   (benchlib.data.findings, every verdict decided in Python) of each engine against a base engine the
   reader picks. Below, the raw figures: cells aggregated per run, engine, phase and metric (mean,
   sd, n); the ratio to a base run the reader picks, with its CI by the same arithmetic as
   benchlib.data.results.contrast and the same t quantiles (DATA.t975, written by
   results.t_quantile_975). The page decides no verdict itself. */
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
  const FINISHED = ["ok", "partial"];
  const $ = (id) => document.getElementById(id);
  const cells = DATA.cells;
  // (run, engine, variant, metric) -> position in the cell columns; a number key, not a string:
  // building the index is then a few ms for 100,000 cells.
  const nE = DATA.engines.length, nV = DATA.variants.length, nM = DATA.metrics.length;
  const key = (run, engine, variant, metric) => ((run * nE + engine) * nV + variant) * nM + metric;
  const cellIndex = new Map();
  for (let i = 0; i < cells.run.length; i++) cellIndex.set(key(cells.run[i], cells.engine[i], cells.variant[i], cells.metric[i]), i);
  const cellAt = (run, engine, variant, metric) => cellIndex.get(key(run, engine, variant, metric));
  const engineIndex = new Map(DATA.engines.map((e, i) => [e.key, i]));
  const variantIndex = new Map(DATA.variants.map((v, i) => [v.name, i]));
  const versionOf = new Map(DATA.versions.map((v) => [`${v[0]}|${v[1]}`, v]));
  let state = {};

  // -- statistics: results.contrast, with the base chosen in the page ---------------------------
  function tq(dof) {
    const d = Math.floor(dof);
    if (!(d >= 1)) return NaN;
    return d > 60 ? 1.96 : DATA.t975[d];
  }
  function stat(i) {
    const n = cells.n[i], sd = cells.sd[i] == null ? NaN : cells.sd[i];
    return {mean: cells.mean[i], sd: sd, n: n, ci: n > 1 ? tq(n - 1) * sd / Math.sqrt(n) : NaN};
  }
  function welch(a, b) {
    if (a.n < 2 || b.n < 2 || [a.mean, a.sd, b.mean, b.sd].some((x) => x == null || isNaN(x))) return [NaN, NaN];
    const va = a.sd * a.sd / a.n, vb = b.sd * b.sd / b.n;
    if (va + vb === 0) return a.mean === b.mean ? [0, a.n + b.n - 2] : [NaN, NaN];
    const dof = (va + vb) ** 2 / ((va ? va * va / (a.n - 1) : 0) + (vb ? vb * vb / (b.n - 1) : 0));
    return [(b.mean - a.mean) / Math.sqrt(va + vb), dof];
  }
  function contrast(a, b) {
    const ratio = a.mean ? b.mean / a.mean : NaN;
    const [t, dof] = welch(a, b);
    const relSe = a.mean && b.mean && a.n > 1 && b.n > 1
      ? Math.sqrt(a.sd * a.sd / a.n / (a.mean * a.mean) + b.sd * b.sd / b.n / (b.mean * b.mean)) : NaN;
    return {ratio: ratio, ci: isNaN(dof) ? NaN : Math.abs(ratio) * tq(dof) * relSe, t: t, dof: dof};
  }

  // -- formatting --------------------------------------------------------------------------------
  const fmt = (x, digits) => (x == null || isNaN(x) ? "n/a" : Number(x).toPrecision(digits || 4));
  const fmtCi = (m, h) => (isNaN(h) ? fmt(m) : `${fmt(m)} ± ${fmt(h, 2)}`);
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
  const day = (iso) => (iso || "").replace("T", " ").replace("+00:00", "").slice(0, 16);
  const runLink = (r, text) => (r.report ? `<a href="${esc(r.report)}">${esc(text)}</a>` : esc(text));
  function seriesName(s, several) {
    const e = DATA.engines[s.engine];
    return several ? `${e.title} · ${day(DATA.runs[s.run].started)}` : e.title;
  }

  // -- state: the URL hash -----------------------------------------------------------------------
  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const list = (k) => (p.get(k) ? p.get(k).split(",").filter(Boolean) : null);
    state = {experiment: p.get("experiment"), host: p.get("host"), metric: p.get("metric"), base: p.get("base"),
             cbase: p.get("cbase"), runs: list("runs"), engines: list("engines"), phases: list("phases")};
  }
  function writeHash() {
    const p = new URLSearchParams();
    for (const k of ["experiment", "host", "cbase", "metric", "base"]) if (state[k] != null && state[k] !== "") p.set(k, state[k]);
    for (const k of ["runs", "engines", "phases"]) if (state[k]) p.set(k, state[k].join(","));
    history.replaceState(null, "", "#" + p.toString());
  }

  // -- what the selection holds ------------------------------------------------------------------
  const runsOf = (experiment, host) => DATA.runs.map((r, i) => i)
    .filter((i) => DATA.runs[i].experiment === experiment && DATA.hosts[DATA.runs[i].host] === host);

  function resolve() {
    const experiments = Object.keys(DATA.experiments);
    const newestFirst = DATA.runs.map((r, i) => i).reverse();
    if (!experiments.includes(state.experiment)) {
      const newest = newestFirst.find((i) => DATA.experiments[DATA.runs[i].experiment]);
      state.experiment = DATA.runs[newest].experiment;
    }
    const exp = DATA.experiments[state.experiment];
    const hosts = [...new Set(newestFirst.filter((i) => DATA.runs[i].experiment === state.experiment)
      .map((i) => DATA.hosts[DATA.runs[i].host]))];
    if (!hosts.includes(state.host)) state.host = hosts[0];
    const metricIds = exp.metrics.map((m) => DATA.metrics[m].id);
    if (!metricIds.includes(state.metric)) state.metric = DATA.metrics[exp.default].id;
    const metric = exp.metrics[metricIds.indexOf(state.metric)];
    const runs = runsOf(state.experiment, state.host);
    const present = (run, engine, variant) => (cellAt(run, engine, variant, metric) !== undefined);
    const engines = new Set(), variants = new Set(), inRuns = new Set(runs);
    for (let i = 0; i < cells.run.length; i++) {
      if (cells.metric[i] === metric && inRuns.has(cells.run[i])) {
        engines.add(cells.engine[i]);
        variants.add(cells.variant[i]);
      }
    }
    const engineKeys = [...engines].sort((a, b) => a - b).map((e) => DATA.engines[e].key);
    const variantNames = [...variants].sort((a, b) => a - b).map((v) => DATA.variants[v].name);
    if (!state.engines || !state.engines.some((e) => engineKeys.includes(e))) state.engines = engineKeys;
    state.engines = state.engines.filter((e) => engineKeys.includes(e));
    if (!state.phases || !state.phases.some((v) => variantNames.includes(v))) state.phases = variantNames;
    state.phases = state.phases.filter((v) => variantNames.includes(v));
    const runIds = runs.map((i) => DATA.runs[i].id);
    if (state.runs) state.runs = state.runs.filter((r) => runIds.includes(r));
    if (state.runs && !state.runs.length) state.runs = null;
    const selectedEngines = state.engines.map((e) => engineIndex.get(e));
    const selectedVariants = state.phases.map((v) => variantIndex.get(v));
    // Bars: one series per engine and run; by default each engine's newest finished run.
    const series = [];
    if (state.runs) {
      for (const id of state.runs) {
        const run = runs.find((i) => DATA.runs[i].id === id);
        for (const e of selectedEngines) if (selectedVariants.some((v) => present(run, e, v))) series.push({run: run, engine: e});
      }
    } else {
      for (const e of selectedEngines) {
        const run = [...runs].reverse().find((i) => FINISHED.includes(DATA.runs[i].status)
          && selectedVariants.some((v) => present(i, e, v)));
        if (run !== undefined) series.push({run: run, engine: e});
      }
    }
    const keyOf = (s) => `${DATA.runs[s.run].id}:${DATA.engines[s.engine].key}`;
    let base = series.find((s) => keyOf(s) === state.base)
      || series.find((s) => DATA.engines[s.engine].key === state.base);
    if (!base) state.base = "";
    return {exp, hosts, metricIds, metric, runs, engineKeys, variantNames, series, base, keyOf,
            selectedVariants, selectedEngines};
  }

  // -- controls ----------------------------------------------------------------------------------
  function fillSelect(el, options, value) {
    el.innerHTML = options.map(([v, text]) => `<option value="${esc(v)}"${v === value ? " selected" : ""}>${esc(text)}</option>`).join("");
  }
  function fillChecks(el, options, checked, name) {
    el.innerHTML = options.map(([v, text]) => `<label><input type="checkbox" name="${name}" value="${esc(v)}"${checked.includes(v) ? " checked" : ""}> ${esc(text)}</label>`).join("");
  }
  function controls(sel) {
    fillSelect($("experiment"), Object.keys(DATA.experiments).sort().map((e) => [e, e]), state.experiment);
    fillSelect($("host"), sel.hosts.map((h) => [h, h]), state.host);
    fillSelect($("metric"), sel.exp.metrics.map((m) => [DATA.metrics[m].id, DATA.metrics[m].title]), state.metric);
    const several = new Set(sel.series.map((s) => s.engine)).size < sel.series.length;
    fillSelect($("base"), [["", "none: absolute values"]].concat(sel.series.map((s) => [sel.keyOf(s), seriesName(s, true)])),
      sel.base ? sel.keyOf(sel.base) : "");
    $("runs-newest").checked = !state.runs;
    $("runs-chosen").checked = !!state.runs;
    fillChecks($("runs"), [...sel.runs].reverse().map((i) => {
      const r = DATA.runs[i];
      return [r.id, `${day(r.started)} ${r.id.slice(-6)} ${r.status}${r.params ? " " + r.params : ""}`];
    }), state.runs || [], "run");
    fillChecks($("engines"), sel.engineKeys.map((e) => [e, DATA.engines[engineIndex.get(e)].title]), state.engines, "engine");
    fillChecks($("phases"), sel.variantNames.map((v) => [v, v]), state.phases, "phase");
    return several;
  }
  function onControls(event) {
    const t = event.target;
    const checked = (name) => [...document.querySelectorAll(`input[name=${name}]:checked`)].map((x) => x.value);
    if (t.id === "experiment") Object.assign(state, {experiment: t.value, host: null, metric: null, runs: null, engines: null, phases: null, base: ""});
    else if (t.id === "host") Object.assign(state, {host: t.value, runs: null});
    else if (t.id === "metric") state.metric = t.value;
    else if (t.id === "base") state.base = t.value;
    else if (t.id === "compare-base") state.cbase = t.value;
    else if (t.name === "runs-mode") state.runs = t.value === "chosen" ? checked("run") : null;
    else if (t.name === "run") { state.runs = checked("run"); if (!state.runs.length) state.runs = null; }
    else if (t.name === "engine") state.engines = checked("engine");
    else if (t.name === "phase") state.phases = checked("phase");
    render();
  }

  // -- figures and tables ------------------------------------------------------------------------
  const LAYOUT = {template: "plotly_white", height: 440, margin: {l: 70, r: 20, t: 50, b: 90}, legend: {orientation: "h", y: -0.25}};
  const CONFIG = {displaylogo: false, responsive: true};

  function barView(sel, several) {
    const metric = DATA.metrics[sel.metric];
    const variants = sel.selectedVariants.filter((v) => sel.series.some((s) => (cellAt(s.run, s.engine, v, sel.metric) !== undefined)));
    const x = variants.map((v) => DATA.variants[v].name);
    const rows = [];
    const traces = sel.series.map((s) => {
      const y = [], err = [], links = [], text = [];
      for (const v of variants) {
        const i = cellAt(s.run, s.engine, v, sel.metric);
        const b = sel.base ? cellAt(sel.base.run, sel.base.engine, v, sel.metric) : undefined;
        const own = i === undefined ? null : stat(i);
        const vs = own && b !== undefined ? contrast(stat(b), own) : null;
        y.push(own ? (sel.base ? (vs ? vs.ratio : null) : own.mean) : null);
        err.push(own ? (sel.base ? (vs ? vs.ci : null) : own.ci) : null);
        links.push(DATA.runs[s.run].report);
        text.push(DATA.runs[s.run].id);
        if (own) rows.push({s: s, v: v, own: own, vs: vs});
      }
      const e = DATA.engines[s.engine];
      return {type: "bar", name: seriesName(s, several), x: x, y: y, marker: {color: e.color},
              error_y: {type: "data", array: err, visible: true}, customdata: links, text: text, textposition: "none",
              meta: e.key, hovertemplate: `${esc(seriesName(s, true))} %{x}: %{y:.4g}<br>run %{text}<extra></extra>`};
    });
    const unit = sel.base ? `ratio to ${seriesName(sel.base, true)}` : metric.unit;
    const layout = Object.assign({}, LAYOUT, {barmode: "group", yaxis: {title: {text: unit}}, xaxis: {type: "category"},
      title: {text: `${state.experiment}: ${metric.title}${sel.base ? " relative to the base" : ""} (error bars: 95% CI)`},
      shapes: sel.base ? [{type: "line", xref: "paper", x0: 0, x1: 1, y0: 1, y1: 1, line: {dash: "dot", color: "#555"}}] : []});
    const runsShown = [...new Set(sel.series.map((s) => s.run))];
    $("bar-links").innerHTML = runsShown.length ? "Reports of these runs: " + runsShown.map((i) => {
      const r = DATA.runs[i];
      return `${runLink(r, r.id)}${r.report ? "" : " (no report folder lists it)"}`;
    }).join(", ") : "Nothing measured for this selection.";
    table(rows, sel, metric);
    return {traces, layout};
  }

  function table(rows, sel, metric) {
    const head = ["engine", "server version", "run", "started", "phase / test", `mean ± 95% CI (${metric.unit})`, "n",
      sel.base ? "ratio to base ± 95% CI" : null, "image", "benchlib (git)", "parameters"]
      .filter((h) => h !== null);
    const body = rows.map(({s, v, own, vs}) => {
      const r = DATA.runs[s.run], e = DATA.engines[s.engine];
      const ver = versionOf.get(`${s.run}|${s.engine}`) || [];
      const cols = [esc(e.title), esc(ver[2] || ""), runLink(r, r.id), esc(day(r.started)), esc(DATA.variants[v].name),
        `<span class="num">${esc(fmtCi(own.mean, own.ci))}</span>`, own.n,
        sel.base ? esc(vs ? fmtCi(vs.ratio, vs.ci) : "no base figure") : null,
        esc(ver[3] ? `${ver[3]} (${ver[4]})` : ""), esc(`${r.benchlib} (${r.git})`), esc(r.params)].filter((c) => c !== null);
      return `<tr data-engine="${esc(e.key)}" data-variant="${esc(DATA.variants[v].name)}" data-run="${esc(r.id)}">${cols.map((c) => `<td>${c}</td>`).join("")}</tr>`;
    });
    $("cells").innerHTML = `<tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${body.join("")}`;
  }

  function historyFigure(sel) {
    const metric = DATA.metrics[sel.metric];
    const finished = sel.runs.filter((i) => FINISHED.includes(DATA.runs[i].status));
    const traces = [];
    const DASHES = ["solid", "dot", "dash", "longdash", "dashdot", "longdashdot"];  // phases apart, engines by colour
    for (const e of sel.selectedEngines) {
      for (const [position, v] of sel.selectedVariants.entries()) {
        const bySeries = new Map();  // measuring parameters -> points: runs that differ there are other series
        for (const run of finished) {
          const i = cellAt(run, e, v, sel.metric);
          if (i === undefined) continue;
          const r = DATA.runs[run];
          if (!bySeries.has(r.measuring)) bySeries.set(r.measuring, []);
          bySeries.get(r.measuring).push({run: run, i: i});
        }
        for (const points of bySeries.values()) {
          const params = DATA.runs[points[0].run].params;
          const engine = DATA.engines[e];
          traces.push({type: "scatter", mode: "lines+markers", meta: engine.key,
            name: `${engine.title} · ${DATA.variants[v].name}${params ? " · " + params : ""}`,
            x: points.map((p) => DATA.runs[p.run].started), y: points.map((p) => stat(p.i).mean),
            error_y: {type: "data", array: points.map((p) => stat(p.i).ci), visible: true},
            line: {color: engine.color, dash: DASHES[position % DASHES.length]}, customdata: points.map((p) => DATA.runs[p.run].report),
            text: points.map((p) => {
              const r = DATA.runs[p.run], ver = versionOf.get(`${p.run}|${e}`) || [];
              return `run ${r.id}<br>${esc(ver[2] || "version unknown")}<br>benchlib ${esc(r.benchlib)} git ${esc(r.git)}`;
            }),
            hovertemplate: "%{y:.4g} " + esc(metric.unit) + "<br>%{text}<extra>%{fullData.name}</extra>"});
        }
      }
    }
    const layout = Object.assign({}, LAYOUT, {title: {text: `${state.experiment} on ${state.host}: ${metric.title} over time`},
      yaxis: {title: {text: metric.unit}}, xaxis: {type: "date"}, showlegend: true});
    return Plotly.react($("history"), traces, layout, CONFIG);
  }

  function changesTable() {
    $("pairing").textContent = `Pairing: ${DATA.pairing_rule}. Listed: pairs judged better or worse by benchlib's one ` +
      `verdict rule (Welch's t test on the repetitions, two-sided 5%, then a change of more than ` +
      `${Math.round(DATA.threshold * 1000) / 10}%), newest first. ` +
      "`benchlib changes` prints the same list of the engine's cost and exits 3 on a regression.";
    const rows = DATA.changes.filter((c) => DATA.runs[c.to].experiment === state.experiment
      && DATA.hosts[DATA.runs[c.to].host] === state.host).sort((a, b) => b.to - a.to);
    const head = ["when", "change", "engine", "phase / test", "metric", "ratio ± 95% CI", "from → to", "versions", "benchlib (git)", "Welch t (dof)"];
    const body = rows.map((c) => {
      const a = DATA.runs[c.from], b = DATA.runs[c.to], m = DATA.metrics[c.metric], e = DATA.engines[c.engine];
      return `<tr class="change" data-engine="${esc(e.key)}" data-direction="${c.direction}"><td>${esc(day(b.started))}</td>` +
        `<td class="${c.direction}">${c.direction}</td><td>${esc(e.title)}</td><td>${esc(DATA.variants[c.variant].name)}</td>` +
        `<td>${esc(m.title)}</td><td class="num">${esc(fmtCi(c.ratio, c.ratio_ci95))}</td>` +
        `<td class="num">${esc(fmt(c.base_mean))} → ${esc(fmt(c.mean))}</td>` +
        `<td>${esc(c.from_version || "?")} → ${esc(c.to_version || "?")}</td>` +
        `<td>${runLink(a, a.git)} → ${runLink(b, b.git)}${b.params ? `<div class="muted">${esc(b.params)}</div>` : ""}</td>` +
        `<td class="num">${esc(fmt(c.welch_t, 3))} (${esc(fmt(c.welch_dof, 2))})</td></tr>`;
    });
    $("changes").innerHTML = rows.length ? `<tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${body.join("")}`
      : "<tr><td>No change judged better or worse between consecutive runs here.</td></tr>";
  }

  // -- the comparison: findings rows against a base engine (DATA.compare) --------------------------
  const DASH = "–";
  function compareView(sel) {
    const c = DATA.compare[`${state.experiment}|${DATA.hosts.indexOf(state.host)}`];
    if (!c) {
      $("compare-base").innerHTML = "";
      $("compare-note").textContent = "No finished run here to compare engines in.";
      $("compare-table").innerHTML = "";
      return null;
    }
    const engines = Object.keys(c.runs).map(Number).sort((a, b) => a - b);  // catalog order: the first is the default base
    let base = engines.find((e) => DATA.engines[e].key === state.cbase);
    if (base === undefined) base = engines[0];
    state.cbase = DATA.engines[base].key;
    fillSelect($("compare-base"), engines.map((e) => [DATA.engines[e].key, DATA.engines[e].title]), state.cbase);
    const all = c.rows.filter((r) => r[1] === base);
    const chosen = all.filter((r) => sel.selectedVariants.includes(r[2]));
    const rows = chosen.length ? chosen : all;
    const variants = [...new Set(rows.map((r) => r[2]))].sort((a, b) => a - b);
    const others = engines.filter((e) => e !== base && rows.some((r) => r[0] === e));
    const metric = DATA.metrics[c.metric], baseTitle = DATA.engines[base].title;
    $("compare-note").textContent = `${metric.title}: each engine's newest finished run here against ${baseTitle}'s ` +
      `(95% CI; open marker: ${DATA.verdicts.filter((v) => !v.decided).map((v) => v.words).join(", ")}). ` +
      "Click a cell for its raw figures.";
    const at = new Map(rows.map((r) => [`${r[0]}|${r[2]}`, r]));
    const link = (e, v) => {
      const runs = [c.runs[e], c.runs[base]].map((i) => DATA.runs[i].id);
      const p = new URLSearchParams({experiment: state.experiment, host: state.host, cbase: state.cbase,
        metric: metric.id, base: `${runs[1]}:${state.cbase}`, runs: [...new Set(runs)].join(","),
        engines: [DATA.engines[e].key, state.cbase].join(","), phases: DATA.variants[v].name});
      return "#" + p.toString();
    };
    const head = `<tr><th>engine / ${esc(baseTitle)}</th>${variants.map((v) => `<th>${esc(DATA.variants[v].name)}</th>`).join("")}</tr>`;
    const body = others.map((e) => `<tr data-engine="${esc(DATA.engines[e].key)}"><th>${esc(DATA.engines[e].title)}</th>` +
      variants.map((v) => {
        const r = at.get(`${e}|${v}`);
        if (!r) return `<td>${DASH}</td>`;
        const verdict = DATA.verdicts[r[6]];
        const ci = r[4] == null ? "" : ` (${fmt(r[4], 3)}${DASH}${fmt(r[5], 3)})`;
        return `<td class="verdict-${verdict.key.replace("/", "")}" data-verdict="${verdict.key}"><a href="${link(e, v)}">` +
          `${fmt(r[3], 3)}x${ci}</a>${verdict.decided ? ` <span class="muted">${esc(verdict.key === "same" ? verdict.words : verdict.key)}</span>` : ` <span class="muted">${esc(verdict.words)}</span>`}</td>`;
      }).join("") + "</tr>");
    $("compare-table").innerHTML = head + body.join("");
    const SYMBOLS = ["circle", "diamond", "square", "triangle-up", "triangle-down", "star", "hexagon", "cross"];
    const traces = variants.map((v, i) => {
      const points = others.map((e) => at.get(`${e}|${v}`)).filter((r) => r && r[3] > 0);
      return {type: "scatter", mode: "markers", orientation: "h", name: DATA.variants[v].name,
        x: points.map((r) => r[3]), y: points.map((r) => DATA.engines[r[0]].title),
        error_x: {type: "data", symmetric: false, array: points.map((r) => (r[5] == null ? 0 : r[5] - r[3])),
                  arrayminus: points.map((r) => (r[4] == null ? 0 : r[3] - r[4]))},
        marker: {size: 10, symbol: points.map((r) => SYMBOLS[i % SYMBOLS.length] + (DATA.verdicts[r[6]].decided ? "" : "-open"))},
        customdata: points.map((r) => DATA.verdicts[r[6]].words),
        hovertemplate: `%{y}, ${esc(DATA.variants[v].name)}: %{x:.3g}x ${esc(baseTitle)} (%{customdata})<extra></extra>`};
    });
    const layout = Object.assign({}, LAYOUT, {height: 140 + 44 * Math.max(others.length, 1), scattermode: "group",
      margin: {l: 140, r: 20, t: 40, b: 50}, legend: {orientation: "h", y: 1.08},
      xaxis: {type: "log", title: {text: `× ${baseTitle} (log scale)`}},
      yaxis: {type: "category", categoryorder: "array", categoryarray: others.map((e) => DATA.engines[e].title).reverse()},
      shapes: [{type: "line", yref: "paper", y0: 0, y1: 1, x0: 1, x1: 1, line: {dash: "dot", color: "#555"}}]});
    return {traces, layout};
  }
  function openRaw(event) {
    const a = event.target.closest("a");
    if (!a || !a.hash) return;
    event.preventDefault();
    location.hash = a.hash;  // hashchange redraws the raw figures for that cell
    $("raw").scrollIntoView();
  }

  // Controls and tables need no plotly.js: they are filled and painted before its 1.2 MB are
  // evaluated (loadPlotly), the figures after.
  function renderTables() {
    const sel = resolve();
    const several = controls(sel);
    writeHash();
    changesTable();
    return {sel, compare: compareView(sel), bars: barView(sel, several)};
  }
  function drawFigures(view) {
    if (view.compare) Plotly.react($("compare"), view.compare.traces, view.compare.layout, CONFIG);
    else Plotly.purge($("compare"));
    const bars = Plotly.react($("bars"), view.bars.traces, view.bars.layout, CONFIG);
    // The history is below the fold and the dearest figure to draw: after the bars are painted.
    const history = bars.then(() => new Promise((drawn) => setTimeout(() => historyFigure(view.sel).then(drawn), 0)));
    return {bars, history};
  }
  const render = () => drawFigures(renderTables());

  function openReport(event) {
    const link = event.points && event.points[0] && event.points[0].customdata;
    if (link) window.location.href = link;
  }

  if (!DATA.runs.length || !Object.keys(DATA.experiments).length) {
    $("controls").hidden = true;
    $("top-controls").hidden = true;
    document.body.dataset.ready = "empty";
    return;
  }
  readHash();
  $("controls").addEventListener("change", onControls);
  $("top-controls").addEventListener("change", onControls);
  $("compare-table").addEventListener("click", openRaw);
  window.addEventListener("hashchange", () => { readHash(); render(); });
  // Times from navigation start (what scripts/bench_explorer.py reports): controls and tables
  // filled, bars drawn, the history drawn.
  function loadPlotly(then) {
    // Once the parser has read all of its text (it follows this script), after the next frame:
    // the browser paints the tables first (requestAnimationFrame runs before a paint, the timeout
    // after it). An inline script element runs as it is appended.
    const evaluate = () => requestAnimationFrame(() => setTimeout(() => {
      const script = document.createElement("script");
      script.textContent = $("plotly-js").textContent;
      document.head.appendChild(script);
      then();
    }, 0));
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", evaluate);
    else evaluate();
  }

  const first = renderTables();
  document.body.dataset.tablesMs = Math.round(performance.now());
  loadPlotly(() => {
    const drawn = drawFigures(first);
    drawn.bars.then(() => {
      document.body.dataset.firstViewMs = Math.round(performance.now());
      $("bars").on("plotly_click", openReport);
    });
    drawn.history.then(() => {
      document.body.dataset.renderMs = Math.round(performance.now());
      $("history").on("plotly_click", openReport);
      const done = (painted) => {
        if (painted) document.body.dataset.firstPaintMs = Math.round(painted.startTime);
        document.body.dataset.ready = "yes";
      };
      const painted = performance.getEntriesByName("first-contentful-paint")[0];  // tables on screen, or not yet
      if (painted) return done(painted);
      // On a loaded host the paint entry can be recorded after the figures are drawn: wait for it
      // (buffered, so one already recorded is seen), at most 5 s.
      const observer = new PerformanceObserver((list) => {
        const entry = list.getEntriesByName("first-contentful-paint")[0];
        if (entry) { observer.disconnect(); done(entry); }
      });
      observer.observe({type: "paint", buffered: true});
      setTimeout(() => { if (document.body.dataset.ready !== "yes") { observer.disconnect(); done(null); } }, 5000);
    });
  });
})();
