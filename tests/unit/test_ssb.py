"""The SSB workload without engines: parameters checked before anything starts (each message naming
the value), the 13 queries in both date dialects, answers compared as multisets across drivers'
number types, and the report's arithmetic on frames with known answers."""
import decimal

import pandas as pd
import pytest

from benchlib.core.errors import ParameterError
from benchlib.workloads import ssb
from benchlib.workloads.ssb import analysis
from benchlib.workloads.ssb.queries import CLICKHOUSE_DATES, EXTRACT_DATES, FINE_GRAINED, NAMES, Answer, sql

GOOD = dict(engines=["duckdb"], scale_factor=0.002, seed=1, queries=list(NAMES), drop_page_cache=False,
            repetitions=2, max_repetitions=2, ci_target=0.1, warmup=False, pin_cpus=False, idle_seconds=0.2,
            max_settle_seconds=1, engine_config={})


@pytest.mark.parametrize("name, value, fragment", [
    ("scale_factor", 0, "scale_factor must be a number > 0"),
    ("scale_factor", "1", "got '1'"),
    ("scale_factor", 5000, "got 5000"),
    ("queries", ["Q1.1", "Q5.1"], "got 'Q5.1'"),
    ("queries", [], "queries must"),
    ("warmup", True, "warmup must be false in the ssb workload"),
    ("idle_seconds", 0, "idle_seconds must be a number > 0 in the ssb workload"),
    ("engines", ["duckdb", "mysql"], "'mysql'"),
    ("engines", ["duckdb", "clickhose"], "unknown engine 'clickhose'"),
    # The staged files alone would need ~650 GiB: refused before anything is generated or started.
    ("scale_factor", 999, "scale_factor=999 needs about"),
])
def test_bad_parameters_fail_naming_the_value(name, value, fragment):
    with pytest.raises(ParameterError, match=None) as raised:
        ssb.validate_parameters({**GOOD, name: value})
    assert fragment in str(raised.value)


def test_good_parameters_pass_and_every_query_is_named():
    p = ssb.validate_parameters(GOOD)
    assert p.queries == list(NAMES) and len(NAMES) == 13
    assert set(FINE_GRAINED) < set(NAMES)


def test_a_server_setting_reaches_its_engines_start_and_a_setting_for_an_engine_not_run_is_refused():
    """Hostile reads 44 and 46e (08): PostgreSQL's 128MB shared_buffers scanned the 1.13 GiB table
    through its ring on every hot run; the default set now sets it, per engine, as 01 and 05 do."""
    from benchlib.workloads.ssb.workload import Ssb

    p = ssb.validate_parameters({**GOOD, "engines": ["duckdb", "postgres"],
                                 "engine_config": {"postgres": {"shared_buffers": "6GB"}}})
    configs = {s.engine: dict(s.config) for s in Ssb().starts(p)}
    assert configs == {"duckdb": {}, "postgres": {"shared_buffers": "6GB"}}
    with pytest.raises(ParameterError, match="mysql"):
        ssb.validate_parameters({**GOOD, "engine_config": {"mysql": {"innodb_buffer_pool_size": "1G"}}})


def test_each_dialect_writes_its_date_functions_and_no_alias_in_a_where_clause():
    for name in NAMES:
        ch, ex = sql(name, CLICKHOUSE_DATES), sql(name, EXTRACT_DATES)
        assert "extract(" not in ch and "toYear(" not in ex and "toISOWeek" not in ex
        where = ex.split(" where ", 1)[1].split(" group by ")[0]
        assert " year " not in f" {where} ".replace("extract(year", "")  # PostgreSQL refuses an output alias there
    assert "toYYYYMM(lo_orderdate) = 199401" in sql("Q1.2", CLICKHOUSE_DATES)
    assert "extract(year from lo_orderdate) = 1994 and extract(month from lo_orderdate) = 1" in sql("Q1.2", EXTRACT_DATES)
    assert "extract(week from lo_orderdate) = 6" in sql("Q1.3", EXTRACT_DATES)


