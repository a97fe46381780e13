"""A change planted in a real engine is found by the cross-run comparison: two sweep runs of one
PostgreSQL, the second with half its CPU quota. A saturated engine burns its cores whatever it
achieves, so per window its CPU reads its quota either way: the comparison divides by transactions
and sets TPS and p95 beside the cost, and the throttled engine must be flagged on them. The drop is
not a full half: with sysbench on the host's other core the full-quota engine is not saturated
(one CI run measured 0.77x TPS), so the test asks for a flag and a drop of at
least a tenth, not for 0.5x."""
import pytest

from benchlib.host import cpus
from benchlib.run import sysbench
from benchlib.compare import ComparisonReport
from benchlib.workloads import sweep

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(sysbench.unavailable_reason() is not None, reason=str(sysbench.unavailable_reason()))]


def _run(store, engine_cpus: float) -> str:
    params = sweep.validate_parameters(dict(
        engines=["postgres"], tests=["oltp_point_select"], threads=[4], step_seconds=2, warmup_seconds=1, tables=1,
        table_size=2_000, repetitions=3, max_repetitions=3, ci_target=0.05, warmup=False, pin_cpus=True,
        idle_seconds=0.5, p95_goal_ms=60, until_p95_goal=False, bisect_steps=0, host_class="none", max_settle_seconds=1,
        rand_type="uniform", create_secondary=False, auto_inc=False, engine_cpus=engine_cpus, settle_after_writes=True))
    return sweep.run(params, store=store).run_id


def test_half_the_cpu_quota_is_flagged_beyond_noise(store):
    if not cpus.plan(True).pinned:
        pytest.skip("one CPU: the engine's share cannot be set apart from the client's")
    # One more pair where the first is not flagged: a neighbour slowing this 2-core guest during the
    # base run alone can take its TPS down as far as the quota does (one full suite failed here while
    # the test alone read 0.52 ± 0.03). Each pair is compared on its own run ids.
    for _attempt in range(2):
        base, throttled = _run(store, 1.0), _run(store, 0.5)
        report = ComparisonReport([base, throttled], store=store)
        c = report.compared
        assert len(c) == 1 and c["unit"].iloc[0].endswith("per transaction")
        row = c.iloc[0]
        if row["tps_flagged"] and row["tps_ratio"] < 0.9:
            break
    # half the CPU: beyond noise and well under the base TPS
    assert row["tps_flagged"] and row["tps_ratio"] < 0.9, {k: row[k] for k in ("base_tps", "tps", "tps_ratio",
                                                                                "tps_ratio_ci95", "tps_flagged")}
    found = report.findings()
    assert found[found["metric"] == "tps"]["verdict"].tolist() == ["worse"]  # the one rule, on TPS
    assert ", TPS" in report.detail_table().to_html()
