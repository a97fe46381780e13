"""The Docker engine benchlib talks to, and testcontainers configured for it.

benchlib needs a Docker engine on *this* kernel: it measures containers through their cgroups
with perf, so a remote DOCKER_HOST cannot be measured."""
from __future__ import annotations

import functools
import os

from ..core.errors import DockerUnavailableError


def _describe_host() -> str:
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")


@functools.lru_cache(maxsize=1)
def docker_client():
    """A docker-py client that answered a ping; raises DockerUnavailableError otherwise."""
    import docker

    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # docker-py raises several types for "nobody there"
        raise DockerUnavailableError(
            f"no Docker engine answers at {_describe_host()} ({exc.__class__.__name__}: {exc}); "
            "start one, or run `make setup` as root on Debian to install and start docker.io"
        ) from None
    return client


def docker_reachable() -> tuple[bool, str]:
    try:
        version = docker_client().version()
    except DockerUnavailableError as exc:
        return False, str(exc)
    return True, f"Docker {version.get('Version')} ({_describe_host()})"


def docker_server_version() -> str | None:
    try:
        return docker_client().version().get("Version")
    except DockerUnavailableError:
        return None


@functools.lru_cache(maxsize=1)
def configure_testcontainers() -> None:
    """Make testcontainers work offline and on hosts that look like containers.

    - Ryuk (the reaper) is an image of its own that cannot be pulled offline; benchlib reaps its
      own containers instead (labels + owner pid, see lifecycle.reap_stale).
    - With /.dockerenv present testcontainers hands out the bridge gateway as host, but benchlib
      publishes ports on 127.0.0.1 only, so it must connect through the loopback address."""
    from testcontainers.core.config import ConnectionMode
    from testcontainers.core.config import testcontainers_config as config

    config.ryuk_disabled = True
    if _describe_host().startswith("unix://"):
        config.tc_host_override = "127.0.0.1"
        config.connection_mode_override = ConnectionMode.docker_host