def test_answers_match_across_driver_number_types_and_row_order():
    postgres = [(decimal.Decimal("1993"), "MFGR#121", decimal.Decimal("123456789")), (1994, "MFGR#122 ", 5)]
    clickhouse = [(1994, "MFGR#122", 5.0), (1993, "MFGR#121", 123456789)]
    assert Answer.of(postgres) == Answer.of(clickhouse)
    assert Answer.of(postgres) != Answer.of(clickhouse[:1])
    assert Answer.of([(1993, "x", 6)]) != Answer.of([(1993, "x", 5)])
    assert Answer.of([(0.1234567,)]) == Answer.of([(0.12345671,)])
    # Equal as sets whatever the order; the order is compared apart.
    assert Answer.of(postgres).ordered != Answer.of(clickhouse).ordered
    assert Answer.of(postgres).ordered == Answer.of(list(postgres)).ordered


def _per_query(engine, hot, std=None, n=3, cold_rows_read=float("nan"), variant=""):
    return pd.DataFrame({"engine": engine, "variant": variant, "query": list(hot), "hot_s": list(hot.values()),
                         "hot_std": [std if std is not None else v * 0.02 for v in hot.values()], "n": n,
                         "hot_ci95": 0.0, "cold_rows_read": cold_rows_read})


def _windows(times: dict[tuple[str, str], float], repetitions: int = 3) -> pd.DataFrame:
    """Hot windows per engine (and variant) and query over repetitions, each repetition 2% apart,
    and one cold run per query in the first."""
    rows = []
    for (engine, variant), seconds in times.items():
        for query in NAMES:
            scale = 0.2 if (engine == "chdb" and query in FINE_GRAINED) else 1.0
            for r in range(1, repetitions + 1):
                rows.append({"engine": engine, "variant": variant, "query": query, "run": "hot", "repetition": r,
                             "wall_s": seconds * scale * (1 + 0.02 * (r - 2))})
            if not variant:
                rows.append({"engine": engine, "variant": "", "query": query, "run": "cold", "repetition": 1,
                             "wall_s": 3 * seconds * scale})
    return pd.DataFrame(rows)


def _findings(wrong=(), floors=None):
    w = _windows({("postgres", ""): 0.5, ("postgres", "jit=off"): 0.45, ("chdb", ""): 0.01, ("duckdb", ""): 0.02})
    per_query = w.groupby(["engine", "variant", "query"], sort=False).apply(
        lambda g: pd.Series({"hot_s": g[g["run"] == "hot"]["wall_s"].mean(),
                             "hot_std": g[g["run"] == "hot"]["wall_s"].std(ddof=1), "n": (g["run"] == "hot").sum(),
                             "cold_s": g[g["run"] == "cold"]["wall_s"].max()}), include_groups=False).reset_index()
    per_query["hot_ci95"] = 0.0
    loads = pd.DataFrame({"engine": ["postgres", "chdb", "duckdb"], "step": "load lineorder",
                          "rows_per_s": [200_000.0, 2_000_000.0, 1_000_000.0]})
    sizes = pd.DataFrame({"engine": ["postgres", "chdb", "duckdb"] * 2, "table": ["lineorder_flat"] * 3 + ["lineorder"] * 3,
                          "table_bytes": [900e6, 150e6, 200e6, 400e6, 60e6, 80e6]})
    return analysis.findings(w, per_query, loads, sizes, base="postgres", subjects=["chdb", "duckdb"],
                             host={"chdb": 1.05, "duckdb": 1.05, "postgres": 1.0},
                             seed={("chdb", "Q1.2", "hot"): 127 / 784337, ("chdb", "load lineorder", "one load"): 13.0},
                             wrong=wrong, floors=floors)


def test_findings_set_each_column_store_against_the_row_store_hot_and_first_run():
    found = _findings().set_index(["engine", "step", "regime"])
    # Hot: a geometric mean per repetition, so a CI over repetitions; the first run: one each, untested.
    assert found.at[("chdb", "all 13 queries", "hot"), "verdict"] == "better"
    assert found.at[("chdb", "all 13 queries", "hot"), "n"] == 3
    assert found.at[("chdb", "all 13 queries", "first run"), "verdict"] == "untested"
    assert found.at[("duckdb", "flight Q2", "hot"), "ratio"] == pytest.approx(0.04)
    # PostgreSQL without JIT against itself with it: a row of its own, hot only.
    assert found.at[("postgres", "all 13 queries", "hot, jit=off"), "ratio"] == pytest.approx(0.9)
    assert ("postgres", "all 13 queries", "first run, jit=off") not in found.index
    # A load: one each. A size measured once is one value too (hostile read 40: never "beyond noise"),
    # with no drift band.
    assert found.at[("chdb", "load lineorder", "one load"), "verdict"] == "untested"
    size = found.loc[("chdb", "lineorder_flat on disk", "after the load")]
    assert pd.isna(size["host_factor"]) and (size["verdict"], size["ratio"]) == ("untested", pytest.approx(150 / 900))
    assert found.at[("chdb", "Q1.2", "hot"), "seed_ratio"] == pytest.approx(127 / 784337)
    # The answer: all queries hot, each column store; never PostgreSQL against itself without JIT
    # (hostile read 40, 08 item 5), nor a first run (it may have read nothing from storage).
    head = _findings()
    assert list(zip(head["engine"], head["regime"]))[:2] == [("chdb", "hot"), ("duckdb", "hot")]
    assert head["headline"].head(2).all() and not head["headline"].iloc[2:].any()


