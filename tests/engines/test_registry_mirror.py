"""The official-image path against a real registry: Debian's docker-registry on 127.0.0.1 holds one
of our images under an official name, benchlib pulls it through BENCHLIB_REGISTRY_MIRROR and
records it as `official` with the registry's digest. A registry that does not answer is one clear
line before any container starts. The test starts and stops the registry itself."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

import benchlib
from benchlib.containers import images
from benchlib.host.docker_host import docker_client

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(shutil.which("docker-registry") is None,
                       reason="Debian's docker-registry is not installed (`make setup` as root installs it)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def registry(tmp_path):
    """A registry on a free loopback port (dockerd treats 127.0.0.0/8 registries as insecure-allowed)."""
    address = f"127.0.0.1:{_free_port()}"
    config = tmp_path / "registry.yml"
    config.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp_path / 'data'}\n"
                      f"http:\n  addr: {address}\n")
    log = open(tmp_path / "registry.log", "w")
    proc = subprocess.Popen(["docker-registry", "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                urllib.request.urlopen(f"http://{address}/v2/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"docker-registry did not answer: {(tmp_path / 'registry.log').read_text()}")
                time.sleep(0.1)
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(tmp_path / "data", ignore_errors=True)  # a whole image: not for pytest to keep


def _forget(client, ref: str) -> None:
    """Drop a tag and the digest references pulled with it, never the image other tags share."""
    image = images._get_image(client, ref)
    if image is None:
        return
    repo = ref.rpartition(":")[0]
    for name in [ref, *(d for d in image.attrs.get("RepoDigests", []) if d.startswith(repo + "@"))]:
        try:
            client.images.remove(name, noprune=True)
        except Exception:
            pass


def test_official_image_comes_from_the_mirror_with_its_digest(registry, monkeypatch, benchlib_containers):
    client = docker_client()
    engine = benchlib.get_engine("postgres")
    local_ref, local = images.local_image(engine)  # one of our images stands in for the official one
    mirror_ref = f"{registry}/library/{engine.server.official_image}"
    repo, tag = mirror_ref.rsplit(":", 1)
    before = benchlib_containers()
    try:
        local.tag(repo, tag)
        pushed = [c["aux"]["Digest"] for c in client.images.push(repo, tag, stream=True, decode=True)
                  if "aux" in c and "Digest" in c["aux"]]
        assert pushed, "the push reported no digest"
        _forget(client, mirror_ref)
        assert images._get_image(client, mirror_ref) is None  # only the registry has it now

        monkeypatch.setenv("BENCHLIB_REGISTRY_MIRROR", f"http://{registry}/")
        monkeypatch.setenv("BENCHLIB_IMAGE_POLICY", "official")
        status = images.availability(engine)
        assert status.status == "official" and "will be pulled" in status.detail
        assert images._get_image(client, mirror_ref) is None  # asking never pulls

        with benchlib.start("postgres") as eng:
            p = eng.provenance
            assert (p["image_source"], p["image_ref"]) == ("official", mirror_ref)
            assert p["image_digest"] == f"{repo}@{pushed[-1]}"
            assert "pulled" in p["image_note"]
            assert eng.query("select 1") == [(1,)]
    finally:
        _forget(client, mirror_ref)
    assert images._get_image(client, local_ref) is not None
    assert benchlib_containers() == before


def test_a_registry_that_does_not_answer_is_one_line_before_any_container(benchlib_containers):
    before = benchlib_containers()
    dead = f"127.0.0.1:{_free_port()}"  # nothing listens there
    env = {**os.environ, "BENCHLIB_REGISTRY_MIRROR": dead, "BENCHLIB_IMAGE_POLICY": "official"}
    out = subprocess.run([sys.executable, "-m", "benchlib", "start", "postgres"], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"registry {dead} does not answer" in out.stderr and "BENCHLIB_IMAGE_POLICY=official" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert benchlib_containers() == before
