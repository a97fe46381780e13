"""Which image an engine runs from: the official one when present or pullable, else a local
build of the engine's recipe on a Debian base image that benchlib makes itself."""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..engines import Engine
from ..engines.clients import missing_modules
from ..core.errors import EngineUnavailableError, ImageBuildError
from ..core.settings import RECIPES_DIR, get_settings

DEFAULT_MIRROR = "http://deb.debian.org/debian"
# apt settings a suite's base image needs beyond what debootstrap writes.
SUITES: dict[str, tuple[str, ...]] = {
    "bookworm": (),
    "trixie": (),
    # The mirror's sid Release file is past its Valid-Until date, and apt refuses an expired one.
    "sid": ('Acquire::Check-Valid-Until "false";',),
}


def base_image_ref(suite: str) -> str:
    return f"benchlib/debian-base:{suite}"


BASE_IMAGE = base_image_ref("bookworm")


@dataclass(frozen=True)
class ResolvedImage:
    ref: str
    image_id: str
    source: str  # official | local-build
    digest: str | None
    note: str
    present: bool = True  # False: resolve_image(build=False) found it would pull or build it


@dataclass(frozen=True)
class Availability:
    status: str  # official | local-build | unavailable
    detail: str


def _get_image(client, ref: str):
    import docker.errors

    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None


_REGISTRY_UNREACHABLE = re.compile(r"no such host|dial tcp|i/o timeout|connection refused|network is unreachable"
                                   r"|Temporary failure in name resolution", re.I)


def official_ref(image: str) -> str:
    """Where the official `image` comes from: Docker Hub, or the configured mirror under the same
    name (`<mirror>/library/postgres:17`, as registries mirroring the Hub lay it out)."""
    mirror = get_settings().registry_mirror
    if not mirror:
        return image
    return f"{mirror}/{image if '/' in image.rpartition(':')[0] else 'library/' + image}"


def _registry_of(ref: str) -> str | None:
    first, slash, _ = ref.partition("/")
    return first if slash and ("." in first or ":" in first or first == "localhost") else None


# A registry's answer is remembered for a while, not for the process's life: a kernel that met one
# transient failure must not believe the registry gone until it restarts.
REGISTRY_ANSWER_SECONDS = 300.0


def _remembered(func):
    answers: dict[str, tuple[float, tuple[bool, str]]] = {}

    @functools.wraps(func)
    def wrapper(ref: str) -> tuple[bool, str]:
        now = time.monotonic()
        if ref in answers and now - answers[ref][0] < REGISTRY_ANSWER_SECONDS:
            return answers[ref][1]
        answer = func(ref)
        answers[ref] = (now, answer)
        return answer

    wrapper.forget = answers.clear
    return wrapper


@_remembered
def _pull(ref: str) -> tuple[bool, str]:
    """Try a pull; offline the answer is the same every time, so it is remembered a while."""
    from ..host.docker_host import docker_client

    try:
        docker_client().images.pull(ref)
        return True, "pulled"
    except Exception as exc:
        return False, _pull_failure(ref, exc)


@_remembered
def _pullable(ref: str) -> tuple[bool, str]:
    """Ask the registry for the manifest only: whether a pull would work, without pulling."""
    from ..host.docker_host import docker_client

    try:
        docker_client().api.inspect_distribution(ref)
        return True, "pullable"
    except Exception as exc:
        return False, _pull_failure(ref, exc)


_REGISTRY_UNREACHABLE_REASON = re.compile(r"registry .* does not answer|no image registry reachable")


def _pull_failure(ref: str, exc: Exception) -> str:
    message = str(getattr(exc, "explanation", None) or exc).splitlines()[0]
    if _REGISTRY_UNREACHABLE.search(message):
        registry = _registry_of(ref)
        message = f"registry {registry} does not answer" if registry else "no image registry reachable from this host"
    return f"cannot pull {ref} ({message[:300]})"


def _official(client, ref: str, allow_pull: bool) -> tuple[object | None, str]:
    image = _get_image(client, ref)
    if image is not None:
        return image, "present locally"
    if not allow_pull:
        ok, why = _pullable(ref)
        return (_NotBuilt(ref), "will be pulled on first start") if ok else (None, why)
    ok, why = _pull(ref)
    return (_get_image(client, ref), why) if ok else (None, why)


