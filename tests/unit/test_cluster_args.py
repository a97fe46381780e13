"""What `benchlib batch --cluster` and `--store` accept, checked before anything is contacted."""
import pytest

from benchlib.batch.cluster import check_address
from benchlib.core.errors import ParameterError, StoreError
from benchlib.host.provenance import host_fingerprint
from benchlib.data.shared_store import parse_url
from benchlib.data.store import Store


@pytest.mark.parametrize("given, address", [("tcp://10.0.0.5:8786", "tcp://10.0.0.5:8786"),
                                            ("scheduler.lan:8786", "tcp://scheduler.lan:8786"),
                                            ("tls://[::1]:8786", "tls://[::1]:8786")])
def test_scheduler_addresses(given, address):
    assert check_address(given) == address


@pytest.mark.parametrize("given", ["scheduler", "tcp://host", "http://host:8786", "host:0", "host:70000", ""])
def test_bad_scheduler_addresses_name_themselves(given):
    with pytest.raises(ParameterError, match=f"cluster must be a Dask scheduler address like tcp://host:8786, "
                                             f"got {given!r}"):
        check_address(given)


def test_store_urls():
    assert parse_url("s3://bench-results/team/a/") == ("bench-results", "team/a")
    assert parse_url("s3://bench-results") == ("bench-results", "")
    for bad in ("s3://Results/x", "s3://ab", "s3://a..b/x"):
        with pytest.raises(ParameterError, match="store bucket must be an S3 bucket name"):
            parse_url(bad)
    with pytest.raises(StoreError, match="store must be a local path or s3://bucket/prefix, got 'gs://b/p'"):
        Store.open("gs://b/p")
    assert Store.open("s3://bench-results/x").shared.url == "s3://bench-results/x"


def test_the_fingerprint_follows_the_hardware_and_kernel_not_the_name():
    facts = {"hostname": "a", "cpu_model": "Xeon", "cpu_cores": 2, "memory_bytes": 2**34, "kernel": "6.1.0"}
    same = host_fingerprint(facts, "v2", False)
    assert host_fingerprint({**facts, "hostname": "b"}, "v2", False) == same
    assert host_fingerprint({**facts, "kernel": "6.12.0"}, "v2", False) != same
    assert host_fingerprint(facts, "hybrid", False) != same and host_fingerprint(facts, "v2", True) != same