def test_a_wrong_answer_is_not_compared_nor_any_mean_that_holds_it():
    found = _findings(wrong={("duckdb", "Q2.2")}).set_index(["engine", "step", "regime"])["verdict"]
    assert found[("duckdb", "Q2.2", "hot")] == "not_comparable"
    assert found[("duckdb", "flight Q2", "hot")] == found[("duckdb", "all 13 queries", "first run")] == "not_comparable"
    assert found[("duckdb", "flight Q1", "hot")] == "better" and found[("chdb", "flight Q2", "hot")] == "better"


def test_rendered_findings_match_the_approved_snapshot(snapshot):
    from benchlib.data import findings as F
    from benchlib.workloads.ssb.report import PHRASES

    found = _findings(wrong={("duckdb", "Q4.3")})
    rendered = [F.render(row, PHRASES, with_seed=True) for row in found.to_dict("records")]
    assert rendered + [F.certainty(found), F.seed_line(found)] == snapshot


def test_settings_readings_say_whether_the_condition_cache_was_off():
    from benchlib.workloads.ssb.report import condition_cache_off, settings_of

    assert settings_of("max_threads=2, use_query_condition_cache=0") == {"max_threads": "2",
                                                                         "use_query_condition_cache": "0"}
    assert condition_cache_off("max_threads=2, use_query_condition_cache=0") is True
    assert condition_cache_off("max_threads=2, use_query_condition_cache=true") is False
    assert condition_cache_off("jit=on, shared_buffers=128MB") is None


def test_clickhouse_tables_take_the_ssb_pages_types_and_dates(tmp_path):
    """Issue 37.5: String where the page declares LowCardinality, signed integers where it declares
    unsigned ones, dates as integers where it declares Date. A real chDB loads a staged table."""
    from chdb import dbapi

    from benchlib.datagen import ssb as data
    from benchlib.engines import get_engine
    from benchlib.engines.clients import SqlSession
    from benchlib.workloads.ssb.dialects import CLICKHOUSE, DELIMITER

    assert {c.name for t in data.TABLES.values() for c in t.columns} == set(CLICKHOUSE.column_types)
    session = SqlSession(dbapi.connect(str(tmp_path / "db")), get_engine("chdb").client)
    try:
        path = tmp_path / "lineorder.tbl"
        rows = data.write_csv(data.generator("lineorder", data.Scale(0.0005), 1).chunks(), path, delimiter=DELIMITER)
        name = CLICKHOUSE.create(session, data.LINEORDER)
        CLICKHOUSE.load(session, name, path, data.LINEORDER)
        types = dict(session.execute("select name, type from system.columns where table = 'lineorder'"))
        assert types["lo_shipmode"] == "LowCardinality(String)" and types["lo_quantity"] == "UInt8"
        assert types["lo_orderdate"] == "Date"
        assert session.execute("select count(), min(lo_orderdate) >= '1992-01-01' from lineorder")[0] == (rows, 1)
    finally:
        session.close()


def test_share_read_divides_the_cold_runs_rows_read_by_the_flat_tables_rows():
    pq = _per_query("chdb", {"Q1.3": 0.01, "Q2.1": 0.02}, cold_rows_read=3000.0)
    share = analysis.share_read(pq, "chdb", 600_000)
    assert list(share["share"]) == [0.005, 0.005]