def _repo_digest(image, ref: str) -> str | None:
    """The digest the registry gave this image under the repository of `ref` (an image pushed to
    or pulled from several places has one per repository)."""
    digests = getattr(image, "attrs", {}).get("RepoDigests") or []
    repo = ref.rpartition(":")[0] if ":" in ref.rpartition("/")[2] else ref
    return next((d for d in digests if d.partition("@")[0] == repo), digests[0] if digests else None)


def resolve_image(engine: Engine, *, build: bool = True, valgrind: bool = False) -> ResolvedImage:
    """The image to start `engine` from: the official one (pulled when missing), else the local
    recipe, built when missing. With build=False nothing is pulled or built: an answer of what
    would happen, for `availability`. `engine` may also be a service (`services.Service`: a key
    and a Server, no client), resolved the same way. `valgrind`: that image with the server
    under callgrind (`callgrind_image`)."""
    own = _resolve_image(engine, build=build)
    return callgrind_image(engine, own, build=build) if valgrind else own


def _resolve_image(engine: Engine, *, build: bool) -> ResolvedImage:
    from ..host.docker_host import docker_client

    server = engine.server
    if server is None:
        raise EngineUnavailableError(f"{engine.key} is embedded: it has no image")
    missing = missing_modules(engine.client) if getattr(engine, "client", None) is not None else []
    if missing:
        raise EngineUnavailableError(f"{engine.key}: the Python module(s) {', '.join(missing)} its client needs "
                                     f"are not installed")
    client = docker_client()
    policy = get_settings().image_policy
    why_not_official = "image policy is 'local'"
    if policy in ("auto", "official"):
        if server.official_image is None:
            why_not_official = f"no official image: {server.no_official_reason}"
        else:
            ref = official_ref(server.official_image)
            image, why = _official(client, ref, allow_pull=build)
            if image is not None:
                return ResolvedImage(ref, image.id, "official", _repo_digest(image, ref), f"official image, {why}",
                                     not isinstance(image, _NotBuilt))
            why_not_official = why
        if policy == "official":
            raise EngineUnavailableError(f"{engine.key}: {why_not_official} and BENCHLIB_IMAGE_POLICY=official")
    recipe = server.recipe
    if recipe is None:
        raise EngineUnavailableError(f"{engine.key}: {_official_only(server.official_image, why_not_official)}; "
                                     f"no local recipe: {server.no_recipe_reason}")
    ref, image = local_image(engine, build=build)
    note = (f"local build of {recipe.description}, major {server.local_version.version} "
            f"(official image unavailable: {why_not_official})")
    return ResolvedImage(ref, image.id, "local-build", None, note, not isinstance(image, _NotBuilt))


def callgrind_image(engine: Engine, base: ResolvedImage, *, build: bool = True) -> ResolvedImage:
    """`base` (the engine's official or recipe image) with valgrind installed from that image's own
    package source and the server program replaced by the callgrind wrapper (benchlib.counters.valgrind):
    a layer built once per base image and wrapper, cached like the recipes' images and announced
    while it builds. Built on a base image that is not there yet (build=False), it is not either."""
    from ..host.docker_host import docker_client
    from ..counters.valgrind import build_context, engine_problem

    problem = engine_problem(engine)
    if problem:
        raise EngineUnavailableError(f"{engine.key} cannot run under valgrind: {problem}")
    files = build_context(engine)
    digest = hashlib.sha256(base.image_id.encode())
    for name, text in sorted(files.items()):
        digest.update(name.encode() + b"\0" + text.encode())
    # Named after the image it is built on: engines that share an image (MariaDB and MyRocks) share it.
    repository, _, tag = base.ref.rpartition("/")[2].partition(":")
    ref = f"benchlib/{repository}-callgrind:{re.sub(r'[^A-Za-z0-9_.-]', '-', tag or 'latest')}-{digest.hexdigest()[:12]}"
    note = f"{base.note}; under valgrind: {ref}, valgrind from its package source and the server started by it"
    client = docker_client()
    image = _get_image(client, ref)
    if image is None and (not build or not base.present):
        return ResolvedImage(ref, _NotBuilt(ref).id, base.source, None, note, False)
    if image is None:
        with _build_lock(ref):
            image = _get_image(client, ref)
            if image is None:
                with tempfile.TemporaryDirectory(prefix=f"benchlib-callgrind-{engine.name}-") as tmp:
                    context = Path(tmp) / f"callgrind-{engine.name}"
                    context.mkdir()
                    for name, text in files.items():
                        (context / name).write_text(text)
                    image = _build(client, context, ref, {"BASE_IMAGE": base.ref})
    return ResolvedImage(ref, image.id, base.source, None, note)


