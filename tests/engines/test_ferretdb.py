"""FerretDB over PostgreSQL, the offline MongoDB-wire stand-in: its image is built by benchlib's
recipe (FerretDB from its Go module, PostgreSQL from Debian), it answers as FerretDB with both
processes in one cgroup, refuses a wrong password, and runs the DML workload's operations."""
from dataclasses import replace

import pytest
from engine_cases import dml_roundtrip, runnable

import benchlib
from benchlib.workloads.dml import PK_KINDS

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("key", [runnable("ferretdb")])
def test_ferretdb_answers_as_itself_over_postgresql(key):
    from benchlib.host.docker_host import docker_client

    with benchlib.start(key) as eng:
        version = eng.provenance["server_version"]
        assert version.startswith("FerretDB 1.24.0 (MongoDB wire protocol"), version
        assert eng.provenance["image_source"] == "local-build" and "postgres@17 recipe" in eng.provenance["image_note"]
        processes = " ".join(row[-1] for row in docker_client().containers.get(eng.container_id).top()["Processes"])
        assert "ferretdb" in processes and "postgres" in processes  # both in the engine's cgroup
        refused = eng.engine.client.open(replace(eng.endpoint, password=eng.endpoint.password + "x"), 5)
        with pytest.raises(Exception, match="password authentication failed"):
            refused.ready()  # pymongo logs in lazily, on the first command
        refused.close()


@pytest.mark.parametrize("key, kind", [runnable("ferretdb", kind, id=f"ferretdb-{kind}") for kind in PK_KINDS])
def test_dml_operations_on_ferretdb(key, kind):
    with benchlib.start(key) as eng:
        dml_roundtrip(eng, kind)
