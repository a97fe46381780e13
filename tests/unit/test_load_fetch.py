"""The load-insert-fetch workload without engines: parameters checked before anything starts
(each message naming the value), the plan of loads and steps, the key-value row layout, and the
report's arithmetic on frames with known answers."""
import math

import numpy as np
import pandas as pd
import pytest

from benchlib.data import results
from benchlib.engines import ENGINES, get_engine
from benchlib.core.errors import ParameterError
from benchlib.workloads import load_fetch
from benchlib.workloads.load_fetch import analysis, dialects
from benchlib.workloads.load_fetch.workload import (FETCH, GENERATE, INSERT, LoadFetchParams, generator_scales,
                                                    validate_parameters)

GOOD = dict(engines=["sqlite", "rocksdb"], rows=3000, seed=1, load_orders=["key", "random"], variant_loads=True,
            regimes=["cached"], inserts=20, fetches=10, cached_buffer_pool_mb=64, limited_buffer_pool_mb=16,
            limited_memory_mb=512, repetitions=2, max_repetitions=3, ci_target=0.05, warmup=False, pin_cpus=False,
            idle_seconds=0.2, max_settle_seconds=1)


@pytest.mark.parametrize("name, value, fragment", [
    ("rows", 999, "rows must be an integer >= 1000, got 999"),
    ("rows", "1M", "rows must be an integer >= 1000, got '1M'"),
    ("seed", -1, "seed must be an integer >= 0, got -1"),
    ("load_orders", ["key", "sorted"], "load_orders must be a non-empty list of key, random (each once), got 'sorted'"),
    ("load_orders", [], "load_orders must be a non-empty list"),
    ("regimes", ["io-bound"], "regimes must be a non-empty list of cached, memory-limited (each once), got 'io-bound'"),
    ("inserts", 0, "inserts must be an integer >= 1, got 0"),
    ("fetches", 2.5, "fetches must be an integer >= 1, got 2.5"),
    ("limited_memory_mb", 64, "limited_memory_mb must be an integer >= 128, got 64"),
    ("limited_buffer_pool_mb", 600, "limited_buffer_pool_mb=600 must be below limited_memory_mb=512"),
    ("inserts", 400, "inserts x max_repetitions = 1,200 must be at most the table's 750 orders"),
    ("warmup", True, "warmup must be false in the load_fetch workload"),
    ("idle_seconds", 0, "idle_seconds must be a number > 0 in the load_fetch workload"),
    ("engines", ["sqlite", "oracle"], "does not support engine 'oracle'"),
    ("engines", ["sqlite", "postgress"], "unknown engine 'postgress'"),
])
def test_bad_value_is_named_before_anything_starts(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        validate_parameters({**GOOD, name: value})
    assert fragment in str(err.value)


def test_an_embedded_engine_needs_the_cached_regime():
    with pytest.raises(ParameterError, match="engine 'sqlite': it runs in this process: regimes"):
        validate_parameters({**GOOD, "regimes": ["memory-limited"]})


def test_too_little_disk_is_refused_before_anything_starts(monkeypatch, tmp_path):
    from benchlib.run import parameters

    monkeypatch.setattr(parameters, "_free_bytes", lambda folder: 10 * 2 ** 30)  # 10 GiB free everywhere
    with pytest.raises(ParameterError, match=r"rows=100,000,000 needs about 18.6 GiB for its staged CSV files but "):
        validate_parameters({**GOOD, "rows": 100_000_000})
    with pytest.raises(ParameterError, match=r"engine 'sqlite': rows=30,000,000 needs about 14.0 GiB of disk \(2 "
                                             r"loaded table\(s\) at ~150 bytes per row"):
        validate_parameters({**GOOD, "rows": 30_000_000})
    skipped = {}  # from "all available": skipped with the reason, not refused
    kept = LoadFetchParams.narrow_engines(["sqlite", "rocksdb"], skipped, {**GOOD, "rows": 30_000_000}, explicit=False)
    assert kept == [] and "14.0 GiB" in skipped["rocksdb"]
    assert validate_parameters({**GOOD, "rows": 3_000_000}).engines == ["sqlite", "rocksdb"]


def test_the_main_load_comes_first_and_carries_the_operations():
    params = validate_parameters(GOOD)
    loads = params.loads(get_engine("mariadb-myrocks"))
    assert [(o, m.name, main) for o, m, main in loads] == [
        ("key", "LOAD DATA LOCAL INFILE", True), ("random", "LOAD DATA LOCAL INFILE", False),
        ("key", "LOAD DATA, rocksdb_bulk_load", False), ("random", "LOAD DATA, rocksdb_bulk_load", False)]
    only_random = validate_parameters({**GOOD, "load_orders": ["random"], "variant_loads": False})
    assert [(o, main) for o, _, main in only_random.loads(get_engine("postgres"))] == [("random", True)]
    workload = load_fetch.WORKLOAD
    starts = workload.starts(params)
    assert [(s.engine, s.labels["regime"]) for s in starts] == [("sqlite", "cached"), ("rocksdb", "cached")]
    first = [s.name for s in workload.steps(params, starts[0], 1)]
    assert first[0] == GENERATE and first[1].startswith("load key order") and first[-3:] == [*INSERT.values(), FETCH]
    assert GENERATE not in [s.name for s in workload.steps(params, starts[1], 1)]
    assert [s.name for s in workload.steps(params, starts[1], 2)] == [*INSERT.values(), FETCH]


def test_servers_get_their_buffer_and_memory_limit_per_regime():
    params = LoadFetchParams(**{**GOOD, "engines": ["postgres", "mysql", "sqlite"],
                                "regimes": ["cached", "memory-limited"]})
    starts = {(s.engine, s.labels["regime"]): s for s in load_fetch.WORKLOAD.starts(params)}
    assert ("sqlite", "memory-limited") not in starts
    assert starts[("postgres", "cached")].config["shared_buffers"] == "64MB"
    assert starts[("postgres", "memory-limited")].memory_limit_mb == 512
    mysql = starts[("mysql", "memory-limited")].config
    assert mysql["innodb_buffer_pool_size"] == "16M" and mysql["local_infile"] == "ON"


def test_every_engine_with_a_dialect_has_a_bulk_path_and_says_how_it_sizes_its_table():
    supported = [k for k, e in ENGINES.items() if load_fetch.supports(e)]
    assert {"postgres", "mysql", "mariadb", "mariadb-myrocks", "sqlite", "duckdb", "rocksdb", "ferretdb"} <= set(supported)
    assert not {"cockroachdb", "yugabytedb", "tidb", "oracle", "sqlserver"} & set(supported)
    for key in supported:
        d = load_fetch.dialect_for(get_engine(key))
        assert d.methods and d.sizes_source and d.structure in dialects.STRUCTURES and d.disk_bytes_per_row > 0, key
    assert {k: load_fetch.dialect_for(get_engine(k)).structure for k in ("mariadb", "mariadb-myrocks", "rocksdb")} == {
        "mariadb": "B-tree", "mariadb-myrocks": "LSM", "rocksdb": "LSM"}


def test_key_value_rows_keep_key_order_and_decode_back():
    from benchlib.datagen import ssb

    rows = list(next(ssb.LineOrder(ssb.Scale.from_lineorders(5000), seed=1).chunks("random")).rows())[:500]
    encoded = [dialects._key_value(r) for r in rows]
    assert [dialects._decode(k, v) for k, v, _ in encoded] == rows
    by_bytes = [r for _, r in sorted(zip((k for k, _, _ in encoded), rows))]
    assert by_bytes == sorted(rows, key=lambda r: (r[0], r[1]))
    assert all(index.startswith(r[2].to_bytes(4, "big")) for (_, _, index), r in zip(encoded, rows))


def test_generator_scales_are_ten_times_apart_and_several_chunks_long():
    assert generator_scales(3000) == (393_216, 3_932_160)
    assert generator_scales(44_951_022) == (4_495_102, 44_951_022)


def _ops(values: dict[str, list[float]], operation: str = FETCH) -> pd.DataFrame:
    rows = [{"regime": "cached", "engine": e, "operation": operation, "repetition": i + 1, "latency_mean": v,
             **{c: v for c in analysis.SUMMARY_VALUES if c != "latency_mean"}}
            for e, vs in values.items() for i, v in enumerate(vs)]
    return pd.DataFrame(rows)


def test_operation_means_carry_student_t_intervals_and_welch_verdicts():
    summary = analysis.summarize_operations(_ops({"mariadb": [4.0, 5.0, 6.0], "mariadb-myrocks": [8.0, 9.0, 10.0]}))
    row = summary.set_index("engine").loc["mariadb"]
    assert row["latency_mean"] == 5.0 and row["n"] == 3
    assert row["latency_mean_ci95"] == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    c = analysis.contrast(summary, "cached", FETCH, "mariadb", "mariadb-myrocks", "latency_mean")
    assert c["ratio"] == pytest.approx(1.8) and c["beyond_noise"] is True
    same = analysis.summarize_operations(_ops({"sqlite": [1.0, 2.0, 3.0], "rocksdb": [1.5, 2.0, 2.5]}))
    assert analysis.contrast(same, "cached", FETCH, "sqlite", "rocksdb", "latency_mean")["beyond_noise"] is False
    assert analysis.contrast(same, "cached", FETCH, "sqlite", "duckdb", "latency_mean") is None


def test_key_order_ratios_and_seed_beside_this_run():
    loads = pd.DataFrame([
        {"regime": "memory-limited", "engine": "mysql", "order": o, "method": "LOAD DATA LOCAL INFILE", "main": o == "key",
         "rows": 200_000, "wall_s": s, "rows_per_s": 200_000 / s, "engine_bytes_per_row": b, "datadir_bytes_per_row": b}
        for o, s, b in (("key", 3.0, 137.0), ("random", 18.0, 184.0))])
    ratios = analysis.key_order(loads).iloc[0]
    assert ratios["time_ratio"] == pytest.approx(6.0) and ratios["size_ratio"] == pytest.approx(184 / 137)
    reference = results.reference("seed001_load_fetch")
    assert list(reference["system"]) == ["MySQL", "AlloyDB", "MongoDB", "RocksDB", "Google Datastore", "BigTable"]
    # The published rates are rows / load time (to the seed's rounding) where the seed gives one.
    published = reference[reference["load_rate_source"] == "published"]
    assert np.allclose(published["rows"] / published["load_s"], published["load_rows_per_s"], rtol=1e-3)
    cached = loads.assign(regime="cached", engine_cpu_s=2.5, settle_cpu_s=0.5)
    summary = analysis.summarize_operations(pd.concat([_ops({"mysql": [2.0, 2.0]}, INSERT["key"]),
                                                       _ops({"mysql": [1.0, 1.0]})]))
    beside = analysis.beside_seed(reference, cached, summary)
    assert not [c for c in beside.columns if "core" in c]  # no per-core figure beside the seed
    mysql = beside[beside["system"] == "MySQL"].set_index("source")
    assert mysql.at["seed 001", "load_rows_per_s"] == 24_491 and mysql.at["seed 001", "rate_source"] == "published"
    assert math.isnan(mysql.at["seed 001", "rows_per_engine_cpu_s"])  # the seed gives no CPU
    assert mysql.at["this run", "load_rows_per_s"] == pytest.approx(200_000 / 3.0)
    assert mysql.at["this run", "rows_per_engine_cpu_s"] == pytest.approx(200_000 / 3.0)  # 2.5 s + 0.5 s settle
    assert mysql.at["this run", "insert_ms"] == 2.0 and mysql.at["this run", "fetch_ms"] == 1.0
    assert mysql.at["seed 001", "fetch_ms"] == 1.5 and mysql.at["seed 001", "fetch_text"] == "1-2"
    # Hostile read 44 (07 #1): this run's fetch latency holds its driver's CPU; it is given less it.
    assert mysql.at["this run", "fetch_text"] == "1 (0.999 less driver CPU)"
    # Hostile read 44 (07 ferretdb #1): an engine that is not the seed's system is its stand-in.
    stand_ins = analysis.beside_seed(reference, pd.concat([cached, cached.assign(engine="ferretdb")]), summary)
    assert not mysql.at["this run", "stand_in"]
    assert stand_ins.set_index(["system", "source"]).at[("MongoDB", "this run"), "stand_in"]
    assert set(beside[beside["system"] == "BigTable"]["source"]) == {"seed 001"}
    assert beside.set_index("system").at["BigTable", "rate_source"].startswith("derived")


# Durability readings as this host's starts stored them (the base caveat "Durability as each engine started").
READINGS = {
    "mariadb": "innodb_flush_log_at_trx_commit=1, log_bin=0, sync_binlog=0, innodb_doublewrite=ON, "
               "innodb_flush_method=O_DIRECT",
    "mariadb-myrocks": "rocksdb_flush_log_at_trx_commit=1, log_bin=0, sync_binlog=0, rocksdb_use_direct_reads=0",
    "mysql": "innodb_flush_log_at_trx_commit=1, log_bin=1, sync_binlog=1, innodb_doublewrite=ON, "
             "innodb_flush_method=O_DIRECT",
    "postgres": "synchronous_commit=on, fsync=on, full_page_writes=on, wal_sync_method=fdatasync",
    "sqlite": "synchronous=2, journal_mode=delete",
    "rocksdb": "WriteOptions sync=false (rocksdict's default): a write returns once it is in the WAL's OS buffer, "
               "not on disk",
    "duckdb": "no durability setting to read: DuckDB writes its WAL at each commit and checkpoints it into the "
              "database file past checkpoint_threshold",
}


def test_what_a_commit_waits_for_is_read_from_each_start_not_assumed():
    waits = {e: analysis.commit_waits(r) for e, r in READINGS.items()}
    assert waits == {"mariadb": True, "mariadb-myrocks": True, "mysql": True, "postgres": True, "sqlite": True,
                     "rocksdb": False, "duckdb": None}
    assert analysis.commit_waits("innodb_flush_log_at_trx_commit=2, log_bin=0") is False
    assert analysis.commit_waits("synchronous_commit=on, fsync=off") is False
    assert analysis.commit_waits("synchronous=1, journal_mode=wal") is False
    assert analysis.reads_direct(READINGS["mariadb"]) is True and analysis.reads_direct(READINGS["mariadb-myrocks"]) is False
    assert analysis.reads_direct(READINGS["postgres"]) is None


SQLITE = analysis.Side(reading=READINGS["sqlite"], mib=13.8, cache_mib=float("nan"))
ROCKSDB = analysis.Side(reading=READINGS["rocksdb"], mib=7.84, memtable_mib=64.0, lookup_in_python=True)


def test_differences_between_the_two_sides_are_read_from_the_run_not_assumed():
    # The review's run: SQLite (synchronous=2) against RocksDB (sync=false), RocksDB's 7.8 MiB inside
    # one 64 MiB memtable, its fetch lookup in Python.
    assert analysis.differences(SQLITE, ROCKSDB).flags() == ["durability", "below_memtable", "lookup"]
    # MariaDB against MyRocks with an 8 MiB pool: O_DIRECT against the page cache where InnoDB's 20 MiB
    # outgrows its cache and MyRocks' 7.4 MiB (compressed) does not.
    innodb = analysis.Side(reading=READINGS["mariadb"], mib=20.0, cache_mib=8.0)
    myrocks = analysis.Side(reading=READINGS["mariadb-myrocks"], mib=7.37, memtable_mib=64.0, cache_mib=8.0)
    assert analysis.differences(innodb, myrocks).flags() == ["direct_reads", "below_memtable", "cache_pressure"]
    # Both tables inside a 256 MiB pool: reads past the page cache change nothing there.
    cached = [analysis.Side(reading=s.reading, mib=s.mib, memtable_mib=s.memtable_mib, cache_mib=256.0)
              for s in (innodb, myrocks)]
    assert analysis.differences(*cached).flags() == ["below_memtable"]
    # Same durability, same reads, the LSM tree beyond its memtable, both tables in cache: nothing.
    big = analysis.Side(reading=READINGS["mariadb-myrocks"], mib=900.0, memtable_mib=64.0, cache_mib=1024.0)
    assert analysis.differences(big, big).flags() == []


def test_a_cache_is_set_beside_the_tables_size_on_disk_never_said_to_hold_it():
    """Hostile read 44 (07 #3): "MyRocks's (7.37 MiB) fits its 8 MiB": 7.37 MiB is compressed on disk,
    the block cache holds uncompressed blocks (29.3 engine reads per fetch)."""
    from benchlib.workloads.load_fetch.report import LoadFetchReport

    innodb = analysis.Side(reading=READINGS["mariadb"], mib=20.0, cache_mib=8.0)
    myrocks = analysis.Side(reading=READINGS["mariadb-myrocks"], mib=7.37, memtable_mib=64.0, cache_mib=8.0)
    text = LoadFetchReport._difference_text("cache_pressure", {"mariadb": innodb, "mariadb-myrocks": myrocks},
                                            {"mariadb": "MariaDB", "mariadb-myrocks": "MariaDB MyRocks"})
    assert "MariaDB's table (20 MiB on disk) outgrows its 8 MiB cache" in text
    assert "MariaDB MyRocks's is 7.37 MiB on disk against 8 MiB" in text and "fits" not in text


MAIN_LOADS = pd.DataFrame([("cached", e, r) for e, r in (("mariadb", 40_000.0), ("mariadb-myrocks", 50_000.0),
                                                        ("sqlite", 120_000.0), ("rocksdb", 140_000.0))],
                          columns=["regime", "engine", "rows_per_s"])


def _summary() -> pd.DataFrame:
    """Three repetitions per engine and operation: MyRocks' fetch costs the engine twice InnoDB's
    CPU while its latency (PyMySQL decoding ~300 rows) is within noise; RocksDB's insert is 30x
    faster than SQLite's, which syncs at each commit."""
    figures = {("mariadb", FETCH): (2.5, 250.0), ("mariadb-myrocks", FETCH): (2.6, 500.0),
               ("sqlite", FETCH): (1.2, 1200.0), ("rocksdb", FETCH): (1.6, 1700.0)}
    for engine, (ms, us) in (("mariadb", (0.40, 300.0)), ("mariadb-myrocks", (0.42, 310.0)),
                             ("sqlite", (0.90, 310.0)), ("rocksdb", (0.03, 80.0))):
        figures.update({(engine, op): (ms, us) for op in INSERT.values()})
    rows = [{"regime": "cached", "engine": e, "operation": op, "repetition": i + 1,
             "latency_mean": ms * (1 + 0.03 * (i - 1)), "engine_cpu_us": us * (1 + 0.02 * (i - 1)),
             **{c: 1.0 for c in analysis.SUMMARY_VALUES if c not in ("latency_mean", "engine_cpu_us")}}
            for (e, op), (ms, us) in figures.items() for i in range(3)]
    return analysis.summarize_operations(pd.DataFrame(rows))


def _findings() -> pd.DataFrame:
    reference = results.reference("seed001_load_fetch")
    pairs = [c for c in dialects.COMPARISONS if c.kind == dialects.STRUCTURE]
    innodb = analysis.Side(reading=READINGS["mariadb"], mib=20.0, cache_mib=256.0)
    myrocks = analysis.Side(reading=READINGS["mariadb-myrocks"], mib=7.4, memtable_mib=64.0, cache_mib=256.0)
    differences = {(pairs[0], "cached"): analysis.differences(innodb, myrocks),
                   (pairs[1], "cached"): analysis.differences(SQLITE, ROCKSDB)}
    return analysis.findings(MAIN_LOADS, _summary(), pairs, ["cached"], differences_of=differences,
                             host={pairs[0]: 1.02, pairs[1]: 1.02},
                             seed={c: analysis.seed_ratios(reference, c) for c in pairs})


def test_findings_verdicts_come_from_the_one_rule_and_the_differences():
    found = _findings().set_index(["engine", "step", "metric"])
    verdict = found["verdict"]
    # One load each: a ratio, never a verdict.
    assert verdict[("mariadb-myrocks", "load", "load rate")] == "untested"
    assert found.at[("mariadb-myrocks", "load", "load rate"), "ratio"] == pytest.approx(1.25)
    # The server pair: the engines' CPU apart from the shared driver tells them apart; latency does not.
    assert verdict[("mariadb-myrocks", FETCH, "engine CPU")] == "worse"
    assert verdict[("mariadb-myrocks", FETCH, "latency")] == "noise"
    # Different work is never judged: SQLite syncs each commit, RocksDB does not; RocksDB's lookup is Python.
    assert {verdict[("rocksdb", op, m)] for op in INSERT.values() for m in ("latency", "engine CPU")} == {"not_comparable"}
    assert {verdict[("rocksdb", FETCH, m)] for m in ("latency", "engine CPU")} == {"not_comparable"}
    # A difference that changes a row's meaning is cited by it, and only by the rows it changes.
    # An LSM side inside one memtable changes the whole question, not a row: the answer says it once
    # (hostile read 40, 07 item 3: the same sentence twice, per base), no row cites it.
    assert not any(c.startswith("below_memtable") for cited in found["caveats"] for c in cited)
    assert not any(c.startswith("durability") for c in found.at[("rocksdb", FETCH, "latency"), "caveats"])
    # Seed 001's RocksDB over MySQL stands beside both pairs: load 91,364 / 24,491 rows/s, fetch 8 / 1.5 ms;
    # its insert ("< 1 ms" against 5 ms) is a bound, not a ratio.
    assert found.at[("rocksdb", "load", "load rate"), "seed_ratio"] == pytest.approx(91364 / 24491)
    assert found.at[("mariadb-myrocks", FETCH, "latency"), "seed_ratio"] == pytest.approx(8 / 1.5)
    assert found.loc[("rocksdb", INSERT["key"], "latency"), "seed_ratio"] != found.loc[("rocksdb", INSERT["key"], "latency"), "seed_ratio"]
    # The answer's rows: per pair the load, the insert's and the fetch's engine CPU (one metric: hostile read 46e, ferretdb #4) (issue 37.7:
    # a fetch compared by the engines' own CPU, the driver apart), but never two sides that did
    # different work (hostile read 40, 07 item 5): RocksDB's insert and fetch are not comparisons.
    marked = _findings()
    marked = marked[marked["headline"] == True]  # noqa: E712
    assert list(zip(marked["engine"], marked["step"], marked["metric"])) == [
        (e, s, m) for e in ("mariadb-myrocks", "rocksdb")
        for s, m in (("load", "load rate"), (INSERT["key"], "engine CPU"), (FETCH, "engine CPU"))
        if e == "mariadb-myrocks" or s == "load"]


def test_the_answer_states_the_load_on_the_same_path_and_only_the_btree_lsm_pairs():
    # Hostile read 46e, 07 #1: MyRocks's bulk-load mode skips the memtable and the unique checks; the
    # answer compares plain LOAD DATA on both engines, the bulk path is a variant row out of the answer.
    loads = pd.DataFrame({"regime": "cached", "engine": ["mariadb", "mariadb-myrocks", "mariadb-myrocks"],
                          "order": "key", "method": ["LOAD DATA LOCAL INFILE", "LOAD DATA LOCAL INFILE",
                                                     "LOAD DATA, rocksdb_bulk_load"],
                          "main": [True, True, False], "rows_per_s": [88_700.0, 63_700.0, 111_800.0]})
    bulk = {m.name for d in dialects.DIALECTS.values() for m in d.methods if m.bulk_mode}
    stated = analysis.answer_loads(loads, bulk)
    assert sorted(stated["rows_per_s"]) == [63_700.0, 88_700.0, 111_800.0]
    pairs = list(dialects.COMPARISONS)  # FerretDB's pair too: its rows never answer B-tree vs LSM
    found = analysis.findings(stated, _summary(), pairs, ["cached"], differences_of={}, host={}, seed={})
    head = found[found["headline"] == True]  # noqa: E712
    assert set(head["engine"]) == {"mariadb-myrocks", "rocksdb"} - ({"rocksdb"} - set(found["engine"]))
    load = found[found["metric"] == "load rate"].set_index("step")
    same = load.loc["load (LOAD DATA LOCAL INFILE)"]
    assert same["ratio"] == pytest.approx(63_700 / 88_700) and same["headline"] == True  # noqa: E712
    variant = load.loc["load (LOAD DATA, rocksdb_bulk_load against LOAD DATA LOCAL INFILE)"]
    assert variant["ratio"] == pytest.approx(111_800 / 88_700) and variant["headline"] == False  # noqa: E712


def test_a_pair_with_no_shared_load_path_answers_its_main_loads_naming_both():
    # Hostile read 46e, 07 ferretdb #3: COPY FROM STDIN against insert_many, both named.
    loads = pd.DataFrame({"regime": "cached", "engine": ["postgres", "ferretdb"], "order": "key",
                          "method": ["COPY FROM STDIN", "insert_many"], "main": True,
                          "rows_per_s": [200_000.0, 9_600.0]})
    ferret = [c for c in dialects.COMPARISONS if c.subject == "ferretdb"]
    found = analysis.findings(loads, _summary(), ferret, ["cached"], differences_of={}, host={}, seed={})
    load = found[found["metric"] == "load rate"]
    assert list(load["step"]) == ["load (insert_many against COPY FROM STDIN)"]
    assert list(load["headline"]) == [True]


def test_a_fetch_row_carries_the_plan_its_engine_named_with_no_index():
    # Hostile read 46e, 07 ferretdb #1: FerretDB 1.x's Seq Scan, from its own explain, beside its ratio.
    from benchlib.data import findings as F
    from benchlib.workloads.load_fetch.report import PHRASES

    pairs = [c for c in dialects.COMPARISONS if c.kind == dialects.STRUCTURE]
    plans = {("mariadb-myrocks", "cached"): "MariaDB MyRocks's plan: full scan"}
    found = analysis.findings(MAIN_LOADS, _summary(), pairs, ["cached"], differences_of={}, host={}, seed={},
                              plans=plans)
    fetch = found[(found["engine"] == "mariadb-myrocks") & (found["step"] == FETCH)]
    assert set(fetch["plan_note"]) == {" (MariaDB MyRocks's plan: full scan)"}
    assert set(found[found["step"] != FETCH]["plan_note"]) == {""}
    assert set(found[found["engine"] == "rocksdb"]["plan_note"]) == {""}
    assert "(cached) (MariaDB MyRocks's plan: full scan):" in F.render(fetch.iloc[0].to_dict(), PHRASES)


def test_rendered_findings_match_the_approved_snapshot(snapshot):
    from benchlib.data import findings as F
    from benchlib.workloads.load_fetch.report import PHRASES

    found = _findings()
    rendered = [f"{F.render(row, PHRASES, with_seed=True)} [{', '.join(row['caveats'])}]"
                for row in found.to_dict("records")]
    assert rendered + [F.certainty(found), F.seed_line(found)] == snapshot


def test_a_run_without_a_btree_lsm_pair_asks_what_it_compares():
    # Issue 37.12: FerretDB beside the PostgreSQL it runs on is no B-tree against an LSM tree.
    import nbformat

    from benchlib import batch
    from benchlib.workloads.load_fetch.report import question

    by_subject = {c.subject: c for c in dialects.COMPARISONS}
    ferret = question([by_subject["ferretdb"]])
    assert "FerretDB" in ferret and "PostgreSQL" in ferret and "LSM" not in ferret
    structure = dialects.QUESTIONS[dialects.STRUCTURE]
    assert question([by_subject["rocksdb"], by_subject["ferretdb"]]) == question([]) == structure
    # The notebook's title is the question a B-tree/LSM run answers.
    cell = nbformat.read(batch.find_notebook("07-btree-vs-lsm"), as_version=4).cells[0]
    assert cell.source.splitlines()[0] == f"# {structure}"


def test_rocksdb_memtable_size_is_read_from_the_options_file_it_writes(tmp_path):
    from benchlib.engines.rocksdb import _open

    db = _open(tmp_path / "bench.rocksdb")  # a real RocksDB through rocksdict, as the workload opens it
    db.close()
    assert dialects.rocksdb_write_buffer_size(tmp_path) == 64 * 2 ** 20  # RocksDB's default, as rocksdict keeps it
    assert dialects.rocksdb_write_buffer_size(tmp_path / "nowhere") is None


def test_duckdb_names_the_access_path_of_its_fetch(tmp_path):
    """Issue 37.7: DuckDB's fetch by customer is an index scan of its ART index (a few hundred
    matches, under index_scan_max_count), which then fetches each match's 17 columns by row id out of
    compressed column segments. A real DuckDB, the table as the workload creates and loads it."""
    import duckdb

    from benchlib.datagen import ssb
    from benchlib.engines.clients import SqlSession

    generator = ssb.LineOrder(ssb.Scale.from_lineorders(30_000), seed=1)
    staged = dialects.Staged(tmp_path / "lineorder.csv", "key", generator)
    ssb.write_csv(generator.chunks("key"), staged.path)
    session = SqlSession(duckdb.connect(str(tmp_path / "bench.duckdb")), get_engine("duckdb").client)
    try:
        h = dialects.Handle(None, session, session)
        d = load_fetch.dialect_for(get_engine("duckdb"))
        d.create(h, "lineorder")
        d.load(session, d.methods[0], staged, "lineorder")
        custkey = int(generator.rows_per_customer().nonzero()[0][0])
        assert d.plan(h, "lineorder", custkey) == "Index Scan"
        assert load_fetch.dialect_for(get_engine("sqlite")).plan(h, "lineorder", custkey) is None
    finally:
        session.close()


def test_a_ratio_within_the_hosts_drift_states_its_bound_and_whose_host_was_slower():
    """Hostile read 40 (07 item 2): "76.1x (1.67-3,471) within the host's drift" read as "no
    difference". The line states what the run shows (at least 1.67x) and whose host ran slower
    (hostile read 43, 07 #1: signed, so the same ratio with the base's host slower is decided)."""
    from benchlib.data import findings as F
    from benchlib.workloads.load_fetch.report import PHRASES

    contrast = {"ratio": 76.1, "ratio_low": 1.67, "ratio_high": 3471.0, "beyond_noise": True, "mean": 76.1,
                "base_mean": 1.0, "n": 3, "base_n": 3}
    row = F.finding(engine="ferretdb", base_engine="postgres", step=FETCH, metric="latency", unit="ms",
                    contrast=contrast, regime="cached", host_factor=1.9) | {"plan_note": ""}  # as analysis.findings'
    assert row["verdict"] == "drift"
    fields = F.fields_of(row, PHRASES)
    assert (fields["bound"], fields["host_words"]) == ("≥1.67x", "this engine's host ran 1.9x slower")
    assert F.render(row, PHRASES).endswith(": ≥1.67x, but this engine's host ran 1.9x slower")
    assert F.finding(engine="ferretdb", base_engine="postgres", step=FETCH, metric="latency", unit="ms",
                     contrast=contrast, regime="cached", host_factor=1 / 1.9)["verdict"] == "worse"
    assert PHRASES.template("drift") != PHRASES.default  # its own wording, not "not told apart"


def test_every_decided_row_the_headline_leaves_out_is_stated_one_line_per_comparison():
    """Hostile read 41 (07): the answer omitted every decided comparison (FerretDB against
    PostgreSQL, 4 rows). Decided rows outside the headline are stated, one line per comparison; the
    undecided and not-comparable ones stay in the table."""
    from benchlib.data import findings as F
    from benchlib.workloads.load_fetch.report import DECIDED_PHRASES, decided_elsewhere

    found = _findings()
    assert decided_elsewhere(found).empty  # the only decided row (MyRocks' fetch CPU) is a headline row
    fetch_cpu = (found["engine"] == "mariadb-myrocks") & (found["step"] == FETCH) & (found["metric"] == "engine CPU")
    found.loc[fetch_cpu, "headline"] = False  # as another comparison's rows are (FerretDB's)
    elsewhere = decided_elsewhere(found)
    assert len(elsewhere) == 1 and elsewhere["verdict"].map(lambda v: F.Verdict(v).decided).all()
    assert not elsewhere["headline"].any()
    assert ("mariadb-myrocks", INSERT["random"], "engine CPU") not in set(zip(elsewhere["engine"], elsewhere["step"],
                                                                             elsewhere["metric"]))  # within noise
    lines = F.render_lines(elsewhere.assign(cite=""), DECIDED_PHRASES)
    assert len(lines) == elsewhere["engine"].nunique()
    # Hostile read 42 (07 #2): the row's footnote mark (FerretDB's Seq Scan note) sits beside its ratio.
    marked = F.render_lines(elsewhere.assign(cite="<sup>4</sup>"), DECIDED_PHRASES)
    assert [m.count("<sup>4</sup>") for m in marked] == [len(elsewhere)]
    # Hostile read 44 (07 ferretdb #2): a decided row on an operation the headline already decided the
    # same way (the fetch's latency beside its headline engine CPU) restates it: not stated again.
    found.loc[fetch_cpu, "headline"] = True
    verdict = found.loc[fetch_cpu, "verdict"].iloc[0]
    fetch_latency = (found["engine"] == "mariadb-myrocks") & (found["step"] == FETCH) & (found["metric"] == "latency")
    found.loc[fetch_latency, ["verdict", "headline"]] = [verdict, False]
    assert fetch_latency.sum() == 1 and decided_elsewhere(found).empty
    found.loc[fetch_cpu, "headline"] = False  # the fetch not in the headline: both its rows are stated
    assert len(decided_elsewhere(found)) == 2


def test_two_sides_that_did_different_work_are_off_the_chart():
    """Hostile read 41 (07): RocksDB/SQLite's not-comparable points were drawn on the main chart."""
    from benchlib.workloads.load_fetch.report import charted

    drawn = charted(_findings())
    assert "not_comparable" not in set(drawn["verdict"]) and not drawn["higher_is_better"].astype(bool).any()
    assert "mariadb-myrocks" in set(drawn["engine"])


# FerretDB 1.24's explain of {"lo_custkey": 7} over an indexed collection, as a real one answered
# it here (3,000 documents): the filter reached PostgreSQL as JSONB containment, which the B-tree
# expression index on lo_custkey cannot serve.
FERRETDB_EXPLAIN = {"queryPlanner": {"Plan": {
    "Node Type": "Seq Scan", "Relation Name": "t_f10c3da3", "Schema": "bench", "Output": ["_jsonb"],
    "Filter": "((t_f10c3da3._jsonb -> 'lo_custkey'::text) @> '7'::jsonb)"}},
    "explainVersion": "1", "filterPushdown": True, "sortPushdown": False, "limitPushdown": False, "ok": 1.0}


def test_a_fetch_whose_own_plan_names_no_index_is_said_so_beside_its_number():
    """Hostile read 41 (07): FerretDB's fetch cost 160x PostgreSQL's engine CPU: did the filter reach
    the index? FerretDB's own explain names the scan; one that names no index is cited beside the row."""
    from benchlib.workloads.load_fetch.dialects import plan_nodes
    from benchlib.workloads.load_fetch.report import names_no_index

    assert plan_nodes(FERRETDB_EXPLAIN["queryPlanner"]) == ["Seq Scan"]
    parallel = {"Plan": {"Node Type": "Gather", "Plans": [{"Node Type": "Parallel Seq Scan"}]}}
    assert plan_nodes(parallel) == ["Gather", "Parallel Seq Scan"]
    mongo = {"winningPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN"}}}
    assert plan_nodes(mongo) == ["FETCH", "IXSCAN"]
    assert names_no_index("Seq Scan") and names_no_index("Parallel Seq Scan") and names_no_index("COLLSCAN")
    assert not names_no_index("Index Scan") and not names_no_index("Bitmap Index Scan") and not names_no_index("IXSCAN")


