"""Clusters as engines, on real containers: readiness waits for membership, a write on one node is
there on another, every node's cgroup is measured (stored per node and summed), and a stopped or
failed cluster leaves no container and no network behind. Bad cluster parameters fail before any
container starts."""
import pytest

import benchlib
from benchlib.data import results
from benchlib.host.docker_host import docker_client
from benchlib.core.errors import EngineStartError, EngineUnavailableError, ParameterError
from benchlib.containers.lifecycle import LABEL_OWNER, managed_networks
from benchlib.host.owners import owner_label
from benchlib.run.measure import Run, node_instance_id
from engine_cases import runnable

pytestmark = pytest.mark.docker


@pytest.fixture
def leftovers(benchlib_containers):
    """Containers and networks this process owns that outlive the test's clusters."""
    containers_before = benchlib_containers()

    def ours() -> tuple[set, set]:
        networks = {n.id for n in managed_networks() if n.attrs["Labels"].get(LABEL_OWNER) == owner_label()}
        return benchlib_containers() - containers_before, networks

    return ours


def _node_windows(run_id, store):
    """Each measured window's engine CPU as stored: the cluster's sum and its nodes' rows."""
    m = results.measurements(run_id, store)
    cpu = m[(m["metric"] == "cpu_time") & m["scope"].isin(["server", "node"])]
    return cpu, results.instances(run_id, store)


def _check_measured_per_node(eng, store, nodes: int) -> None:
    """One idle baseline and one phase through the one measurement path: every node's cgroup is a
    row of its own, and the cluster's row is their sum, window by window."""
    with Run("cluster-test", {"engine": eng.key}, store=store) as run:
        meter = run.meter(eng)
        meter.baseline(0.3)
        session = eng.session()
        session.execute("create table m (id int primary key, value float)")
        with meter.phase("insert", check=lambda: eng.query("select count(*) from m")[0][0], expect=300):
            for i in range(300):
                session.execute(f"insert into m values ({i}, {i})")
    cpu, instances = _node_windows(run.run_id, store)
    node_rows = instances[instances["kind"] == "node"]
    assert len(node_rows) == nodes
    assert set(node_rows["container_id"]) == {n.container_id for n in eng.nodes}
    assert all(cg.endswith(cid) for cg, cid in zip(node_rows["cgroup"], node_rows["container_id"]))
    cluster_row = instances[instances["kind"] == "cluster"].iloc[0]
    assert set(cluster_row["container_id"].split(",")) == set(node_rows["container_id"])
    for window in ("baseline", "phase", "settle"):
        w = cpu[cpu["window"] == window]
        summed = w[w["scope"] == "server"]["value"]
        per_node = w[w["scope"] == "node"]
        assert len(summed) == 1 and len(per_node) == nodes, (window, w)
        assert set(per_node["instance_id"]) == {node_instance_id(cluster_row["instance_id"], n.name) for n in eng.nodes}
        assert summed.iloc[0] == pytest.approx(per_node["value"].sum(), abs=1e-9)
    phase = cpu[(cpu["window"] == "phase") & (cpu["scope"] == "node")]
    assert (phase["value"] > 0).all(), phase  # every node worked: the entry node wrote, the others replicated
    m = results.measurements(run.run_id, store)
    net = m[(m["metric"] == "net_rx_bytes") & (m["scope"] == "node") & (m["window"] == "phase")]
    assert len(net) == nodes and (net["value"] > 0).all()  # every node received write sets, WAL or acks


def _check_nodes_read_apart(eng, store, sender: str, idle: str) -> None:
    """Issue 37 item 6: Galera's two followers both read 247.4 bytes received per row. Each node's
    figures must come from its own counters: a result only `sender` sends moves its bytes sent,
    not `idle`'s, in the same window."""
    with Run("cluster-test", {"engine": eng.key}, store=store) as run:
        meter = run.meter(eng)
        reader = eng.session(node=sender)
        with meter.phase("read", settle=False):
            reader.execute("select repeat('x', 2000000)")
    m = results.measurements(run.run_id, store)
    sent = m[(m["metric"] == "net_tx_bytes") & (m["scope"] == "node")].set_index("instance_id")["value"]
    by_node = {i.rpartition(":")[2]: v for i, v in sent.items()}
    assert by_node[sender] > 2e6 > 20 * by_node[idle], by_node


