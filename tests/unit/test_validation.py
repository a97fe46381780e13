"""Bad parameters fail with a message naming the value, before anything starts."""
import pytest

from benchlib.core.errors import ParameterError, UnknownEngineError
from benchlib.workloads.dml import validate_parameters

GOOD = dict(engines=["sqlite"], rows=10, repetitions=1, max_repetitions=1, ci_target=0.05, warmup=False,
            pin_cpus=False, idle_seconds=0.1, vacuum=True, pk_kind="uuid", engine_config={}, max_settle_seconds=1)


@pytest.mark.parametrize("name, value, fragment", [
    ("rows", 0, "rows must be an integer >= 2, got 0"),
    ("rows", -5, "got -5"),
    ("rows", 10.5, "got 10.5"),
    ("rows", "1000", "got '1000'"),
    ("rows", True, "got True"),
    ("repetitions", 0, "repetitions must be an integer >= 1, got 0"),
    ("idle_seconds", -1, "idle_seconds must be a number >= 0, got -1"),
    ("idle_seconds", 0, "idle_seconds must be a number > 0 in the dml workload (its costs are given net of the idle rate), got 0"),
    ("vacuum", "yes", "vacuum must be true or false, got 'yes'"),
    ("pk_kind", "serial", "pk_kind must be one of uuid, sequential, got 'serial'"),
    ("engines", [], "engines must be a non-empty list"),
    ("max_repetitions", 0, "max_repetitions must be an integer >= repetitions (1), got 0"),
    ("ci_target", 0, "ci_target must be a fraction between 0 and 1 (0.05 = 5%), got 0"),
    ("ci_target", 1.0, "got 1.0"),
    ("warmup", 1, "warmup must be true or false, got 1"),
    ("engine_config", {"postgres": {"fsync": "off"}}, "engine_config has settings for 'postgres', which is not "
                                                      "among the engines that run (sqlite)"),
    ("engine_config", {"sqlite": {"journal_mode": "wal"}}, "engine_config: sqlite is embedded"),
    ("engine_config", {"sqlite": "wal"}, "engine_config must map engine keys to settings"),
    ("engines", ["sqlite", "sqlite"], "lists an engine twice"),
])
def test_bad_value_is_named(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        validate_parameters({**GOOD, name: value})
    assert fragment in str(err.value)


def test_missing_and_unknown_parameters_are_named():
    params = {k: v for k, v in GOOD.items() if k != "rows"}
    with pytest.raises(ParameterError, match="missing rows; unknown row"):
        validate_parameters({**params, "row": 5})


def test_unknown_engine_is_named_with_the_known_ones():
    with pytest.raises(UnknownEngineError, match=r"unknown engine 'postgress'; known engines: postgres, "):
        validate_parameters({**GOOD, "engines": ["sqlite", "postgress"]})


def test_embedded_engines_validate_without_docker():
    params = validate_parameters({**GOOD, "engines": ["sqlite", "duckdb"]})
    assert params.engines == ["sqlite", "duckdb"] and params.skipped == {}


def test_an_engine_the_workload_does_not_support_is_named(monkeypatch):
    from benchlib.workloads.dml import dialects

    monkeypatch.delitem(dialects.DIALECTS, "duckdb")  # a workload without a DuckDB dialect
    with pytest.raises(ParameterError, match="the dml workload does not support engine 'duckdb'; it supports: "):
        validate_parameters({**GOOD, "engines": ["sqlite", "duckdb"]})