def test_load_totals_sum_the_five_tables_the_flat_build_and_maintenance():
    loads = pd.DataFrame({"engine": "postgres", "step": ["load lineorder", "load customer", "build lineorder_flat",
                                                         "after-load maintenance"],
                          "wall_s": [2.0, 0.5, 3.0, 1.0], "cpu_s": [1.5, 0.25, 2.0, 0.75]})
    t = analysis.load_totals(loads).iloc[0]
    assert (t["load_wall_s"], t["flat_wall_s"], t["maintenance_wall_s"]) == (2.5, 3.0, 1.0)
    assert t["total_wall_s"] == 6.5 and t["total_cpu_s"] == 4.5


def test_per_query_figures_leave_the_floor_out_and_take_rows_read_from_the_cold_run():
    def window(run, repetition, wall, rows_read, query="Q1.3"):
        return {"engine": "chdb", "phase": f"{query} {run}", "repetition": repetition, "wall_s": wall, "cpu_s": wall,
                "query": query, "run": run, "rows_read": rows_read, "result_rows": 1.0, "dropped": None,
                "storage_read_bytes": 4096.0 if run == "cold" else 0.0, "answer_order_matches": 1.0}
    w = pd.DataFrame([window("floor", 1, 0.001, None, query="select 1"), window("cold", 1, 0.05, 65536.0),
                      window("hot", 1, 0.010, 32768.0), window("hot", 2, 0.012, 32768.0),
                      window("floor", 2, 0.001, None, query="select 1")])
    pq = analysis.queries(w)
    assert list(pq["query"]) == ["Q1.3"] and pq["n"].iloc[0] == 2
    assert pq["hot_s"].iloc[0] == pytest.approx(0.011) and pq["cold_rows_read"].iloc[0] == 65536.0
    floors = analysis.floors(w)
    assert floors["n"].iloc[0] == 2 and floors["floor_s"].iloc[0] == pytest.approx(0.001)


def test_the_answer_sets_each_sides_select_1_beside_its_time():
    """Hostile read 40 (08 item 3): a select 1 was 41% of DuckDB's median hot query, said only in
    a footnote. The answer's rows carry both sides' fixed cost, and their phrase states it."""
    from benchlib.data import findings as F
    from benchlib.workloads.ssb.report import HEADLINE_PHRASES

    found = _findings(floors={"chdb": 0.0036, "duckdb": 0.0015, "postgres": 0.0009})
    lead = found[found["headline"] == True].iloc[0]  # noqa: E712
    assert (lead["floor"], lead["base_floor"]) == (pytest.approx(3.6), pytest.approx(0.9))
    assert found[found["headline"] != True]["floor"].isna().all()  # noqa: E712
    fields = F.fields_of(lead.to_dict(), HEADLINE_PHRASES)
    assert (fields["floor"], fields["base_floor"], fields["shown_unit"]) == ("3.6", "0.9", "ms")


@pytest.mark.parametrize("shares, skips", [((1.0, 1.0, 1.0), False), ((0.02, 0.003, 0.04), True),
                                           ((0.02, 1.0, 0.04), False)])
def test_the_sort_key_is_said_to_skip_only_where_the_rows_read_say_so(shares, skips):
    """Hostile read 40 (08 item 1): "a filter finer than a year reads a small share of the table"
    sat right under 100.0% rows read for those very queries (12,145 rows: too few granules)."""
    read = pd.DataFrame({"query": ["Q1.1", *analysis.FINER_THAN_A_YEAR], "share": [1.0, *shares]})
    assert analysis.sort_key_skips(read) is skips
    assert analysis.sort_key_skips(read[read["query"] == "Q1.1"]) is None


def test_a_group_holding_a_first_run_that_read_nothing_has_no_cold_figure():
    """Hostile read 41 (08): first-run ratios where PostgreSQL read nothing from storage were called
    cold. A group (a flight, all queries) holding a first run that read nothing has no cold row."""
    w = _windows({("postgres", ""): 0.5, ("duckdb", ""): 0.02})
    per_query = pd.concat([_per_query(e, {q: s for q in NAMES}) for e, s in (("postgres", 0.5), ("duckdb", 0.02))])
    per_query["cold_s"] = per_query["hot_s"] * 3
    warm = (per_query["engine"] == "postgres") & (per_query["query"] == "Q1.2")
    per_query["cold_storage_read_bytes"] = [0.0 if w_ else 65536.0 for w_ in warm]
    cold = analysis.cold_geomeans(per_query).set_index(["engine", "group"])
    assert ("postgres", "flight Q1") not in cold.index and ("postgres", "all 13 queries") not in cold.index
    assert ("postgres", "flight Q2") in cold.index and ("duckdb", "flight Q1") in cold.index
    found = analysis.findings(w, per_query, pd.DataFrame(columns=["engine", "step", "rows_per_s"]),
                              pd.DataFrame(columns=["engine", "table", "table_bytes"]), base="postgres",
                              subjects=["duckdb"], host={}, seed={})
    first = found[found["regime"] == analysis.COLD_RUN]
    assert set(first["step"]) == {"flight Q2", "flight Q3", "flight Q4"}