def test_an_unindexed_fetch_is_blamed_on_the_filter_only_where_the_plan_says_so():
    """Hostile read 42 (07 #1): a Seq Scan for a fetch matching ~10% of the rows is the planner's
    own choice as likely as a missed index; only FerretDB's filterPushdown=false says the filter
    never reached the index."""
    from benchlib.workloads.load_fetch.report import NO_INDEX_NOTES, no_index_note

    def which(plan, share, base_plan=None):
        return next(k for k, t in NO_INDEX_NOTES.items()
                    if t.format(engine="E", plan=plan, share=share or 0, base="B", base_plan=base_plan)
                    == no_index_note("E", plan, share, "B", base_plan))

    assert which("Seq Scan", 297 / 3000) == "share"
    assert which("Seq Scan", 1 / 44_000) == "selective"
    assert which("Seq Scan", None) == "plan"
    assert which("Seq Scan, filter not pushed down", 297 / 3000) == "not_pushed"
    # Hostile read 43 (07 #2): where the base's own plan on the same rows names an index, that is
    # said, and no share of rows stands in for a planner's reason.
    assert which("Seq Scan", 297 / 3000, "Bitmap Index Scan") == "base"
    assert which("Seq Scan", 297 / 3000, "Seq Scan") == "share"
    assert "planner" not in " ".join(NO_INDEX_NOTES.values())


