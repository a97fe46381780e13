"""RocksDB itself, as a library in this process through rocksdict (PyPI: RocksDB compiled into a
Python extension). The LSM tree without a SQL server around it: MyRocks (`mariadb-myrocks`) is
the same storage engine behind MariaDB. No SQL: a workload declares its own key layout (column
families as tables and indexes)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Embedded, Engine
from .clients import KeyValueClient


def _options():
    import rocksdict

    options = rocksdict.Options(raw_mode=True)  # bytes in, bytes out: no pickling of keys or values
    options.create_if_missing(True)
    return options


def _open(path: Path) -> Any:
    import rocksdict

    return rocksdict.Rdict(str(path), _options())


def _create_family(store: Any, name: str) -> Any:
    return store.create_column_family(name, _options())


def _rocksdb_version(path: Path) -> str:
    """The RocksDB inside rocksdict says its version only in the options file it writes."""
    for options_file in sorted(Path(path).glob("OPTIONS-*"), reverse=True):
        for line in options_file.read_text().splitlines():
            if line.strip().startswith("rocksdb_version="):
                return line.split("=", 1)[1].strip()
    return "unknown"


def _rocksdict_version() -> str:
    from importlib.metadata import version

    return version("rocksdict")


def _version(store: Any, path: Path) -> str:
    return f"RocksDB {_rocksdb_version(path)} (rocksdict {_rocksdict_version()})"


ENGINE = Engine(
    key="rocksdb",
    title="RocksDB",
    color="#0F7B6C",
    family="keyvalue",
    client=KeyValueClient(_open, _create_family, _version, needs=("rocksdict",)),
    embedded=Embedded(library=lambda: f"rocksdict=={_rocksdict_version()}", file_name="bench.rocksdb",
                      background_work=True),
    note="RocksDB 9 embedded through rocksdict with its default options (level compaction, Snappy-compressed "
         "blocks): an LSM tree in the notebook's process, its flushes and compactions "
         "on its own threads there (counted in that process's CPU and in its settle windows). No SQL and no "
         "secondary index of its own: a workload keeps its index as a second key space.",
    durability_note="WriteOptions sync=false (rocksdict's default): a write returns once it is in the WAL's OS "
                    "buffer, not on disk",
    no_valgrind_reason="a key-value store whose operations are Python callables on the store, which a child "
                       "process serving statements cannot run",
)
