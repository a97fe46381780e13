"""Seed 000, "Comparing SQL engines by CPU instructions for simple DML": per engine, create
`demo` (server-generated primary key, float value), then measure a sleep baseline, an insert of
N generated rows in two transactions, `update demo set value = value + 1`,
`select count(value)` and a delete of all rows. Each engine's SQL is in its engine module."""
from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..engines import PK_KINDS, get_engine
from ..errors import BenchlibError
from ..lifecycle import Instance, start
from ..measure import Meter, Run, SettlePolicy
from ..validation import boolean, choice, engine_selection, non_negative_number, positive_int

EXPERIMENT = "dml"
PHASES = ("sleep", "insert", "update", "select", "delete")


@dataclass(frozen=True)
class DmlParams:
    engines: list[str]
    rows: int
    repetitions: int
    sleep_seconds: float
    vacuum: bool
    pk_kind: str
    max_settle_seconds: float
    skipped: dict[str, str] = field(default_factory=dict)

    @classmethod
    def validate(cls, *, engines: Any, rows: Any, repetitions: Any = 1, sleep_seconds: Any = 10,
                 vacuum: Any = True, pk_kind: Any = "uuid", max_settle_seconds: Any = 60) -> "DmlParams":
        rows = positive_int("rows", rows, minimum=2)  # two transactions of rows/2
        repetitions = positive_int("repetitions", repetitions)
        sleep_seconds = non_negative_number("sleep_seconds", sleep_seconds)
        vacuum = boolean("vacuum", vacuum)
        pk_kind = choice("pk_kind", pk_kind, PK_KINDS)
        max_settle_seconds = non_negative_number("max_settle_seconds", max_settle_seconds)
        runnable, skipped = engine_selection(engines)
        return cls(runnable, rows, repetitions, sleep_seconds, vacuum, pk_kind, max_settle_seconds, skipped)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


class DmlRunError(BenchlibError):
    pass


@dataclass
class DmlResult:
    run_id: str
    params: DmlParams
    errors: dict[str, str]


def _rows(instance: Instance, conn) -> float:
    return float(instance.query("select count(*) from demo", conn)[0][0])


def measure_engine(meter: Meter, instance: Instance, params: DmlParams, tick: Callable[[str], None]) -> None:
    """The article's phases on one running engine."""
    dml = instance.engine.dml
    conn = instance.connect()
    check_conn = instance.connect()  # checks run on their own session, after the windows
    count = lambda: _rows(instance, check_conn)  # noqa: E731

    def run(*statements: str | None) -> None:
        for sql in statements:
            if sql:
                instance.query(sql, conn)

    vacuum = dml.vacuum if params.vacuum else None
    for sql in dml.create_statements(params.pk_kind):
        instance.query(sql, conn)

    tick("sleep")
    sleep_action = (lambda: run(dml.sleep(params.sleep_seconds))) if dml.sleep else None
    meter.baseline(params.sleep_seconds, action=sleep_action)

    first = params.rows // 2
    tick("insert")
    with meter.phase("insert", check=count):
        run(dml.generate_rows(first), dml.generate_rows(params.rows - first), vacuum)
    tick("update")
    with meter.phase("update", check=count):
        run("update demo set value = value + 1", vacuum)
    tick("select")
    counted: list[float] = []
    with meter.phase("select", check=lambda: counted[0]):
        counted.append(float(instance.query("select count(value) from demo", conn)[0][0]))
    tick("delete")
    with meter.phase("delete", check=count):
        run(dml.delete_all, vacuum)


def run_dml(params: DmlParams, *, notebook: str | None = None, progress: bool = True, store=None) -> DmlResult:
    """Run every repetition for every engine (repetition-major, so drift over time spreads
    evenly over engines), each on a fresh engine start. Rows land in the store window by
    window; an engine that fails is recorded and the others still run."""
    # Plain tqdm on stderr: works in JupyterLab and papermill alike, and reports drop stderr.
    from tqdm.std import tqdm

    settle = SettlePolicy(max_seconds=params.max_settle_seconds)
    errors: dict[str, str] = {}
    total = params.repetitions * len(params.engines) * len(PHASES)
    with Run(EXPERIMENT, params.as_record(), notebook=notebook, store=store) as run:
        bar = tqdm(total=total, disable=not progress, desc="dml", unit="phase", file=sys.stderr)
        try:
            for repetition in range(1, params.repetitions + 1):
                for key in params.engines:
                    def tick(phase: str, key=key, repetition=repetition) -> None:
                        bar.set_postfix_str(f"{key} rep {repetition} {phase}")
                        bar.update(1)
                    try:
                        with start(key, run_id=run.run_id) as instance:
                            meter = run.meter(instance, repetition, settle)
                            measure_engine(meter, instance, params, tick)
                    except BenchlibError as exc:
                        errors[f"{key} repetition {repetition}"] = str(exc)
                    except Exception as exc:  # a driver or SQL error: keep the other engines going
                        errors[f"{key} repetition {repetition}"] = f"{type(exc).__name__}: {exc}"
        finally:
            bar.close()
        if errors:  # Run.__exit__ marks the run failed with this message
            raise DmlRunError(f"run {run.run_id} failed for {len(errors)} engine start(s) (measured "
                              f"phases are kept): " + "; ".join(f"{k}: {v}" for k, v in errors.items()))
    return DmlResult(run.run_id, params, errors)


