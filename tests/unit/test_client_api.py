"""The client-API workload's parameters, dialects and mix, without Docker: bad input fails naming
the value before anything starts."""
import sqlite3
from dataclasses import replace

import pytest
import yaml

from benchlib.engines import get_engine
from benchlib.core.errors import ParameterError
from benchlib.containers.lifecycle import start
from benchlib.workloads import client_api
from benchlib.workloads.client_api import contended, dialects, layers

GOOD = dict(engines=["sqlite"], layers=["driver", "core"], transports=["in-process"], objects=10, orm_batch_size=5,
            repetitions=1, contended_modes=["threads"], contended_workers=4, contended_scale=0.01,
            max_repetitions=1, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0, max_settle_seconds=0)


def params(**changes):
    return {**GOOD, **changes}


def test_good_parameters_validate():
    p = client_api.validate_parameters(params())
    assert p.engines == ["sqlite"] and p.layers == ["driver", "core"] and p.objects == 10
    # FerretDB and MongoDB are in the catalog: no caveat may claim the MongoDB wire protocol is absent.
    assert not any("MongoDB wire protocol" in reason for reason in p.skipped.values())


@pytest.mark.parametrize("changes, message", [
    (dict(layers=["driver", "hibernate"]), "layers must be a non-empty list of driver, .* got 'hibernate'"),
    (dict(layers=[]), "layers must be a non-empty list"),
    (dict(transports=["carrier-pigeon"]), "transports must be a non-empty list of in-process, tcp, unix .* got 'carrier-pigeon'"),
    (dict(transports=["unix"]), "sqlite runs in-process only"),
    (dict(engines=["postgres"], transports=["in-process"]), "postgres is a server"),
    (dict(contended_modes=["fibers"]), "contended_modes must be a list of threads, processes .* got 'fibers'"),
    (dict(objects=0), "objects must be an integer >= 1 and <= 100,000, got 0"),
    (dict(objects=-5), "got -5"),
    (dict(objects=10**7), "objects must be an integer >= 1 and <= 100,000, got 10000000"),
    (dict(orm_batch_size=0), "orm_batch_size must be an integer >= 1, got 0"),
    (dict(repetitions=0), "repetitions must be an integer >= 1, got 0"),
    (dict(contended_workers=0), "contended_workers must be an integer >= 1, got 0"),
    (dict(contended_scale=0), "contended_scale must be a number > 0"),
    (dict(contended_scale=-1.0), "got -1.0"),
    (dict(contended_scale=True), "got True"),
])
def test_bad_input_names_the_value(changes, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        client_api.validate_parameters(params(**changes))


def test_unix_socket_on_a_server_without_one_is_rejected():
    postgres = get_engine("postgres")
    no_socket = replace(postgres, server=replace(postgres.server, socket_setting=None))
    assert client_api.engine_transports(postgres, ["tcp", "unix"]) == ["tcp", "unix"]
    with pytest.raises(ParameterError, match="transport 'unix' asked for postgres, which has no Unix socket"):
        client_api.engine_transports(no_socket, ["tcp", "unix"])


def test_start_refuses_a_unix_socket_for_an_embedded_engine_before_starting():
    with pytest.raises(ParameterError, match="sqlite has no Unix socket"):
        start("sqlite", unix_socket=True)


def test_every_server_in_the_catalog_declares_its_socket():
    for key in ("postgres", "mysql", "mariadb", "mariadb-myrocks"):
        server = get_engine(key).server
        assert server.socket_setting is not None and server.socket_file, key
        assert server.command(server.socket_setting("/run/x")), key  # reaches the start command


def test_the_object_has_24_members_and_every_dialect_creates_its_table():
    values = layers.object_values(7)
    assert len(values) == len(dialects.COLUMNS) == 24
    d = client_api.dialect_for(get_engine("sqlite"))
    conn = sqlite3.connect(":memory:")
    conn.execute(d.create_table())
    conn.execute(d.insert, (*values[:-1], d.timestamp(values[-1])))
    assert conn.execute(d.select, (7,)).fetchone()[:2] == (7, 49)
    for family in ("postgres", "mysql", "duckdb"):
        ddl = dialects.DIALECTS[family].create_table()
        assert ddl.count(",") == 23 and "primary key" in ddl


def test_prepared_statements_only_where_the_driver_has_them():
    assert client_api.layer_skip_reason("postgres", "prepared") is None
    assert "PyMySQL" in client_api.layer_skip_reason("mysql", "prepared")
    assert client_api.layer_skip_reason("sqlite", "driver") is None


def test_contended_mix_keeps_seed_002s_proportions():
    assert contended.inserts_per_worker(1.0) == 600  # 19,200 / 32
    per_worker = contended.inserts_per_worker(0.05)
    assert per_worker % 3 == 0 and per_worker == 30
    assert contended.inserts_per_worker(1e-6) == 3
    # ODB's threads driver: 32 workers x 200 iterations reproduce the seed's four counts exactly.
    iterations = 32 * 600 // contended.OBJECTS_PER_ITERATION
    assert {k: iterations * n for k, n in contended.PER_ITERATION.items()} == contended.SEED_COUNTS


# -- findings: verdict rules on rows, the chart, the rendered findings approved as a snapshot -------
import json  # noqa: E402
import datetime as dt  # noqa: E402

import pandas as pd  # noqa: E402

from benchlib.data import findings as F  # noqa: E402
from benchlib.workloads.client_api import analysis  # noqa: E402

# µs per load: (wall, client CPU, server CPU) for a server, (wall, in-process CPU) for an embedded engine.
PG = {"driver": (330, 110, 230), "prepared": (290, 180, 100), "core": (560, 400, 165), "orm_object": (1050, 800, 250)}
SQLITE = {"driver": (30, 28), "core": (200, 195), "orm_object": (680, 670)}
MYSQL = {"driver": (400, 250, 120), "c_driver": (260, 90, 120), "c_prepared": (280, 100, 110)}
SPREAD = (1.0, 1.02, 0.98)  # each repetition's factor: CIs exist and are known


def _windows(engine, transport, layers, operations=("load",), objects=100, spread=SPREAD):
    """Per repetition, the harness window and each layer's windows, in the store's shape."""
    out = []
    for repetition, f in enumerate(spread, 1):
        out.append({"engine": engine, "transport": transport, "layer": "harness", "phase": "load", "objects": 10_000,
                    "repetition": repetition, "loop_s": 0.002, "client_s": 0.012, "server_s": 0.0,
                    "process_s": 0.012})
        for layer, figures in layers.items():
            for operation in operations:
                wall, *cpu = (x * f * objects / 1e6 for x in figures)
                out.append({"engine": engine, "transport": transport, "layer": layer, "phase": operation,
                            "objects": objects, "repetition": repetition, "loop_s": wall,
                            # The window's fixed cost, 10 ms, as the harness window measured it.
                            "client_s": cpu[0] + 0.01 if transport != "in-process" else None,
                            "server_s": cpu[1] if transport != "in-process" else None,
                            "process_s": cpu[0] + 0.01 if transport == "in-process" else None})
    return out


def write_client_api_run(store, windows, run_id="20261201T000000Z-capi00"):
    at = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    engines = list(dict.fromkeys(w["engine"] for w in windows))
    store.write_run({"run_id": run_id, "experiment": "client_api", "notebook": "04-client-api-overhead",
                     "status": "ok", "started_at": at, "ended_at": at + dt.timedelta(minutes=1), "hostname": "host-a",
                     "cpu_model": "Test CPU", "cpu_cores": 2, "cgroup_layout": "v2", "git_sha": "1111111111",
                     "git_dirty": False, "benchlib_version": "0.1.0", "perf_support": "{}",
                     "parameters": json.dumps({"engines": engines, "layers": list(LAYERS_RUN), "orm_batch_size": 25,
                                               "contended_modes": []})})
    for engine in engines:
        store.write_instance({"run_id": run_id, "instance_id": f"{engine}-1", "engine": engine,
                              "kind": "embedded" if engine == "sqlite" else "server", "image_ref": f"{engine}:local",
                              "image_source": "local-build", "server_version": "1.0", "config": "{}",
                              "started_at": at})
    for seq, w in enumerate(windows, 1):
        common = {"run_id": run_id, "instance_id": f"{w['engine']}-1", "engine": w["engine"],
                  "experiment": "client_api", "phase": w["phase"], "repetition": w["repetition"], "window": "phase",
                  "status": "ok", "started_at": at, "ended_at": at, "seq": seq,
                  "labels": json.dumps({"layer": w["layer"], "transport": w["transport"], "objects": w["objects"]})}
        embedded = w["transport"] == "in-process"
        rows = [{**common, "metric": "loop_time", "value": w["loop_s"], "unit": "s", "source": "clock",
                 "scope": "client"},
                {**common, "metric": "wall_time", "value": w["loop_s"] + 0.005, "unit": "s", "source": "clock",
                 "scope": "embedded" if embedded else "server"}]
        if embedded:
            rows.append({**common, "metric": "cpu_time", "value": w["process_s"], "unit": "s", "source": "process",
                         "scope": "embedded"})
        else:
            rows += [{**common, "metric": "cpu_time", "value": w["client_s"], "unit": "s", "source": "rusage",
                      "scope": "client"},
                     {**common, "metric": "cpu_time", "value": w["server_s"], "unit": "s", "source": "cgroup",
                      "scope": "server"}]
        store.append_measurements(run_id, seq, rows)
    store.compact(run_id)
    return run_id


LAYERS_RUN = ("driver", "prepared", "c_driver", "c_prepared", "core", "orm_object")


def _summary(*windows):
    frames = [pd.DataFrame(w) for w in windows]
    m = pd.concat(frames, ignore_index=True)
    per_op = m.assign(seq=range(len(m)))
    for col in ("loop", "client", "server", "process"):
        per_op[f"{col}_us"] = per_op[f"{col}_s"] / per_op["objects"] * 1e6
    per_op["window_overhead_ms"] = 5.0
    per_op["fixed_client_s"] = per_op["fixed_process_s"] = 0.01
    # The harness's fixed cost, as analysis.per_operation subtracts it.
    for col in ("client_us", "process_us"):
        per_op[col] = per_op[col] - (0.01 / per_op["objects"] * 1e6).where(per_op["layer"] != "harness", 0.0)
    return analysis.summarize(per_op)


def test_each_layer_is_judged_against_the_raw_driver_on_the_client_and_the_server():
    tcp_pg = {layer: (wall * 1.3, *cpu) for layer, (wall, *cpu) in PG.items()}
    found = analysis.findings(_summary(_windows("postgres", "unix", PG), _windows("postgres", "tcp", tcp_pg)))
    layers = found[found["kind"] == "layer"].set_index(["layer", "metric"])
    orm_client = layers.loc[("orm_object", "client CPU per operation")]
    assert orm_client["ratio"] == pytest.approx(800 / 110, rel=1e-6) and orm_client["verdict"] == "worse"
    # The same statements reach the server whichever layer sends them: identical spread, ratio 250 / 230.
    assert layers.loc[("orm_object", "server CPU per operation"), "verdict"] == "worse"
    assert layers.loc[("prepared", "server CPU per operation"), "verdict"] == "better"
    assert set(found[found["kind"] == "layer"]["regime"].str.endswith("(unix)")) == {True}  # the most local transport
    tcp = found[found["kind"] == "transport"].iloc[0]
    assert (tcp["ratio"], tcp["verdict"]) == (pytest.approx(1.3), "worse")
    # Seed 002's remote crossed gigabit Ethernet, not a bridge on one host: shown, tested against nothing.
    assert tcp["seed_ratio"] == pytest.approx(410 / 160) and tcp["seed"] == "not_comparable"
    assert found["headline"].sum() <= 5


def test_seed_002s_order_is_judged_on_the_odb_like_layer_with_the_seeds_ratio():
    found = analysis.findings(_summary(_windows("sqlite", "in-process", SQLITE), _windows("postgres", "unix", PG),
                                       _windows("mariadb", "unix", MYSQL)), host=lambda e, b: None)
    order = found[found["kind"] == "order"].set_index("engine")
    # Each side's own ODB-like layer, as seed 002 ran ODB's prepared statements on each (hostile read 42:
    # the raw psycopg driver is not PostgreSQL's ODB; SQLite's driver, which caches its statements, is SQLite's).
    assert dict(order["layer"]) == {"sqlite": "driver", "mariadb": "c_prepared"}
    assert order.loc["sqlite", "ratio"] == pytest.approx(30 / 290) and order.loc["sqlite", "verdict"] == "better"
    assert order.loc["sqlite", "seed_ratio"] == pytest.approx(17 / 65)
    assert order.loc["mariadb", "ratio"] == pytest.approx(280 / 290, rel=1e-6)
    assert "stand-in" in order.loc["mariadb", "caveats"]
    assert order.loc["mariadb", "seed_ratio"] == pytest.approx(55 / 65)  # MySQL's, which MariaDB stands in for
    # With MySQL in the run, MariaDB has no seed figure and no order row of its own.
    both = analysis.findings(_summary(_windows("postgres", "unix", PG), _windows("mysql", "unix", MYSQL),
                                      _windows("mariadb", "unix", MYSQL)))
    assert list(both[both["kind"] == "order"]["engine"]) == ["mysql"]
    sqlite_rows = found[(found["kind"] == "layer") & (found["engine"] == "sqlite")]
    assert set(sqlite_rows["metric"]) == {"in-process CPU per operation"}


def test_the_answer_states_decided_rows_first_layers_before_the_rest():
    found = analysis.findings(_summary(_windows("sqlite", "in-process", SQLITE), _windows("postgres", "unix", PG),
                                       _windows("mariadb", "unix", MYSQL)), host=lambda e, b: None)
    head = found[found["headline"]]
    assert len(head) and head["verdict"].isin(["better", "worse", "same"]).all()
    kinds = list(head["kind"])
    assert kinds == sorted(kinds, key=lambda k: k != "layer")  # the question's rows (layers) lead
    # Hostile read 44 (04 #3): the largest decided saving is stated beside the costs added.
    two = analysis.findings(_summary(_windows("sqlite", "in-process", SQLITE), _windows("postgres", "unix", PG),
                                     _windows("mariadb", "unix", MYSQL)), host=lambda e, b: None, headline_limit=2)
    head = two[two["headline"]]  # by ratio alone: SQLite's ORM 23.9x and core 6.96x, both costs added
    # Hostile read 46b (04 #2): by µs added over the driver, PostgreSQL's ORM client (+690 µs, 7.27x) before
    # SQLite's (+642 µs, 23.9x), and MariaDB's c_driver client (-160 µs) the largest saving.
    assert list(zip(head["engine"], head["layer"], head["verdict"])) == [("postgres", "orm_object", "worse"),
                                                                         ("mariadb", "c_driver", "better")]
    assert list(head["added_us"]) == [pytest.approx(690), pytest.approx(-160)]


def test_the_answer_states_a_layers_microseconds_added_before_its_ratio(tmp_path):
    """Hostile read 46b (04 #2): three of five lines were SQLite's, its ratios large over a 20.9 µs base."""
    from benchlib.data.store import Store
    from benchlib.workloads.client_api import ClientApiReport

    store = Store(tmp_path / "results")
    run_id = write_client_api_run(store, _windows("sqlite", "in-process", SQLITE) + _windows("postgres", "unix", PG))
    lines = ClientApiReport(run_id, store).answer_lines()
    first = next(line for line in lines if "orm_object" in line)
    assert first.startswith("PostgreSQL, load, client CPU, orm_object vs driver (unix): +690 µs per operation")
    assert first.index("+690 µs") < first.index("7.27x")


def test_the_first_screens_seed_line_gives_each_odb_like_row_against_the_seed(tmp_path):
    """Hostile read 46b (04 #5): the first screen had only counts, no seed comparison."""
    from benchlib.data.store import Store
    from benchlib.workloads.client_api import ClientApiReport

    store = Store(tmp_path / "results")
    run_id = write_client_api_run(store, _windows("sqlite", "in-process", SQLITE) + _windows("postgres", "unix", PG)
                                  + _windows("mysql", "unix", MYSQL))
    report = ClientApiReport(run_id, store)
    found = report.counted_findings()
    line = report.seed_line(found)
    order = found[found["kind"] == "order"]
    assert len(order) == 2
    for row in order.to_dict("records"):
        fields = F.fields_of(row, report.phrases)
        assert f"ODB-like {fields['subject']}/PostgreSQL {fields['ratio']} vs seed {fields['seed_text']}x: " \
               f"{F.seed_words(row)}" in line
    assert line.endswith(F.seed_line(found, report.seed_set))
    only = write_client_api_run(store, _windows("sqlite", "in-process", SQLITE), run_id="20261201T000000Z-capi01")
    assert ClientApiReport(only, store).seed_line(ClientApiReport(only, store).counted_findings()) == ""


def test_the_contended_test_is_one_window_per_mode_so_untested():
    c = pd.DataFrame({"engine": ["postgres", "sqlite"], "mode": "processes", "transport": ["tcp", "in-process"],
                      "workers": 32, "ops_per_s": [1_000.0, 600.0], "completion_s": [2.0, 0.14]})
    found = analysis.findings(_summary(_windows("postgres", "unix", PG)), c)
    row = found[found["kind"] == "contended"].iloc[0]
    assert row["verdict"] == "untested" and row["seed_ratio"] == pytest.approx(92 / 154)
    assert row["seed"] == "untested"
    # Hostile read 40: a 0.14 s window is mostly its workers' start and finish, and its row says so.
    assert "short-window" in row["caveats"]
    longer = analysis.findings(_summary(_windows("postgres", "unix", PG)), c.assign(completion_s=[2.0, 3.0]))
    assert "short-window" not in longer[longer["kind"] == "contended"].iloc[0]["caveats"]


def test_a_threads_contended_row_is_not_set_beside_the_seed_and_the_default_set_runs_processes():
    """Hostile read 46b, 04 #1: 32 threads share one interpreter lock (PyMySQL's client 9.80 of 12.87
    CPU-s): their ratio is no ODB ratio, so its seed comparison says why it is not made."""
    c = pd.DataFrame({"engine": ["postgres", "mysql"] * 2, "mode": ["threads"] * 2 + ["processes"] * 2,
                      "transport": "tcp", "workers": 32, "ops_per_s": [2_000.0, 700.0, 2_000.0, 1_800.0],
                      "completion_s": 4.0})
    found = analysis.findings(_summary(_windows("postgres", "unix", PG)), c)
    rows = found[found["kind"] == "contended"].set_index("step")
    threads, processes = rows.loc["contended (threads)"], rows.loc["contended (processes)"]
    assert threads["seed"] == "not_comparable"
    assert F.seed_words(threads) == "not comparable with the seed (threads share one interpreter lock)"
    assert processes["seed"] == "untested" and F.seed_words(processes) == "not testable here: measured once"
    from benchlib.core.settings import get_settings

    default = yaml.safe_load((get_settings().params_dir / "04-client-api-overhead" / "default.yaml").read_text())
    assert default["contended_modes"] == ["processes"]


def test_the_cpu_charts_keep_each_engine_in_one_panel_with_horizontal_labels(tmp_path):
    # Issue 37 item 9: SQLite's driver bar, 50x below PostgreSQL's ORM, got a magnitude panel of its
    # own, which overlaid the first panel's rotated layer labels, themselves cut ("orm_obj").
    from benchlib.data.store import Store
    from benchlib.workloads.client_api import ClientApiReport

    store = Store(tmp_path / "results")
    run_id = write_client_api_run(store, _windows("sqlite", "in-process", SQLITE, OPERATIONS)
                                  + _windows("postgres", "unix", PG, OPERATIONS)
                                  + _windows("postgres", "tcp", PG, OPERATIONS))
    figures = ClientApiReport(run_id, store).cpu_figures()
    panels: dict[tuple, set] = {}  # (engine and transport, operation) -> the axes its bars are drawn on
    for number, fig in enumerate(figures):
        for trace in fig.data:
            if trace.type != "bar":
                continue
            assert trace.orientation == "h", "layer labels must run horizontally, never rotated and cut"
            values = [v for v in trace.x if v is not None and v == v and v > 0]
            if values:
                panels.setdefault((trace.meta["panel"], trace.meta["row"]), set()).add(trace.xaxis)
    assert {operation for _, operation in panels} == set(OPERATIONS)
    assert {group for group, _ in panels} == {"sqlite in-process", "postgres unix", "postgres tcp"}
    assert all(len(axes) == 1 for axes in panels.values()), panels  # each group whole in one panel
    assert len({axis for axes in panels.values() for axis in axes}) == 3 * len(OPERATIONS)
    # Hostile read 40: SQLite's 24 µs and PostgreSQL's 470 µs looked alike on scales of their own. The
    # panels of one operation share one value axis; operations (rows) keep theirs.
    layout = figures[0].layout
    for row in range(len(OPERATIONS)):
        first = "x" if row == 0 else f"x{row * 3 + 1}"
        names = [f"xaxis{row * 3 + k}" for k in (2, 3)]
        assert all(layout[name].matches == first for name in names), (row, [layout[n].matches for n in names])


def test_the_rendered_findings_are_the_approved_ones(tmp_path, snapshot):
    from benchlib.data.store import Store
    from benchlib.workloads.client_api import ClientApiReport

    store = Store(tmp_path / "results")
    run_id = write_client_api_run(store, _windows("sqlite", "in-process", SQLITE) + _windows("postgres", "unix", PG)
                                  + _windows("postgres", "tcp", PG) + _windows("mysql", "unix", MYSQL))
    report = ClientApiReport(run_id, store)
    found = report.findings()
    assert {c for cs in found["caveats"] for c in cs} <= {c.id for c in report.caveat_notes()}
    rendered = [f"{row['verdict']} {list(row['caveats'])}: {F.render(row, report.phrases, with_seed=True)}"
                for row in found.to_dict("records")]
    assert rendered == snapshot
    # Hostile read 44 (04 #1): the sets that run more objects, from their files, not a literal.
    from benchlib.core.settings import get_settings

    folder = get_settings().params_dir / "04-client-api-overhead"
    default = yaml.safe_load((folder / "default.yaml").read_text())["objects"]
    note = next(c.text for c in report.caveat_notes() if c.id == analysis.FEW_OBJECTS)
    assert f"--set default ({default:,})" in note and "(300)" not in note
    report.info["parameters"]["objects"] = default
    note = next(c.text for c in report.caveat_notes() if c.id == analysis.FEW_OBJECTS)
    assert "--set default" not in note and note.endswith("runs more.")


OPERATIONS = ("persist", "load", "update", "erase")


def test_an_undecided_layer_ratio_too_wide_to_print_is_said_by_its_two_values():
    """Issue 42 item 6: no answer sentence prints a point ratio whose CI spans over 10x (hostile read 41:
    "core vs driver ... 3x (0.353-25.5)")."""
    from benchlib.data import findings as F
    from benchlib.workloads.client_api.report import PHRASES

    row = F.finding(engine="postgres", base_engine="postgres", step="load", regime="client CPU, core vs driver (unix)",
                    metric="client CPU per operation", unit="µs",
                    contrast={"ratio": 3.0, "ratio_low": 0.353, "ratio_high": 25.5, "beyond_noise": False, "n": 2,
                              "base_n": 2, "mean": 499.0, "base_mean": 166.0})
    said = F.render(row, PHRASES)
    assert "3x" not in said and "499 µs" in said and "166 µs" in said


def test_a_layer_row_too_wide_to_read_cites_the_window_size_and_plain_statements_where_set():
    """Hostile read 42 (04 #2, #4): SQLite's '19.1x (0.0885-4,108)' said nothing of why; psycopg's
    auto-prepare for Core and the ORM was unstated."""
    wide = analysis.findings(_summary(_windows("sqlite", "in-process", SQLITE, spread=(0.2, 3.0))),
                             host=lambda e, b: None)
    narrow = analysis.findings(_summary(_windows("postgres", "unix", PG)), plain=frozenset({"postgres"}))
    layer_rows = wide[wide["kind"] == "layer"]
    assert not layer_rows.empty and all(analysis.FEW_OBJECTS in ids for ids in layer_rows["caveats"])
    assert not any(analysis.FEW_OBJECTS in ids for ids in narrow["caveats"])
    cited = {(r["layer"], analysis.PLAIN_STATEMENTS in r["caveats"]) for r in narrow.to_dict("records")}
    assert ("core", True) in cited and ("prepared", False) in cited and ("prepared", True) not in cited


def test_the_few_objects_note_goes_only_where_a_windows_work_is_near_its_fixed_cost_and_orm_batch_says_its_commits():
    """Hostile read 43 (04 #1): "50 objects a window leave the work about as large as the window's fixed
    cost" sat on PostgreSQL's rows, whose driver did 7.9 ms a window against 1.43 ms; (04 #4): orm_batch
    commits once per Session where the driver commits every object."""
    wide = analysis.findings(_summary(_windows("postgres", "unix", {**PG, "orm_batch": (900, 600, 200)},
                                               objects=1_000, spread=(0.2, 3.0))), host=lambda e, b: None)
    layer_rows = wide[wide["kind"] == "layer"]
    assert all(F.fields_of(r)["wide"] for r in layer_rows.to_dict("records"))
    # 110 µs x 1,000 objects = 110 ms a window against its 10 ms fixed cost: the note does not hold.
    assert not any(analysis.FEW_OBJECTS in ids for ids in layer_rows["caveats"])
    assert [r["layer"] for r in layer_rows.to_dict("records") if analysis.BATCHED in r["caveats"]] == ["orm_batch"] * 2


def test_a_stored_runs_summary_keeps_the_window_size_and_fixed_cost_the_few_objects_note_reads(tmp_path):
    from benchlib.data.store import Store
    from benchlib.workloads.client_api import ClientApiReport

    store = Store(tmp_path / "results")
    report = ClientApiReport(write_client_api_run(store, _windows("sqlite", "in-process", SQLITE)), store)
    driver = report.summary[report.summary["layer"] == "driver"].iloc[0]
    # The harness window: 12 ms of CPU around a 2 ms loop, so 10 ms fixed.
    assert driver["objects"] == 100 and driver["fixed_process_s"] == pytest.approx(0.01)