def resolve_cluster_images(engine: Engine, *, build: bool = True) -> dict[str, ResolvedImage]:
    """Each role's image of a cluster engine: its own official image (TiKV, PD), else the
    engine's (`resolve_image`). Every one is resolved before the first container starts; the
    first that cannot be had fails the cluster, named."""
    assert engine.cluster is not None
    own = resolve_image(engine, build=build)
    images = {}
    for role in engine.cluster.roles:
        if role.image is None:
            images[role.name] = own
            continue
        from ..host.docker_host import docker_client

        ref = official_ref(role.image)
        image, why = _official(docker_client(), ref, allow_pull=build)
        if image is None:
            raise EngineUnavailableError(f"{engine.key}: its {role.name} nodes run {_official_only(role.image, why)}")
        images[role.name] = ResolvedImage(ref, image.id, "official", _repo_digest(image, ref),
                                          f"official image, {why}", not isinstance(image, _NotBuilt))
    return images


def _official_only(image: str | None, why_not: str) -> str:
    """Why an engine with no offline build cannot run: worded the same in `benchlib engines`,
    in a skipped engine's reason and in the error for an explicit request."""
    if image is None or not why_not.startswith("cannot pull"):
        return why_not
    if _REGISTRY_UNREACHABLE_REASON.search(why_not):
        return f"official image only ({image}); no registry reachable"
    return f"official image only ({image}); {why_not}"


def availability(engine: Engine) -> Availability:
    """What `resolve_image` would do, without pulling or building anything (for a cluster: for
    every role's image)."""
    try:
        resolved = resolve_image(engine, build=False)
        if engine.cluster is not None:
            resolve_cluster_images(engine, build=False)
    except (EngineUnavailableError, ImageBuildError) as exc:
        return Availability("unavailable", str(exc))
    if resolved.source == "official":
        return Availability("official", f"{resolved.ref} ({resolved.note})")
    state = "built" if resolved.present else "will be built on first start"
    return Availability("local-build", f"{resolved.ref} {state}; {resolved.note}")


# ---------------------------------------------------------------------------------------------
# What a build is doing, for whoever waits on it (the batch's "preparing engines" lines)

_build_listener: Callable[[str, bool], None] | None = None


@contextlib.contextmanager
def reporting_builds(listener: Callable[[str, bool], None]) -> Iterator[None]:
    """Call `listener(text, stage)` for what the builds this process makes meanwhile are doing:
    each stage (a debootstrap, a host build, a docker build or import: stage=True) and each line
    of docker build output (stage=False). A build otherwise says nothing until it ends, minutes
    later (FerretDB's Go build)."""
    global _build_listener
    previous, _build_listener = _build_listener, listener
    try:
        yield
    finally:
        _build_listener = previous


def _report(text: str, stage: bool = True) -> None:
    if _build_listener is not None and text.strip():
        _build_listener(text.strip(), stage)


BUILD_TIMES_FILE = "build-times.json"


def _build_times_path() -> Path:
    return get_settings().data_dir / "images" / BUILD_TIMES_FILE