@pytest.mark.parametrize("key", [runnable("mariadb-galera")])
def test_galera_forms_replicates_and_is_measured_per_node(key, store, leftovers):
    with benchlib.start(key) as eng:
        assert [n.name for n in eng.nodes] == ["node1", "node2", "node3"]
        assert eng.provenance["startup_seconds"] < 60
        # What a commit waits for, read from the entry node once the cluster formed.
        assert "wsrep_on=1" in eng.provenance["durability"] or "wsrep_on=ON" in eng.provenance["durability"]
        for node in eng.sql_nodes:  # readiness waited for every member, and each one is synced
            status = dict(eng.query("show status where variable_name in ('wsrep_cluster_size', "
                                    "'wsrep_local_state_comment', 'wsrep_ready')", eng.session(node=node)))
            assert status == {"wsrep_cluster_size": "3", "wsrep_local_state_comment": "Synced",
                              "wsrep_ready": "ON"}, (node, status)
        writer = eng.session()
        writer.execute("create table r (id int primary key, value varchar(20))")
        writer.execute("insert into r values (1, 'written on node1')")
        reader = eng.session(node="node3")
        reader.execute("set session wsrep_sync_wait = 1")  # a causal read: waits for what the group committed
        assert reader.execute("select value from r where id = 1") == [("written on node1",)]
        _check_measured_per_node(eng, store, 3)
        _check_nodes_read_apart(eng, store, sender="node3", idle="node2")
        network = eng.provenance["nodes"]
    assert leftovers() == (set(), set())
    assert all(n["container_id"] not in {c.id for c in docker_client().containers.list(all=True)} for n in network)


@pytest.mark.parametrize("key", [runnable("postgres-replica-sync")])
def test_postgres_sync_replica_waits_for_the_standby(key, store, leftovers):
    with benchlib.start(key) as eng:
        assert [(n.role, n.name) for n in eng.nodes] == [("primary", "primary1"), ("standby", "standby1")]
        rows = eng.query("select application_name, state, sync_state from pg_stat_replication")
        assert rows == [("standby1", "streaming", "sync")]
        assert eng.query("show synchronous_commit") == [("remote_apply",)]
        assert "synchronous_commit=remote_apply" in eng.provenance["durability"]
        assert "standby sync_state=sync" in eng.provenance["durability"], eng.provenance["durability"]
        standby = eng.session(node="standby1")
        assert standby.execute("select pg_is_in_recovery()") == [(True,)]
        primary = eng.session()
        primary.execute("create table r (id int primary key, value text)")
        primary.execute("insert into r values (1, 'on the primary')")
        # remote_apply: the commit returned once the standby applied it, so it is there at once.
        assert standby.execute("select value from r") == [("on the primary",)]
        _check_measured_per_node(eng, store, 2)
    assert leftovers() == (set(), set())


@pytest.mark.parametrize("key", [runnable("mysql-group-replication")])
def test_group_replication_forms_and_replicates(key, leftovers):
    with benchlib.start(key) as eng:
        members = eng.query("select member_host, member_state, member_role from "
                            "performance_schema.replication_group_members order by member_host")
        assert members == [("node1", "ONLINE", "PRIMARY"), ("node2", "ONLINE", "SECONDARY"),
                           ("node3", "ONLINE", "SECONDARY")]
        assert "group_replication_single_primary_mode=1" in eng.provenance["durability"], eng.provenance["durability"]
        eng.query("create table r (id int primary key, value varchar(20))")
        eng.query("insert into r values (1, 'on the primary')")
        reader = eng.session(node="node2")
        reader.execute("set session group_replication_consistency = 'BEFORE'")  # waits for the group's commits
        assert reader.execute("select value from r") == [("on the primary",)]
    assert leftovers() == (set(), set())


def test_bad_cluster_parameters_fail_before_any_container(leftovers):
    from benchlib.workloads import write_cost

    with pytest.raises(ParameterError, match=r"nodes of mariadb-galera must be >= 3 \(quorum.*got 2"):
        benchlib.start("mariadb-galera", nodes=2)
    with pytest.raises(ParameterError, match="nodes of postgres must be 1: it is a single-node engine, got 3"):
        benchlib.start("postgres", nodes=3)
    with pytest.raises(ParameterError, match=r"nodes of tidb-cluster must be >= 5 \(one PD, three TiKV"):
        benchlib.start("tidb-cluster", nodes=4)
    with pytest.raises(ParameterError, match="nodes of postgres-replica-sync must be <= 7"):
        benchlib.start("postgres-replica-sync", nodes=8)
    with pytest.raises(ParameterError, match="postgres-replica-sync is a cluster: its nodes' data directories"):
        benchlib.start("postgres-replica-sync", data_volume=True)
    base = dict(rows=10, rows_per_txn=[1], rows_per_stmt=[1], server_generated=False, repetitions=1,
                max_repetitions=1, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0.1,
                max_settle_seconds=1, pk_kind="uuid", cluster_nodes={}, engine_config={})
    with pytest.raises(ParameterError, match="engines lists 'mariadb-galera', a cluster"):
        write_cost.validate_parameters({**base, "engines": ["mariadb-galera"], "clusters": []})
    with pytest.raises(ParameterError, match="clusters lists 'postgres', which is not a cluster"):
        write_cost.validate_parameters({**base, "engines": ["sqlite"], "clusters": ["postgres"]})
    with pytest.raises(ParameterError, match="its single node mariadb is not among the engines"):
        write_cost.validate_parameters({**base, "engines": ["sqlite"], "clusters": ["mariadb-galera"]})
    if runnable("mariadb-galera").marks:
        pytest.skip("mariadb-galera cannot run here: its node count is checked only for runnable clusters")
    with pytest.raises(ParameterError, match=r"nodes of mariadb-galera must be >= 3"):
        write_cost.validate_parameters({**base, "engines": ["mariadb"], "clusters": ["mariadb-galera"],
                                        "cluster_nodes": {"mariadb-galera": 2}})
    assert leftovers() == (set(), set())


