"""The SSB workload without engines: parameters checked before anything starts (each message naming
the value), the 13 queries in both date dialects, answers compared as multisets across drivers'
number types, and the report's arithmetic on frames with known answers."""
import decimal

import pandas as pd
import pytest

from benchlib.errors import ParameterError
from benchlib.workloads import ssb
from benchlib.workloads.ssb import analysis
from benchlib.workloads.ssb.queries import CLICKHOUSE_DATES, EXTRACT_DATES, FINE_GRAINED, NAMES, Answer, sql

GOOD = dict(engines=["duckdb"], scale_factor=0.002, seed=1, queries=list(NAMES), drop_page_cache=False,
            repetitions=2, max_repetitions=2, ci_target=0.1, warmup=False, pin_cpus=False, idle_seconds=0.2,
            max_settle_seconds=1)


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


def _per_query(engine, hot, std=None, n=3, cold_rows_read=float("nan")):
    return pd.DataFrame({"engine": engine, "query": list(hot), "hot_s": list(hot.values()),
                         "hot_std": [std if std is not None else v * 0.02 for v in hot.values()], "n": n,
                         "hot_ci95": 0.0, "cold_rows_read": cold_rows_read})


def test_fine_grained_advantage_compares_the_seeds_three_queries_with_the_rest():
    fast = {q: 0.01 for q in NAMES}
    full_scan = {q: (0.2 if q in FINE_GRAINED else 0.05) for q in NAMES}
    pq = pd.concat([_per_query("chdb", fast), _per_query("duckdb", full_scan)])
    ratios = analysis.contrast(pq, "chdb", "duckdb")
    assert len(ratios) == 13 and ratios["beyond_noise"].all()
    adv = analysis.fine_grained_advantage(ratios)
    assert adv["fine"] == pytest.approx(20.0) and adv["rest"] == pytest.approx(5.0) and adv["separated"]
    same = analysis.fine_grained_advantage(analysis.contrast(pd.concat([_per_query("chdb", fast),
                                                                        _per_query("duckdb", fast)]), "chdb", "duckdb"))
    assert not same["separated"] and same["fine"] == pytest.approx(same["rest"])


def test_matched_pairs_set_each_fine_query_beside_its_year_grained_twin():
    chdb = {q: 0.01 for q in NAMES}
    duckdb = {**{q: 0.02 for q in NAMES}, "Q1.2": 0.08, "Q1.3": 0.021, "Q3.4": 0.05}
    pairs = analysis.matched_pairs(analysis.contrast(pd.concat([_per_query("chdb", chdb),
                                                                _per_query("duckdb", duckdb)]), "chdb", "duckdb"))
    assert list(zip(pairs["coarse"], pairs["fine"])) == [("Q1.1", "Q1.2"), ("Q1.1", "Q1.3"), ("Q3.3", "Q3.4")]
    assert list(pairs["grows"]) == [True, True, True]
    # 2.0x against 2.1x with 2% spreads over three runs: larger, but the CIs overlap.
    assert list(pairs["apart"]) == [True, False, True]


def test_a_ratio_within_noise_is_not_called_beyond_it():
    noisy = pd.concat([_per_query("chdb", {"Q1.1": 0.010}, std=0.004, n=2),
                       _per_query("duckdb", {"Q1.1": 0.011}, std=0.004, n=2)])
    row = analysis.contrast(noisy, "chdb", "duckdb").iloc[0]
    assert not row["beyond_noise"] and row["low"] < 1 < row["high"]


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