# PostgreSQL 17's `explain` of one customer's fetch over the workload's table (its customer index
# built before the load), in the text form psql prints: a bitmap scan names its index node second.
POSTGRES_EXPLAIN = [("Bitmap Heap Scan on lineorder_key  (cost=4.52..49.75 rows=30 width=98)",),
                    ("  Recheck Cond: (lo_custkey = 7)",),
                    ("  ->  Bitmap Index Scan on lineorder_key_custkey  (cost=0.00..4.51 rows=30 width=0)",),
                    ("        Index Cond: (lo_custkey = 7)",)]


def test_postgresqls_fetch_plan_is_read_as_the_other_engines_are():
    """Hostile read 43 (07 #2): FerretDB's bar carried its backend's plan, PostgreSQL's none."""
    import re

    from benchlib.workloads.load_fetch.dialects import POSTGRES
    from benchlib.workloads.load_fetch.report import names_no_index

    assert POSTGRES.plan_sql and "analyze" not in POSTGRES.plan_sql  # the planner's choice, nothing run
    text = " ".join(v for row in POSTGRES_EXPLAIN for v in row)
    assert re.search(POSTGRES.plan_pattern, text).group(1) == "Bitmap Index Scan"
    assert not names_no_index("Bitmap Index Scan")
    for node in ("Index Only Scan", "Index Scan", "Seq Scan", "Parallel Seq Scan"):
        assert re.search(POSTGRES.plan_pattern, f"{node} on lineorder_key  (cost=0.28..8.30 rows=1)").group(1) == node