@pytest.mark.parametrize("key", ["cockroachdb-cluster", "yugabytedb-cluster", "tidb-cluster"])
def test_official_only_clusters_are_unavailable_offline(key, leftovers):
    marks = runnable(key).marks
    if not marks:
        pytest.skip(f"{key}'s official images can be had here")
    reason = marks[0].kwargs["reason"]
    assert "official image only" in reason and "no registry reachable" in reason, reason
    with pytest.raises(EngineUnavailableError, match="official image only"):
        with benchlib.start(key):
            pass
    assert leftovers() == (set(), set())


@pytest.mark.parametrize("key", [runnable("mariadb-galera")])
def test_a_node_that_fails_is_named_with_its_log_and_nothing_is_left(key, leftovers):
    with pytest.raises(EngineStartError) as err:
        with benchlib.start(key, config={"innodb_buffer_pool_size": "plenty"}):
            pass
    message = str(err.value)
    assert "mariadb-galera node node1" in message and "last log lines" in message
    assert "innodb_buffer_pool_size" in message or "innodb-buffer-pool-size" in message, message
    assert leftovers() == (set(), set())



@pytest.mark.parametrize("key", [runnable("postgres-replica-sync")])
def test_write_cost_runs_a_cluster_beside_its_single_node(key, store, leftovers):
    """The write-cost workload's cluster choice, end to end at a tiny scale: the cluster's cells
    are checked on every node, its figures are the sum of its nodes', and the report's replication
    table compares it with its single node cell by cell."""
    from benchlib.workloads import write_cost

    params = write_cost.validate_parameters(dict(
        engines=["postgres"], clusters=[key], cluster_nodes={}, engine_config={}, rows=200, rows_per_txn=[1, 200],
        rows_per_stmt=[1], server_generated=False, repetitions=2, max_repetitions=2, ci_target=0.5,
        warmup=False, pin_cpus=False, idle_seconds=0.2, max_settle_seconds=1, pk_kind="uuid"))
    result = write_cost.run(params, store=store)
    assert result.errors == {}
    m = results.measurements(result.run_id, store)
    checks = m[(m["engine"] == key) & (m["phase"] == "insert")].drop_duplicates("seq")
    assert set(checks["check_name"]) == {"rows on every node"} and set(checks["check_status"]) == {"ok"}
    assert len(checks) == 2 * 2  # two repetitions of two cells
    latency = m[(m["metric"] == "txn_latency_p50") & (m["window"] == "phase")]
    assert set(latency["engine"]) == {"postgres", key} and (latency["value"] > 0).all()

    report = write_cost.WriteCostReport(result.run_id, store)
    r = report.replication
    assert len(r) == 2 and set(r["single"]) == {"postgres"} and (r["n"] == 2).all()
    assert ((r["base_mean"] > 0) & (r["mean"] > 0)).all()
    assert r["ratio"].to_numpy() == pytest.approx((r["mean"] / r["base_mean"]).to_numpy())
    nodes = report.nodes
    assert set(nodes["node"]) == {"primary1", "standby1"} and len(nodes) == 2 * 2
    # The nodes' shares of their cluster's CPU add up to the whole in every cell.
    assert nodes.groupby(["rows_per_txn", "rows_per_stmt"])["share"].sum().to_numpy() == pytest.approx(1.0)
    found = report.findings()
    assert set(found[found["headline"] == True]["kind"]) == {"replication"}  # noqa: E712
    assert report.answer_lines()[0].startswith("PostgreSQL + sync replica vs PostgreSQL, ")
    assert leftovers() == (set(), set())