# ---------------------------------------------------------------------------------------------
# Reporting


class DmlReport:
    """Everything the DML notebook shows, computed from the store (never from memory), so a
    report can be rebuilt for any past run: `DmlReport(run_id)`."""

    def __init__(self, run_id: str, store=None):
        from .. import results

        self.run_id = run_id
        self.store = store
        self.info = results.run_info(run_id, store)
        self.measurements = results.measurements(run_id, store)
        self.instances = results.instances(run_id, store)
        self.metric, self.unit, self.metric_explanation = results.cost_metric(self.measurements)
        self.costs = results.phase_costs(self.measurements, self.metric)
        self.summary = results.summarize(self.costs)
        task_clock = results.phase_costs(self.measurements, "task_clock")
        self.summary["task_clock_s"] = results.summarize(task_clock)["value"].to_numpy()
        measured = set(self.summary["engine"])
        self.engines = [e for e in self.info["parameters"].get("engines", []) if e in measured]
        self.engines += sorted(measured - set(self.engines))
        position = {(e, p): i for i, (e, p) in enumerate((e, p) for e in self.engines for p in PHASES)}
        self.summary = (self.summary.assign(_pos=[position[k] for k in zip(self.summary["engine"], self.summary["phase"])])
                        .sort_values("_pos").drop(columns="_pos").reset_index(drop=True))
        # Instructions are shown in billions (Gi), as in seed 000; CPU time in seconds.
        counted = self.metric == "instructions_user"
        self.scale, self.unit, self.unit_label = (1e9, "Gi", "billion instructions (Gi)") if counted else \
            (1.0, "s", "CPU seconds")

    # -- tables ------------------------------------------------------------------------------------
    def _fmt(self, value: float) -> str:
        return "n/a" if value != value else f"{value / self.scale:.3g}{self.unit}"  # value != value: NaN

    def article_table(self):
        """Seed 000's summary layout: per engine and phase, cost / wall seconds."""
        import pandas as pd

        cells = self.summary.assign(cell=[f"{self._fmt(v)} / {w:.3g}s" for v, w in
                                          zip(self.summary["value"], self.summary["wall_s"])])
        table = cells.pivot(index="engine", columns="phase", values="cell")
        table = table.reindex(columns=[p for p in PHASES if p in table.columns], index=self.engines)
        table.index = pd.Index([_title(e) for e in table.index], name="engine")
        return table

    def detail_table(self):
        """Mean per engine and phase with CV, settle window and baseline-subtracted figures."""
        import pandas as pd

        s, scale, unit = self.summary, self.scale, self.unit
        out = pd.DataFrame({
            "engine": [_title(e) for e in s["engine"]], "phase": s["phase"],
            f"phase ({unit})": s["value"] / scale, "CV": s["value_cv"],
            f"settle ({unit})": s["settle_value"] / scale,
            f"phase+settle ({unit})": s["with_settle"] / scale,
            f"phase+settle − idle ({unit})": s["net_with_settle"] / scale,
            "wall (s)": s["wall_s"], "settle wall (s)": s["settle_wall_s"],
            "perf task-clock (s)": s["task_clock_s"], "n": s["n"],
        })
        return (out.style.format("{:.4g}", na_rep="n/a", subset=out.columns[2:-1])
                .format("{:.1%}", na_rep="n/a", subset=["CV"]).hide(axis="index"))

    def provenance_table(self):
        import pandas as pd

        inst = self.instances.drop_duplicates("engine")
        return pd.DataFrame({
            "engine": [_title(e) for e in inst["engine"]], "server version": inst["server_version"],
            "image": inst["image_ref"], "image source": inst["image_source"],
            "image id / digest": [d if isinstance(d, str) else (i[:19] if isinstance(i, str) else "")
                                  for d, i in zip(inst["image_digest"], inst["image_id"])],
            "start-to-ready (s)": inst["startup_seconds"],
        }).style.format("{:.2f}", subset=["start-to-ready (s)"]).hide(axis="index")

    def host_table(self):
        import pandas as pd

        i = self.info
        facts = {
            "run id": i["run_id"], "host": i["hostname"], "CPU": f"{i['cpu_model']} ({i['cpu_cores']} cores)",
            "memory": f"{(i['memory_bytes'] or 0) / 2**30:.1f} GiB", "kernel": i["kernel"], "OS": i["os"],
            "cgroup layout": i["cgroup_layout"], "Docker": i["docker_version"],
            "perf": f"{i['perf_version']}: " + ", ".join(f"{k} {v}" for k, v in i["perf_support"].get("events", {}).items()),
            "benchlib": f"{i['benchlib_version']} (git {str(i['git_sha'])[:10]}{' + local changes' if i['git_dirty'] else ''})",
            "parameters": ", ".join(f"{k}={v}" for k, v in i["parameters"].items() if k != "skipped"),
            "status": i["status"],
        }
        return (pd.DataFrame({"": list(facts), "value": list(facts.values())}).style.hide(axis="index")
                .set_properties(**{"text-align": "left"}))

    def reference_comparison(self, base_engine: str = "postgres"):
        """Cost relative to PostgreSQL per phase: this run's engines, then seed 000's eight
        engines as published (instructions:u there; this run's cost metric here)."""
        import pandas as pd

        from .. import results

        ours = results.ratios_to(self.summary, "value", base_engine).assign(source="this run")
        ref = results.ratios_to(results.reference(), "instructions_gi", base_engine).assign(source="seed 000")
        both = pd.concat([ours, ref], ignore_index=True)
        both = both[(both["engine"] != base_engine) & (both["phase"] != "sleep")]
        both["engine"] = [_title(e) for e in both["engine"]]
        table = both.pivot_table(index=["source", "engine"], columns="phase", values="ratio", sort=False)
        return table.reindex(columns=[p for p in PHASES if p in table.columns]).round(2)

    def timing_table(self):
        """Where the run's wall time went: measured windows versus everything else (engine starts,
        table creation, checks), i.e. the harness overhead."""
        import pandas as pd

        wall = self.measurements[self.measurements["metric"] == "wall_time"]
        measured = wall.groupby("window")["value"].sum()
        total = (self.info["ended_at"] - self.info["started_at"]).total_seconds()
        other = total - measured.sum()
        rows = [(f"measured: {w} windows", measured.get(w, 0.0)) for w in ("baseline", "phase", "settle")]
        rows += [("everything else (starts, set-up, checks)", other), ("run total", total)]
        out = pd.DataFrame(rows, columns=["", "seconds"])
        out["share"] = out["seconds"] / total
        return out.style.format({"seconds": "{:.1f}", "share": "{:.1%}"}).hide(axis="index")

    # -- figures ----------------------------------------------------------------------------------
    def cost_figure(self, value: str = "value", title: str | None = None):
        from ..plots import bars_by_phase

        df = self.summary.assign(v=self.summary[value] / self.scale,
                                 err=self.summary.get(f"{value}_std", 0) / self.scale)
        df = df[df["phase"] != "sleep"] if value.startswith("net") else df
        label = {"value": "phase", "with_settle": "phase + settle", "net_with_settle": "phase + settle − idle"}[value]
        what = "instructions" if self.scale > 1 else "CPU"
        return bars_by_phase(df, "v", error="err", unit=self.unit_label, name=f"dml-{value.replace('_', '-')}",
                             phases=PHASES, title=title or f"Engine {what} per phase ({label})")

    def reference_figure(self):
        from ..plots import bars_by_phase
        from .. import results

        ref = results.reference()
        return bars_by_phase(ref, "instructions_gi", unit="billion instructions (Gi)", log_y=True, phases=PHASES,
                             name="seed000-reference", title="Seed 000 as published: instructions:u per phase "
                                                              "(2M rows, log scale)")

    # -- narrative -------------------------------------------------------------------------------------
    def caveats(self) -> str:
        lines = [f"- **Cost metric:** {self.metric_explanation}."]
        local = self.instances[self.instances["image_source"] == "local-build"]
        for row in local.drop_duplicates("engine").itertuples():
            lines.append(f"- **{_title(row.engine)}** ran from `{row.image_ref}`, {row.image_note}; "
                         f"its version is `{row.server_version}`, not the official image's.")
        skipped = self.info["parameters"].get("skipped") or {}
        for key, reason in skipped.items():
            lines.append(f"- **{_title(key)}** was skipped: {reason}.")
        for key in self.engines:
            note = get_engine(key).report_note
            if note:
                lines.append(f"- **{_title(key)}:** {note}")
        if (self.instances["kind"] == "embedded").any():
            lines.append("- Embedded engines run in the notebook's own process: their cost is that process's CPU "
                         "(the Python driver included), and they have no settle window.")
        if self.info["cgroup_layout"] in ("v1", "hybrid"):
            lines.append("- I/O bytes come from cgroup v1 blkio, which does not see buffered writes flushed later by the "
                         "kernel: on this host they undercount writes, so the report does not chart them.")
        lines.append(f"- Rows: {self.info['parameters'].get('rows'):,}; the article used 2,000,000 on an 8-vCPU "
                     "Xeon host, so absolute figures differ; compare ratios.")
        return "\n".join(lines)


def _title(key: str) -> str:
    from ..plots import engine_title

    return engine_title(key)