def test_a_fixed_cost_that_dominates_a_query_is_said_once_in_the_answer():
    """Hostile read 41 (08): at SF 0.002 a select 1 was 68% of DuckDB's query time and the answer
    did not say so. A quarter or more of an engine's median hot query: one line naming the larger set."""
    from benchlib.workloads.ssb.report import scale_lines

    [line] = scale_lines(0.002, {"duckdb": 0.68, "postgres": 0.17, "chdb": float("nan")}, 0.5)
    assert "DuckDB" in line and "68%" in line and "SF 0.5" in line
    assert scale_lines(0.5, {"duckdb": 0.1, "postgres": 0.05}, 0.5) == []


def test_the_chance_note_of_many_tests_goes_where_no_test_flagged():
    """Hostile read 41 (08): "about one may differ by chance alone" beside 0 decided rows."""
    from benchlib.workloads.ssb.report import without_unfounded_chance_note

    found = _findings().assign(caveats=[("many-tests",)] * len(_findings()))
    assert (without_unfounded_chance_note(found)["caveats"] == found["caveats"]).all()  # decided per-query rows here
    undecided = found.assign(verdict="noise")
    assert not any("many-tests" in c for c in without_unfounded_chance_note(undecided)["caveats"])


def test_an_undecided_ratio_whose_ci_spans_over_10x_prints_no_point():
    """Hostile read 42 (08 #1): the answer printed 0.647x (0.0373-11.3) and 2.69x (0.0312-232).
    Such a row takes the shared WIDE phrase (as 01-04 do), in the answer's phrases too."""
    from benchlib.data import findings as F
    from benchlib.workloads.ssb.report import HEADLINE_PHRASES, PHRASES

    found = _findings(floors={"chdb": 0.0036, "duckdb": 0.0015, "postgres": 0.0009})
    lead = found[found["headline"] == True].iloc[0].to_dict()  # noqa: E712
    wide = {**lead, "verdict": F.Verdict.NOISE.value, "ratio": 0.647, "ratio_low": 0.0373, "ratio_high": 11.3}
    narrow = {**wide, "ratio_low": 0.5, "ratio_high": 0.9}
    for phrases in (PHRASES, HEADLINE_PHRASES):
        assert phrases.template_of(F.fields_of(wide, phrases)) == phrases.templates[F.WIDE]
        assert phrases.template_of(F.fields_of(narrow, phrases)) != phrases.templates[F.WIDE]
    assert "0.647" not in F.render(wide, HEADLINE_PHRASES)


def test_sizes_within_a_few_allocation_units_get_no_ratio():
    """Hostile read 42 (08 #2): DuckDB reported 256 KiB for a 4-row table and 512 KiB for both
    lineorder and lineorder_flat: its blocks, not compression. Such sizes get no size ratio."""
    kib = 1024
    sizes = pd.DataFrame({"engine": ["duckdb"] * 3 + ["postgres"] * 3,
                          "table": ["supplier", "lineorder", "lineorder_flat"] * 2,
                          "table_bytes": [256 * kib, 512 * kib, 512 * kib, 8 * kib, 1730 * kib, 5170 * kib]})
    assert analysis.allocation_bound(sizes) == {("duckdb", "supplier"), ("duckdb", "lineorder"),
                                                ("duckdb", "lineorder_flat"), ("postgres", "supplier")}
    bigger = sizes.assign(table_bytes=[256 * kib, 90 * 2 ** 20, 300 * 2 ** 20, 8 * kib, 400 * 2 ** 20, 900 * 2 ** 20])
    assert analysis.allocation_bound(bigger) == {("duckdb", "supplier"), ("postgres", "supplier")}
    assert analysis.allocation_bound(sizes[sizes["table"] != "supplier"]) == set()  # two tables show no unit


