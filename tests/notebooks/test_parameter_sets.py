"""Every parameter set of every notebook passes its workload's validator on this host: a set that
`make report` or a user would run must not fail at its first cell (a price missing for an engine
that joined "all available" did)."""
import pytest

from benchlib import batch
from benchlib.core.errors import ParameterError

pytestmark = pytest.mark.docker  # "all available" asks Docker which engines can run

SETS = [(nb, name) for nb in batch.notebooks() for name in batch.parameter_sets(nb)]


@pytest.mark.parametrize("nb, name", SETS, ids=[f"{nb.stem}-{name}" for nb, name in SETS])
def test_parameter_set_is_valid_here(nb, name):
    try:
        batch.check_parameters(nb, batch.load_params(batch.params_file(nb, name)))
    except ParameterError as exc:
        # A seed-scale set on a small disk is refused by design, in one line, before anything starts.
        if "GiB free" in str(exc):
            pytest.skip(f"this host's disk is too small for {nb.stem} {name}: {exc}")
        raise


@pytest.mark.parametrize("nb", batch.notebooks(), ids=[nb.stem for nb in batch.notebooks()])
def test_stored_values_are_valid_here_and_their_engines_are_run_by_the_tiny_smoke_run(nb):
    """What nbval over notebooks/ used to check by running each notebook a second time ("Run All"
    at the stored values succeeds), split into what it rests on: the stored values pass the
    workload's validator on this host, and every engine they start is one the tiny set starts, so
    the smoke run (tests/notebooks/test_notebooks.py) executes every cell with them. That the other
    stored values are tiny.yaml's is tests/unit/test_packaging.py's check."""
    stored = batch.engines_to_run(batch.check_parameters(nb, {}))
    tiny = batch.engines_to_run(batch.check_parameters(nb, batch.load_params(batch.params_file(nb, "tiny"))))
    assert set(stored) <= set(tiny), f"{nb.stem}: stored engines {stored} beyond the tiny run's {tiny}"


def test_report_batch_runs_the_dml_write_cost_and_btree_notebooks_with_their_extra_sets():
    plan = batch.plan_batch("default")
    dml = [p for p in plan if p.notebook.stem.startswith("01-")]
    # default last: notebook 06 compares the newest DML run (the default one) with its rerun
    assert [p.params_file for p in dml] == ["more-engines.yaml", "instructions.yaml", "default.yaml"]
    assert [p.output_name for p in dml] == ["01-dml-cpu-cost--more-engines", "01-dml-cpu-cost--instructions",
                                            "01-dml-cpu-cost--default"]
    # The instruction set: the servers under valgrind, their valgrind images prepared with the others.
    assert dml[1].params["counter"] == "valgrind" and dml[1].valgrind == dml[1].engines
    # The engines the default set leaves out (FerretDB; seed 000's pull-only ones where they can be
    # pulled), beside PostgreSQL: no engine measured twice at two scales in one main job.
    left_out = dml[0].params["engines"]["all available except"]
    assert "postgres" not in left_out and set(left_out) | {"postgres"} == set(dml[2].params["engines"])
    # FerretDB's smaller set runs before the B-tree/LSM notebook's default (insert_many at ~8,000 rows/s).
    btree = [p for p in plan if p.notebook.stem.startswith("07-")]
    assert [p.params_file for p in btree] == ["ferretdb.yaml", "default.yaml"]
    assert btree[0].params["engines"] == ["postgres", "ferretdb"] and "ferretdb" not in btree[1].params["engines"]
    # The write sweep, then the clusters beside their single nodes.
    write = [p for p in plan if p.notebook.stem.startswith("05-")]
    # Between them, the instruction set: the commit / statement / row parts counted under valgrind.
    assert [p.params_file for p in write] == ["default.yaml", "instructions.yaml", "clusters.yaml"]
    assert write[1].params["counter"] == "valgrind" and write[1].valgrind == write[1].engines
    assert write[2].params["clusters"] == "all available" and write[2].params["engines"] == ["postgres", "mariadb",
                                                                                              "mysql"]
    others = [p for p in plan if not p.notebook.stem.startswith(("01-", "05-", "07-"))]
    assert {p.params_file for p in others} == {"default.yaml"} and all(p.output_name is None for p in others)


def test_a_malformed_batches_file_is_named(tmp_path, monkeypatch):
    import shutil

    root = tmp_path / "project"
    shutil.copytree(batch.get_settings().params_dir, root / "papermill_params")
    shutil.copytree(batch.get_settings().notebooks_dir, root / "notebooks")
    (root / "papermill_params" / batch.BATCHES_FILE).write_text("default:\n  01-dml-cpu-cost: nosuchset\n")
    monkeypatch.setenv("BENCHLIB_PROJECT_ROOT", str(root))
    with pytest.raises(batch.ParameterError, match="01-dml-cpu-cost must be a list.*'nosuchset'"):
        batch.plan_batch("default", only=["01"])
    (root / "papermill_params" / batch.BATCHES_FILE).write_text("default:\n  01-dml-cpu-cost: [nosuchset]\n")
    with pytest.raises(batch.ParameterError, match="no parameter set 'nosuchset'"):
        batch.plan_batch("default", only=["01"])
