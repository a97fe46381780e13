"""Where a PostgreSQL server's instructions go, by hand: a check of callgrind_profile and the
subsystem map on a real server's dumps, until the valgrind counter (issue 35's server path)
drives windows itself. Run it under the shared lock:

    flock /tmp/bench.lock .venv/bin/python scripts/callgrind_postgres_by_hand.py [rows] [out_dir]

It derives an image with valgrind from the newest local `benchlib/postgres:17-local-*` image
(`benchlib images` builds that), starts it with no network at all (psql runs inside the
container over the Unix socket) and PostgreSQL under `valgrind --tool=callgrind
--instr-atstart=no` (HOST-FACTS, "valgrind": HOSTNAME and friends unset, callgrind_control as
the server's user, SYS_PTRACE), creates seed 000's table with the sequential key, and measures
the DML phases, one psql connection each: zero, instrumentation on, the phase, a second for the
backend's exit dump, instrumentation off, dump. A window's files are the dumps plus the exit
dumps written during it. Prints each window's top functions by self instructions and its
subsystem table; the container is removed at the end, whatever happens.

Known gap: here callgrind_control reaches the postmaster alone (it lists its processes first):
the auxiliary processes it forked (checkpointer, background and WAL writers, autovacuum
launcher) are not dumped, so a window holds the postmaster's dump and the backend's exit dump,
the statement's own work, without the WAL writer's. The server counter's lifecycle must reach
them all."""
from __future__ import annotations

import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib.counters.callgrind_profile import describe, read_window, subsystem_table

BASE_REPO = "benchlib/postgres"
DERIVED_REPO = "benchlib-profile/postgres-valgrind"
SERVER = ("mkdir -p /tmp/cg && chown postgres /tmp/cg && exec su postgres -s /bin/bash -c '"
          "/usr/lib/postgresql/17/bin/initdb -D /tmp/pgdata >/dev/null && "
          "exec env -u HOSTNAME -u HOST -u USER -u LOGNAME valgrind --tool=callgrind --instr-atstart=no "
          "--callgrind-out-file=/tmp/cg/cg.%p /usr/lib/postgresql/17/bin/postgres -D /tmp/pgdata "
          "-c listen_addresses= -c unix_socket_directories=/tmp'")


def sh(*args: str, check: bool = True) -> str:
    return subprocess.run(args, check=check, capture_output=True, text=True).stdout.strip()


def image() -> str:
    tags = sh("docker", "images", BASE_REPO, "--format", "{{.Tag}} {{.CreatedAt}}").splitlines()
    tags = sorted((t.split(" ", 1) for t in tags if t.startswith("17-local-")), key=lambda t: t[1], reverse=True)
    if not tags:
        sys.exit(f"no {BASE_REPO}:17-local-* image here: build it with `benchlib images` (under the lock)")
    base = f"{BASE_REPO}:{tags[0][0]}"
    derived = f"{DERIVED_REPO}:{tags[0][0]}"
    with tempfile.TemporaryDirectory() as ctx:
        (Path(ctx) / "Dockerfile").write_text(
            f"FROM {base}\nRUN apt-get update && apt-get install -y --no-install-recommends valgrind "
            "&& rm -rf /var/lib/apt/lists/*\n")
        subprocess.run(["docker", "build", "-q", "-t", derived, ctx], check=True, stdout=subprocess.DEVNULL)
    return derived


def main(rows: int = 20_000, out: Path | None = None) -> None:
    out = Path(out or tempfile.mkdtemp(prefix="cg-postgres-"))
    name = f"benchlib-profile-pg-{secrets.token_hex(3)}"
    derived = image()
    sh("docker", "run", "-d", "--name", name, "--network", "none", "--cap-add", "SYS_PTRACE",
       "--entrypoint", "bash", derived, "-c", SERVER)
    try:
        def psql(sql: str) -> str:
            return sh("docker", "exec", "-u", "postgres", name, "psql", "-h", "/tmp", "-XAtq", "-c", sql)

        def control(*args: str) -> str:
            # The server's environment (valgrind names its vgdb FIFOs from these variables).
            said = sh("docker", "exec", "-u", "postgres", name, "env", "-u", "HOSTNAME", "-u", "HOST", "-u", "USER",
                      "-u", "LOGNAME", "callgrind_control", *args)
            if "No active callgrind runs" in said or "PID" not in said:
                sys.exit(f"callgrind_control {' '.join(args)} reached no server process: {said}")
            return said

        for _ in range(120):
            if subprocess.run(["docker", "exec", "-u", "postgres", name, "pg_isready", "-h", "/tmp"],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.5)
        else:
            sys.exit(f"PostgreSQL under valgrind never became ready:\n{sh('docker', 'logs', name, check=False)}")
        version = psql("show server_version")
        print("processes under callgrind:", " ".join(line.split(":")[0].strip() for line in
                                                     control().splitlines() if line.startswith("PID")),
              sh("docker", "exec", name, "ps", "-o", "pid,args", "-u", "postgres"), sep="\n")
        psql("create table demo (id bigint generated always as identity primary key, value float)")
        phases = {"insert": f"insert into demo(value) select generate_series(1, {rows})",
                  "update": "update demo set value = value + 1", "select": "select count(value) from demo",
                  "delete": "delete from demo"}
        print(f"PostgreSQL {version} under callgrind, {rows:,} rows, one psql connection per phase; files in {out}")
        for phase, sql in phases.items():
            control("-z")
            sh("docker", "exec", "-u", "postgres", name, "touch", f"/tmp/cg/.start-{phase}")
            control("-i", "on")
            t0 = time.perf_counter()
            psql(sql)
            time.sleep(1.0)  # the backend's exit dump, written as its connection closes
            control("-i", "off")
            wall = time.perf_counter() - t0
            control("-d", phase)
            listed = sh("docker", "exec", name, "find", "/tmp/cg", "-name", "cg.*", "-newer",
                        f"/tmp/cg/.start-{phase}").split()
            target = out / phase
            target.mkdir(parents=True, exist_ok=True)
            for path in listed:
                sh("docker", "cp", f"{name}:{path}", str(target / Path(path).name))
            profile = read_window(sorted(target.glob("cg.*")))
            print(f"\n== {phase} ({wall:.1f} s under callgrind, {len(listed)} files)")
            print(describe(profile, 10))
            table = subsystem_table(profile, "postgres")
            print(table[table["instructions"] > 0].to_string(index=False, formatters={
                "instructions": "{:,}".format, "share": "{:.1%}".format}))
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000, Path(sys.argv[2]) if len(sys.argv) > 2 else None)