def test_the_size_table_names_an_allocation_not_bytes_per_row():
    """Hostile read 43 (08 #3): "DuckDB supplier 4 rows 256 KiB 65,536 B/row" was its block."""
    from benchlib.workloads.ssb.report import size_table

    kib = 1024  # the table's rule over known sizes
    sizes = pd.DataFrame({"engine": ["duckdb"] * 3 + ["postgres"] * 3,
                          "table": ["supplier", "lineorder", "lineorder_flat"] * 2,
                          "rows": [4, 12_145, 12_145] * 2,
                          "table_bytes": [256 * kib, 512 * kib, 512 * kib, 8 * kib, 1730 * kib, 5170 * kib],
                          "staged_bytes": [400.0, 1.2e6, 3.1e6] * 2})
    sizes = sizes.assign(bytes_per_row=sizes["table_bytes"] / sizes["rows"],
                         compression=sizes["staged_bytes"] / sizes["table_bytes"])
    table = size_table(sizes).data.set_index(["engine", "table"])
    assert table.at[("DuckDB", "supplier"), "bytes per row"] == "allocation (256 KiB units), not resolved at this scale"
    assert table.at[("DuckDB", "lineorder"), "staged text / on disk"] == ""
    assert table.at[("PostgreSQL", "supplier"), "bytes per row"].startswith("allocation (8 KiB units)")
    assert table.at[("PostgreSQL", "lineorder"), "bytes per row"] == "146"  # 1,730 KiB / 12,145 rows
    assert "65,536" not in table.to_string()


def test_the_findings_table_and_its_count_leave_each_querys_rows_to_a_table_of_their_own():
    """Hostile read 43 (08 #2): 45 findings rows, 26 repeating the per-query table."""
    from benchlib.data import findings as F
    from benchlib.workloads.ssb.report import counted_findings, split_per_query

    found = _findings()
    shown, each = split_per_query(found)
    assert set(each["step"]) == set(NAMES) and not shown["step"].isin(NAMES).any()
    assert len(shown) + len(each) == len(found) and {"all 13 queries", "flight Q1"} <= set(shown["step"])
    assert found[found["headline"] == True].index.isin(shown.index).all()  # noqa: E712: the answer's rows stay
    assert counted_findings(found).equals(shown)
    assert f"of {len(shown)} comparisons" in F.certainty(counted_findings(found))


def test_the_answers_mean_is_also_given_without_the_queries_filtered_finer_than_a_year():
    # Hostile read 46e, 08 #1: on Q1.2, Q1.3, Q3.4 chDB's sort key reads 1-2% of the table while
    # PostgreSQL's extract() predicates cannot use its index. chDB takes 0.2x its time there (the
    # fixture), so without them its mean is its 10 ms, PostgreSQL's its 500 ms.
    found = _findings()
    head = found[found["headline"] == True].set_index("engine")  # noqa: E712
    assert head.at["chdb", "without"] == ("; without Q1.2, Q1.3, Q3.4 (filtered finer than a year): "
                                          "10 against 500 ms")
    assert head.at["chdb", "value"] < 10  # the mean over all 13 holds the three fast ones
    # Only the answer's rows carry it, and a mean over a query whose answer was wrong has none.
    assert set(found[found["headline"] != True]["without"]) == {""}  # noqa: E712
    wrong = _findings(wrong={("duckdb", "Q2.2")})
    assert set(wrong[wrong["engine"] == "duckdb"]["without"]) == {""}
    # Every geometric mean's line says it is one per query (08 #3), a single query's does not.
    means = found["metric"] == "geometric mean time"
    assert set(found[means]["mean_words"]) == {analysis.MEAN_WORDS} and set(found[~means]["mean_words"]) == {""}


def test_the_seeds_row_against_column_query_time_is_read_from_the_reference():
    # Hostile read 46e, 08 #2: the page's question (row against column store) has a seed figure,
    # AlloyDB's Q1.2: 127 ms in its columnar engine against 784,337 ms in its row store.
    from benchlib.data import results

    ratios = analysis.seed_query_ratios(results.reference("seed001_ssb"))
    assert ratios == {"Q1.2": pytest.approx(127 / 784337)}
    # The seed line over the rows without the load: only the Q1.2 row's comparison is counted.
    from benchlib.data import findings as F
    found = _findings()
    assert F.seed_line(found).startswith("Against the seed's 2 ratios")  # the load's among them
    line = F.seed_line(analysis.seed_question_rows(found))
    assert line.startswith("Against the seed's 1 ratio") and "measured once" not in line