def test_the_findings_table_leaves_out_the_rows_of_two_sides_that_did_different_work():
    """Hostile read 42 (07 #5): six not-comparable RocksDB/SQLite rows filled the findings table."""
    from benchlib.workloads.load_fetch.report import shown_rows

    found = _findings()
    different = int((found["verdict"] == "not_comparable").sum())
    shown, out = shown_rows(found)
    assert different > 0 and len(out) == different and len(shown) == len(found) - different
    assert (out["verdict"] == "not_comparable").all() and not (shown["verdict"] == "not_comparable").any()


def test_the_answers_count_counts_the_rows_the_findings_table_shows():
    """Hostile read 43 (07 #4): "3 of 21 comparisons decided" counted six rows the table leaves out."""
    from benchlib.data import findings as F
    from benchlib.workloads.load_fetch.report import counted_findings, shown_rows

    found = _findings()  # the counting rule alone, over known findings
    shown, out = shown_rows(found)
    assert len(out) > 0 and len(counted_findings(found)) == len(shown)
    line = F.certainty(counted_findings(found))
    assert f"of {len(shown)} comparisons" in line and "not comparable" not in line


def test_the_scale_line_states_what_was_read_not_compaction_or_levels():
    """Hostile read 43 (07 #3): "no compaction and no level below the first" was inferred from a size."""
    from benchlib.workloads.load_fetch.report import SCALE_LINE

    assert "compaction" not in SCALE_LINE and "level" not in SCALE_LINE
    assert "after a flush" in SCALE_LINE and "write_buffer_size" in SCALE_LINE


