"""The load-insert-fetch workload without engines: parameters checked before anything starts
(each message naming the value), the plan of loads and steps, the key-value row layout, and the
report's arithmetic on frames with known answers."""
import math

import numpy as np
import pandas as pd
import pytest

from benchlib import results
from benchlib.engines import ENGINES, get_engine
from benchlib.errors import ParameterError
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
    from benchlib import parameters

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


def _confounders(a, b, *, mib, cache=None, settle=None, sides=None, readings=READINGS):
    return analysis.confounders(a, b, reading=readings, mib=mib, memtable_mib={b: 64.0},
                                settle_cpu_s=settle or {}, python_side=sides or {}, cache_mib=cache or {})


def test_a_pair_is_not_a_test_of_the_structure_where_the_run_sees_other_differences():
    # The review's run: SQLite (synchronous=2) against RocksDB (sync=false), RocksDB's 7.8 MiB in a
    # 64 MiB memtable, its fetch lookup in Python.
    sides = {"sqlite": "index lookup and row decoding in C", "rocksdb": "index scan and decoding in Python"}
    embedded = _confounders("sqlite", "rocksdb", mib={"sqlite": 13.8, "rocksdb": 7.84}, settle={"rocksdb": 0.0063},
                            sides=sides)
    assert len(embedded) == 3
    assert embedded[0].startswith("durability differs (sqlite syncs to disk at each commit: synchronous=2")
    assert "rocksdb's whole data (7.84 MiB) is smaller than one memtable (64 MiB)" in embedded[1] and "0.0063 s" in embedded[1]
    assert "in Python" in embedded[2] and "in C" in embedded[2]
    # MariaDB against MyRocks with an 8 MiB pool: O_DIRECT against the page cache, MyRocks' 7.4 MiB
    # on disk (compressed) beside an 8 MiB cache while InnoDB's 20 MiB is not: not the same pressure.
    limited = _confounders("mariadb", "mariadb-myrocks", mib={"mariadb": 20.0, "mariadb-myrocks": 7.37},
                           cache={"mariadb": 8.0, "mariadb-myrocks": 8.0})
    assert limited[0] == "mariadb reads past the OS page cache (O_DIRECT), mariadb-myrocks through it"
    assert limited[2].startswith("not the same cache pressure: mariadb-myrocks's table is 7.37 MiB on disk")
    assert "mariadb's 20 MiB against 8 MiB" in limited[2]
    # Same durability, same reads, the LSM tree beyond its memtable, both tables in cache: nothing to say.
    same = {"a": READINGS["mariadb-myrocks"], "b": READINGS["mariadb-myrocks"]}
    assert _confounders("a", "b", mib={"a": 900.0, "b": 700.0}, cache={"a": 1024.0, "b": 1024.0},
                        readings=same) == []


def test_the_lowest_figure_is_named_only_with_the_engines_it_is_not_told_apart_from():
    # The review's fetch: SQLite 0.814 ± 0.141 ms against PostgreSQL 0.872 ± 0.184 (n=3): not told apart;
    # MySQL's 4.92 ms is.
    summary = analysis.summarize_operations(_ops({"sqlite": [0.76, 0.81, 0.87], "postgres": [0.80, 0.86, 0.95],
                                                  "mysql": [4.5, 4.9, 5.3]})).set_index("engine")
    assert analysis.not_told_apart(summary, "latency_mean", "sqlite") == ["postgres"]


def test_report_wording_for_verdicts_and_shrinking_data_directories():
    from benchlib.workloads.load_fetch.report import _datadir_text, _verdict, regime_title

    assert _verdict(False, 3) == "not resolved at n=3" and _verdict(True, 3) == "beyond noise"
    assert _verdict(None) == "untested"
    assert _datadir_text(-9.12) == "-9.12 (shrank: earlier tables compacted)" and _datadir_text(50.2) == "50.2"
    assert regime_title("memory-limited") == "small buffer pool"


def test_rocksdb_memtable_size_is_read_from_the_options_file_it_writes(tmp_path):
    from benchlib.engines.rocksdb import _open

    db = _open(tmp_path / "bench.rocksdb")  # a real RocksDB through rocksdict, as the workload opens it
    db.close()
    assert dialects.rocksdb_write_buffer_size(tmp_path) == 64 * 2 ** 20  # RocksDB's default, as rocksdict keeps it
    assert dialects.rocksdb_write_buffer_size(tmp_path / "nowhere") is None
