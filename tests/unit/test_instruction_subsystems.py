"""The subsystem map: known functions of each engine family land where their source says they
belong, whatever their object; the rest is "other", never dropped."""
import pytest

from benchlib.counters.instruction_subsystems import FAMILIES, OTHER, SUBSYSTEMS, classify, has_map


@pytest.mark.parametrize("engine, function, obj, subsystem", [
    ("postgres", "XLogInsertRecord", "postgres", "WAL / redo log"),
    ("postgres", "_bt_compare", "postgres", "B-tree / index"),
    ("postgres", "heap_insert", "postgres", "table storage"),
    ("postgres", "LWLockAcquire", "postgres", "locks / latches"),
    ("postgres", "ExecInterpExpr", "postgres", "executor"),
    ("postgres", "base_yyparse", "postgres", "parser / planner"),
    ("postgres", "AllocSetAlloc", "postgres", "memory allocation"),
    ("postgres", "0x00000000001a2b30", "libcrypto.so.3", "crypto / random"),
    ("postgres@15", "StartReadBuffer", "postgres", "buffer pool"),
    ("postgres@16", "ReadBuffer_common", "postgres", "buffer pool"),  # a version not declared: by its name
    ("mysql", "btr_cur_optimistic_insert(unsigned long, btr_cur_t*)", "mysqld", "B-tree / index"),
    ("mysql", "log_buffer_reserve(log_t&, unsigned long)", "mysqld", "WAL / redo log"),
    ("mariadb", "row_ins_clust_index_entry_low(unsigned long, ...)", "mariadbd", "table storage"),
    ("mariadb", "buf_page_get_gen(page_id_t, ...)", "mariadbd", "buffer pool"),
    ("mariadb-myrocks", "rocksdb::MemTable::Add(...)", "ha_rocksdb.so", "LSM memtable / compaction"),
    ("mariadb-myrocks", "rocksdb::log::Writer::AddRecord(...)", "ha_rocksdb.so", "WAL / redo log"),
    ("mariadb-myrocks", "btr_cur_search_to_nth_level(...)", "mariadbd", "B-tree / index"),
    ("sqlite", "sqlite3BtreeInsert", "libsqlite3.so.0", "B-tree / index"),
    ("sqlite", "sqlite3VdbeExec", "libsqlite3.so.0", "executor"),
    ("sqlite", "sqlite3VdbeAddOp3", "libsqlite3.so.0", "parser / planner"),
    ("sqlite", "_PyEval_EvalFrameDefault", "libpython3.11.so.1.0", "Python interpreter / driver"),
    ("duckdb", "duckdb::ART::Insert(...)", "_duckdb.cpython-311-x86_64-linux-gnu.so", "B-tree / index"),
    ("duckdb", "0x0000000001234560", "_duckdb.cpython-311-x86_64-linux-gnu.so", "other"),
    ("duckdb", "duckdb::WriteAheadLog::WriteInsert(...)", "_duckdb.cpython-311-x86_64-linux-gnu.so",
     "WAL / redo log"),
    ("postgres", "_int_malloc", "libc.so.6", "memory allocation"),
    ("postgres", "__memcpy_avx_unaligned_erms", "libc.so.6", "libc"),
    ("postgres", "some_function_nobody_mapped", "postgres", "other"),
])
def test_the_subsystem_map_places_known_functions(engine, function, obj, subsystem):
    assert classify(function, obj, engine) == subsystem


def test_every_rule_names_a_declared_subsystem_and_the_seed_engines_have_maps():
    assert {name for rules in FAMILIES.values() for name, _, _ in rules} <= set(SUBSYSTEMS)
    for engine in ("postgres", "mysql", "mariadb", "mariadb-myrocks", "sqlite", "duckdb"):
        assert has_map(engine), engine
    assert not has_map("mongodb")
    assert classify("anything", "mongod", "mongodb") == OTHER