def test_the_method_names_only_the_regimes_and_pairs_that_ran():
    # Hostile read 46e, 07 ferretdb #2: a FerretDB run's Method listed MyRocks, RocksDB and a
    # memory-limited regime that never ran.
    from benchlib.workloads.load_fetch.report import scope_lines

    params = {"cached_buffer_pool_mb": 128, "limited_buffer_pool_mb": 16, "limited_memory_mb": 512}
    ferret = [c for c in dialects.COMPARISONS if c.subject == "ferretdb"]
    lines = scope_lines(ferret, ["cached"], params)
    assert len(lines) == 2 and "128 MiB" in lines[0] and "PostgreSQL against FerretDB" in lines[1]
    assert not any(word in " ".join(lines) for word in ("memory-limited", "MyRocks", "RocksDB", "SQLite"))
    both = scope_lines([c for c in dialects.COMPARISONS if c.kind == dialects.STRUCTURE],
                       ["cached", "memory-limited"], params)
    assert "512 MiB" in both[1] and "MyRocks" in both[2] and "FerretDB" not in both[2]


def test_the_host_factor_is_taken_per_regime_from_that_regimes_starts():
    # Hostile read 46e, 07 #3: one median per engine over both regimes' starts hid a cached pair
    # measured on a host 2.3x slower than the memory-limited one.
    import json

    labels = {i: json.dumps({"regime": r}) for i, r in (("a", "cached"), ("b", "cached"), ("c", "memory-limited"),
                                                       ("d", "memory-limited"))}
    m = pd.DataFrame({"instance_id": ["a", "b", "c", "d", "a"],
                      "labels": [labels["a"], labels["b"], labels["c"], labels["d"], None]})
    assert results.start_labels(m, "regime") == {"a": "cached", "b": "cached", "c": "memory-limited", "d": "memory-limited"}
    loops = pd.DataFrame({"instance_id": ["a", "b", "c", "d"], "engine": ["mariadb", "mariadb-myrocks"] * 2,
                          "calibration_s": [0.196, 0.156, 0.085, 0.083]})
    regime = loops["instance_id"].map(results.start_labels(m, "regime"))
    cached = results.loop_factor(loops[regime == "cached"], "mariadb-myrocks", "mariadb")
    assert cached == pytest.approx(0.156 / 0.196)
    pair = [c for c in dialects.COMPARISONS if c.subject == "mariadb-myrocks"]
    found = analysis.findings(MAIN_LOADS, _summary(), pair, ["cached"], differences_of={},
                              host={(pair[0], "cached"): cached, pair[0]: 1.0}, seed={})
    timed = found[found["unit"] == "ms"]
    assert not timed.empty and list(timed["host_factor"]) == pytest.approx([cached] * len(timed))
    # A load, one each, is tested by no band: its row names no host speed (the caption's line neither).
    assert found[found["unit"] == "rows/s"]["host_factor"].isna().all()
    from benchlib.data import findings as F
    loads = pd.DataFrame({"regime": "cached", "engine": ["mariadb", "mariadb-myrocks"], "rows_per_s": [1e5, 5e4]})
    slow = analysis.findings(loads, _summary(), pair, ["cached"], differences_of={},
                             host={(pair[0], "cached"): 2.0}, seed={})
    assert F.host_pairs_line(slow[slow["unit"] == "rows/s"]) == "" and F.host_pairs_line(slow) != ""


def test_an_engine_whose_insert_or_fetch_did_different_work_is_named_for_the_seed_table():
    # Hostile read 46e, 07 #4: RocksDB (sync=false, a fetch in Python) set beside MySQL in the seed table.
    assert analysis.not_comparable(_findings()) == {("rocksdb", "insert"), ("rocksdb", "fetch")}
