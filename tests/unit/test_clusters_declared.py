"""Cluster declarations without containers: node plans and their names, node counts refused with
the reason, every cluster's single node in the registry, the sums of node samples and of per-node
perf readings (parsed from real `perf stat -G` output of two containers)."""
from pathlib import Path

import pytest

from benchlib.host import cgroups, perf
from benchlib.engines import CLUSTERS, ENGINES, get_engine
from benchlib.core.errors import ParameterError
from benchlib.run.validation import engine_selection

PERF = Path(__file__).resolve().parents[1] / "fixtures" / "perf"


def test_plans_name_nodes_by_role_in_start_order():
    tidb = get_engine("tidb-cluster").cluster
    plan = tidb.plan(6)
    assert [n.name for n in plan] == ["pd1", "tikv1", "tikv2", "tikv3", "tikv4", "tidb1"]
    assert plan[2].names() == ["tikv1", "tikv2", "tikv3", "tikv4"] and plan[2].names("pd") == ["pd1"]
    assert tidb.expected_members(plan) == 4  # the members query counts TiKV stores
    replica = get_engine("postgres-replica-sync").cluster
    assert [(n.role, n.index, n.first) for n in replica.plan(3)] == [
        ("primary", 1, True), ("standby", 1, True), ("standby", 2, False)]
    assert replica.entry_role == "primary"


@pytest.mark.parametrize("key, nodes, message", [
    ("mariadb-galera", 2, "nodes of mariadb-galera must be >= 3 (quorum: a 2-node Galera cluster stops accepting "
                          "writes when either node is lost), got 2"),
    ("mariadb-galera", 8, "nodes of mariadb-galera must be <= 7"),
    ("mysql-group-replication", 3.0, "nodes of mysql-group-replication must be an integer >= 3, got 3.0"),
    ("postgres-replica-async", True, "must be an integer >= 2, got True"),
    ("postgres-replica-sync", 1, "must be >= 2 (a primary and at least one standby), got 1"),
])
def test_node_counts_are_refused_with_the_reason(key, nodes, message):
    with pytest.raises(ParameterError) as err:
        get_engine(key).cluster.plan(nodes, key)
    assert message in str(err.value)


def test_every_cluster_names_its_single_node_and_is_kept_apart_from_single_nodes():
    assert not set(CLUSTERS) & set(ENGINES)
    for key, engine in CLUSTERS.items():
        assert engine.kind == "cluster" and engine.variant_of in ENGINES, key
        assert engine.cluster.topology and engine.cluster.min_reason, key
        engine.cluster.plan(engine.cluster.nodes, key)  # the declared default is a valid plan
    with pytest.raises(ParameterError, match="engines lists 'mariadb-galera', a cluster"):
        engine_selection(["mariadb-galera"], workload="the dml workload")
    with pytest.raises(ParameterError, match="clusters lists 'mariadb', which is not a cluster"):
        engine_selection(["mariadb"], clusters=True, name="clusters")
    assert engine_selection([], clusters=True) == ([], {})


def _sample(cpu, rx, peak):
    return cgroups.Sample(cpu, cpu // 2, cpu - cpu // 2, 0, 100, peak, peak, rx, rx // 10)


def test_a_cluster_sample_is_the_sum_of_its_nodes_and_keeps_them():
    nodes = (_sample(1_000, 500, 10), _sample(3_000, 700, 20))
    total = cgroups.Sample.total(nodes)
    assert (total.cpu_ns, total.user_ns, total.net_rx_bytes, total.memory_peak_bytes) == (4_000, 2_000, 1_200, 30)
    assert total.parts == nodes
    missing = cgroups.Sample.total((nodes[0], cgroups.Sample(5, 2, 3, None, None, None, None)))
    assert missing.cpu_ns == 1_005 and missing.io_read_bytes is None and missing.net_rx_bytes is None  # never 0


def test_perf_readings_of_two_cgroups_are_summed_with_each_kept():
    text = (PERF / "cgroups_two.csv").read_text()
    by_cgroup = perf.parse_csv_by_cgroup(text)
    assert len(by_cgroup) == 2
    first, second = by_cgroup.values()
    clock = perf.Reading.total((first["task-clock"], second["task-clock"]))
    assert clock.status == "ok" and clock.value == pytest.approx(first["task-clock"].value + second["task-clock"].value)
    assert clock.parts == (first["task-clock"], second["task-clock"])
    instructions = perf.Reading.total((first["instructions:u"], second["instructions:u"]))
    assert instructions.status == first["instructions:u"].status  # this host: unsupported in both, never 0
    idle = perf.Reading("task-clock", None, "msec", "not_counted")
    assert perf.Reading.total((idle, first["task-clock"])).value == first["task-clock"].value
    assert perf.Reading.total((idle, idle)).status == "not_counted"
