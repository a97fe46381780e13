"""The instruction counter, a run parameter: auto (today's perf-or-nothing), perf or valgrind,
checked before any container starts, each refusal naming the value and saying why."""
import pytest

from benchlib import engines as registry
from benchlib.engines import base
from benchlib.counters import valgrind
from benchlib.core.errors import ParameterError
from benchlib.run.parameters import counter_problem
from benchlib.host.perf import PerfSupport
from benchlib.workloads.dml import validate_parameters

GOOD = dict(engines=["sqlite"], rows=10, repetitions=1, max_repetitions=1, ci_target=0.05, warmup=False,
            pin_cpus=False, idle_seconds=0.1, vacuum=True, pk_kind="uuid", engine_config={}, max_settle_seconds=1)


def test_a_set_without_a_counter_keeps_todays_behaviour():
    assert validate_parameters(GOOD).counter == "auto"
    assert validate_parameters(GOOD).as_record()["counter"] == "auto"  # stored with the run


def test_an_unknown_counter_is_named():
    with pytest.raises(ParameterError, match=r"^counter must be one of auto, perf, valgrind, got 'callgrind'$"):
        validate_parameters({**GOOD, "counter": "callgrind"})


def test_valgrind_for_an_embedded_engine_without_a_child_driver_says_why_not():
    import yaml

    from benchlib.core.settings import get_settings
    from benchlib.workloads.load_fetch import validate_parameters as load_fetch

    assert validate_parameters({**GOOD, "counter": "valgrind"}).engines == ["sqlite"]  # a child driver: runs
    tiny = yaml.safe_load((get_settings().params_dir / "07-btree-vs-lsm" / "tiny.yaml").read_text())
    with pytest.raises(ParameterError) as err:
        load_fetch({**tiny, "ci_target": 0.05, "warmup": False, "pin_cpus": False, "engines": ["rocksdb"],
                    "counter": "valgrind"})
    assert str(err.value) == ("counter='valgrind' cannot count engine 'rocksdb': "
                              f"{registry.get_engine('rocksdb').no_valgrind_reason}")


@pytest.mark.docker  # its single node is a server: Docker is asked whether it can run
def test_valgrind_for_a_cluster_says_why_not():
    from benchlib.workloads.write_cost import validate_parameters as write_cost

    values = dict(engines=["postgres"], rows=10, rows_per_txn=[1], rows_per_stmt=[1],
                  server_generated=True, repetitions=1, max_repetitions=1, ci_target=0.05, warmup=False,
                  pin_cpus=False, idle_seconds=0.1, pk_kind="uuid", max_settle_seconds=1,
                  clusters=["postgres-replica-sync"], cluster_nodes={}, engine_config={}, counter="valgrind")
    with pytest.raises(ParameterError, match=r"^counter='valgrind' cannot count engine 'postgres-replica-sync': a "
                                             r"cluster: its nodes are not started under valgrind"):
        write_cost(values)


def test_every_engine_runs_under_valgrind_or_says_why():
    for key, engine in registry.ALL_ENGINES.items():
        problem = valgrind.engine_problem(engine)
        if engine.cluster is not None:
            assert problem and problem.startswith("a cluster"), key
        elif engine.embedded is not None and engine.embedded.child_driver is not None:
            assert problem is None, key
        elif engine.valgrind is None:
            assert problem and len(problem) > 40, key  # a sentence, not a placeholder
        else:
            assert problem is None and engine.server is not None, key
            assert engine.valgrind.program.startswith("/") and engine.valgrind.user, key
    assert {k for k, e in registry.ENGINES.items() if e.valgrind} == {"postgres", "mysql", "mariadb",
                                                                       "mariadb-myrocks"}
    assert {k for k, e in registry.ENGINES.items() if e.embedded and e.embedded.child_driver} == {"sqlite", "duckdb"}


def test_a_host_valgrind_does_not_run_on_is_refused_by_name():
    assert valgrind.host_problem("x86_64") is None and valgrind.host_problem("aarch64") is None
    assert valgrind.host_problem("sparc64") == "valgrind does not run on this host's architecture (sparc64)"


def test_perf_asked_for_where_perf_is_missing_says_why():
    missing = PerfSupport(False, "perf is not installed (Debian: apt-get install linux-perf)", None)
    assert counter_problem("perf", missing) == "perf is not installed (Debian: apt-get install linux-perf)"
    assert counter_problem("perf", PerfSupport(True, "ok", "perf version 6.1")) is None
    assert counter_problem("auto", missing) is None  # auto counts with whatever there is, as before


def test_the_wrapper_runs_every_other_invocation_natively():
    context = valgrind.build_context(registry.get_engine("postgres"))
    wrapper = context["callgrind-wrap.sh"]
    assert "'--boot'|'--single'|'-V'" in wrapper and "unset HOSTNAME HOST USER LOGNAME" in wrapper
    assert "--tool=callgrind --instr-atstart=no --trace-children=yes" in wrapper
    assert "set -- /usr/lib/postgresql/*/bin/postgres" in context["Dockerfile"]
    mariadb = valgrind.build_context(registry.get_engine("mariadb"))["callgrind-wrap.sh"]
    assert "--reuid=mysql" in mariadb


def test_cpu_figures_of_a_server_under_valgrind_are_renamed_and_nothing_else():
    assert [valgrind.not_native(m) for m in ("cpu_time", "cpu_user_time", "cpu_system_time", "maintenance_cpu_time",
                                             "cpu_time_under_valgrind", "instructions_user", "wall_time")] == [
        "cpu_time_under_valgrind", "cpu_user_time_under_valgrind", "cpu_system_time_under_valgrind",
        "maintenance_cpu_time_under_valgrind", "cpu_time_under_valgrind", "instructions_user", "wall_time"]