def last_build_seconds(key: str) -> float | None:
    """How long the last build of `key`'s image took on this host (None: never recorded)."""
    try:
        entry = json.loads(_build_times_path().read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return float(entry["seconds"]) if isinstance(entry, dict) and "seconds" in entry else None


def record_build_seconds(key: str, ref: str, seconds: float) -> None:
    """Keep the duration of a build for the next one's estimate (one entry per engine key)."""
    path = _build_times_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock(str(path)):  # two processes recording at once must not lose either entry
        try:
            times = json.loads(path.read_text())
        except (OSError, ValueError):
            times = {}
        if not isinstance(times, dict):
            times = {}
        times[key] = {"seconds": round(seconds, 1), "ref": ref}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(times, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Local builds


class _NotBuilt:
    """Stands in for an image that would be pulled or built: availability checks do neither."""

    def __init__(self, ref: str):
        self.id = f"(not built: {ref})"


def _recipe_hash(recipe_dir: Path, base_id: str, buildargs: dict[str, str]) -> str:
    digest = hashlib.sha256(base_id.encode())
    digest.update(repr(sorted(buildargs.items())).encode())
    for path in sorted(p for p in recipe_dir.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(recipe_dir)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@contextlib.contextmanager
def _build_lock(name: str):
    """Two processes (two notebooks, a test and a notebook) must not build the same image at once."""
    lock_dir = Path(tempfile.gettempdir()) / "benchlib-locks"
    lock_dir.mkdir(exist_ok=True)
    with open(lock_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def local_image(engine: Engine, *, build: bool = True):
    """(ref, image) of the engine's local recipe; builds its suite's base image (or the recipe
    image it builds on) and the recipe when missing. Recipes of one suite share its base image."""
    from ..host.docker_host import docker_client

    client = docker_client()
    assert engine.server is not None and engine.server.recipe is not None
    version = engine.server.local_version
    recipe = version.recipe
    recipe_dir = RECIPES_DIR / recipe.folder

    pending = f"benchlib/{recipe.folder}:{version.version}-local-pending"

    def buildable_here() -> None:
        # Asked only when the image is missing (an image already built needs no host toolchain),
        # and before anything it builds on is built.
        problem = recipe.host_build.problem() if recipe.host_build else None
        if problem:
            raise ImageBuildError(f"{engine.key}: no official image and {problem}")

    if recipe.base_recipe:
        from ..engines import get_engine

        base_engine = get_engine(recipe.base_recipe)
        base_ref, base = local_image(base_engine, build=False)
        if isinstance(base, _NotBuilt):
            buildable_here()
            if not build:
                return pending, _NotBuilt(pending)
            base_ref, base = local_image(base_engine)
    else:
        base_ref = base_image_ref(recipe.suite)
        base = _get_image(client, base_ref)
    if base is None:
        if not build:
            base_problem = base_image_problem(recipe.suite)
            if base_problem:
                raise ImageBuildError(f"{engine.key}: no official image and {base_problem}")
        buildable_here()
        if not build:
            return pending, _NotBuilt(pending)
        base = ensure_base_image(recipe.suite)
    # VERSION lets the recipe check that the suite still carries this major.
    buildargs = {"BASE_IMAGE": base_ref, "PACKAGES": recipe.packages, "VERSION": version.version}
    # What the host builds goes into the hash as its identity (module, version, checksum).
    inputs = base.id + (recipe.host_build.identity() if recipe.host_build else "")
    ref = f"benchlib/{recipe.folder}:{version.version}-local-{_recipe_hash(recipe_dir, inputs, buildargs)}"
    image = _get_image(client, ref)
    if image is not None:
        return ref, image
    buildable_here()
    if not build:
        return ref, _NotBuilt(ref)
    with _build_lock(ref):
        image = _get_image(client, ref)
        if image is None:
            with _build_context(recipe_dir, recipe.host_build) as context:
                image = _build(client, context, ref, buildargs)
    return ref, image


@contextlib.contextmanager
def _build_context(recipe_dir: Path, host_build):
    """The recipe folder, or a copy of it with the host-built program beside its files."""
    if host_build is None:
        yield recipe_dir
        return
    with tempfile.TemporaryDirectory(prefix=f"benchlib-{recipe_dir.name}-") as tmp:
        context = Path(tmp) / recipe_dir.name
        shutil.copytree(recipe_dir, context)
        _report(f"host build: {host_build.describe()}")
        host_build.build_into(context)
        yield context


def _build(client, recipe_dir: Path, ref: str, buildargs: dict[str, str] | None = None):
    """Docker tags an image only when every step succeeded: a failed build leaves no usable tag.
    The build's output is streamed to the build listener as it comes."""
    import docker.errors

    _report(f"docker build {ref} from {recipe_dir.name}/Dockerfile")
    output: list[str] = []
    try:
        for chunk in client.api.build(
            path=str(recipe_dir), tag=ref, rm=True, forcerm=True, decode=True,
            # The build installs Debian packages: it needs the host's network (and apt mirror).
            network_mode="host", buildargs=buildargs or {"BASE_IMAGE": BASE_IMAGE},
            labels={"benchlib.recipe": recipe_dir.name, "benchlib.recipe_ref": ref},
        ):
            if "error" in chunk:
                tail = "".join(output)[-2000:]
                raise ImageBuildError(f"building {ref} from {recipe_dir} failed: {chunk['error'].strip()}\n{tail}")
            text = str(chunk.get("stream", ""))
            output.append(text)
            for line in text.splitlines():
                _report(line, stage=False)
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"building {ref} from {recipe_dir} failed: {exc}") from None
    image = _get_image(client, ref)
    if image is None:
        raise ImageBuildError(f"building {ref} from {recipe_dir} ended without the image: {''.join(output)[-2000:]}")
    return image


def debian_mirror() -> str:
    """The host's own Debian mirror (offline hosts often have only that one), else deb.debian.org.
    One mirror serves every suite: the host's entry for its own suite names it."""
    configured = get_settings().debian_mirror
    if configured:
        return configured
    sources = sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    for path in sources:
        for block in path.read_text().split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", block, re.M)
            types = re.search(r"^Types:\s*(.+)$", block, re.M)
            if uris and "security" not in uris.group(1) and (types is None or "deb" in types.group(1).split()):
                return uris.group(1)
    legacy = Path("/etc/apt/sources.list")
    if legacy.exists():
        match = re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+\s", legacy.read_text(), re.M)
        if match and "security" not in match.group(1):
            return match.group(1)
    return DEFAULT_MIRROR


def base_image_problem(suite: str = "bookworm") -> str | None:
    """Why the base image of `suite` cannot be built here, or None."""
    if suite not in SUITES:
        return f"no Debian base image is declared for suite {suite!r} (known: {', '.join(SUITES)})"
    if os.geteuid() != 0:
        return "building the Debian base image needs root (debootstrap)"
    if shutil.which("debootstrap") is None:
        return "debootstrap is not installed (apt-get install debootstrap, or `make setup` as root)"
    return None


def _trim_rootfs(rootfs: Path, suite: str) -> None:
    """What every recipe wants of its base: no downloaded .debs or package lists (recipes run
    apt-get update), no services started by package scripts during builds, the suite's apt quirks."""
    for pattern in ("var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*"):
        for path in rootfs.glob(pattern):
            path.unlink()
    policy = rootfs / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    if SUITES[suite]:
        (rootfs / "etc/apt/apt.conf.d/99benchlib").write_text("\n".join(SUITES[suite]) + "\n")


def ensure_base_image(suite: str = "bookworm"):
    """benchlib/debian-base:<suite>: debootstrap --variant=minbase, then docker import."""
    from ..host.docker_host import docker_client

    client = docker_client()
    ref = base_image_ref(suite)
    with _build_lock(ref):
        image = _get_image(client, ref)
        if image is not None:
            return image
        problem = base_image_problem(suite)
        if problem:
            raise ImageBuildError(f"cannot build {ref}: {problem}")
        mirror = debian_mirror()
        _report(f"debootstrap --variant=minbase {suite} from {mirror} (base image {ref})")
        with tempfile.TemporaryDirectory(prefix="benchlib-rootfs-", dir="/var/tmp") as tmp:
            rootfs = Path(tmp) / "rootfs"
            result = subprocess.run(
                ["debootstrap", "--variant=minbase", suite, str(rootfs), mirror],
                capture_output=True, text=True,
            )
            if result.returncode != 0:
                raise ImageBuildError(
                    f"debootstrap {suite} from {mirror} failed (exit {result.returncode}): "
                    f"{(result.stderr or result.stdout)[-1500:]}"
                )
            _trim_rootfs(rootfs, suite)
            archive = Path(tmp) / "rootfs.tar"
            with tarfile.open(archive, "w") as tar:
                for entry in sorted(rootfs.iterdir()):
                    tar.add(entry, arcname=entry.name)
            # The tag is set only once the whole archive is imported.
            _report(f"docker import {ref}")
            client.api.import_image_from_file(
                str(archive), repository=ref.split(":")[0], tag=ref.split(":")[1],
                changes=['CMD ["/bin/bash"]', f'LABEL benchlib.debian_mirror="{mirror}" benchlib.suite="{suite}"'],
            )
        return client.images.get(ref)
