#!/usr/bin/env bash
# Idempotent set-up behind `make test` and `make report`.
#
# System (only as root on Debian/Ubuntu, and only when no Docker engine answers yet): Debian's
# docker.io with dockerd started in the background, linux-perf, sysbench, chromium (figure export
# and report tests), valgrind (instructions of embedded engines), debootstrap (offline image builds), docker-registry (a local registry for
# the official-image test) and golang-go when no Go is found (FerretDB's build). On a host where Docker already answers,
# nothing system-wide is touched; missing tools are only reported.
# Project: a virtualenv in .venv (uv when it can be had, else pip) with benchlib installed editable.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${BENCHLIB_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
log() { printf '[setup] %s\n' "$*" >&2; }

docker_answers() { command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; }

is_debian_like() {
  [ -r /etc/os-release ] || return 1
  local id like
  id=$(. /etc/os-release; echo "${ID:-}")
  like=$(. /etc/os-release; echo "${ID_LIKE:-}")
  case " $id $like " in *" debian "*|*" ubuntu "*) return 0 ;; esac
  return 1
}

report_missing() {
  local tool
  for tool in perf sysbench chromium valgrind debootstrap docker-registry go; do
    command -v "$tool" >/dev/null 2>&1 || log "note: $tool is not installed (some measurements, figure export or offline image builds need it)"
  done
}

start_dockerd() {
  log "starting dockerd in the background (log: /var/log/benchlib-dockerd.log)"
  # Only stdin/out/err go to dockerd: run as `flock /tmp/bench.lock make setup`, an inherited lock
  # descriptor would keep the shared lock held for as long as dockerd runs. A session of its own:
  # dockerd outlives the caller's process group (`timeout make test` kills that whole group).
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      n=${fd##*/}
      if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi
    done
    exec setsid nohup dockerd >/var/log/benchlib-dockerd.log 2>&1 </dev/null
  ) &
  for _ in $(seq 1 60); do
    docker_answers && return 0
    sleep 0.5
  done
  log "dockerd did not answer within 30 s; last log lines:"
  tail -n 20 /var/log/benchlib-dockerd.log >&2 || true
  return 1
}

system_setup() {
  if docker_answers; then
    log "a Docker engine answers: nothing system-wide is changed"
    report_missing
    return 0
  fi
  if [ "$(id -u)" != 0 ] || ! is_debian_like; then
    log "no Docker engine answers, and only root on Debian/Ubuntu installs one here: install and start Docker, then rerun"
    report_missing
    return 1
  fi
  local perf_pkg=linux-perf
  (. /etc/os-release; [ "${ID:-}" = ubuntu ]) && perf_pkg="linux-tools-common linux-tools-generic"
  local want=()
  command -v dockerd >/dev/null 2>&1 || want+=(docker.io)
  command -v perf >/dev/null 2>&1 || want+=($perf_pkg)
  command -v sysbench >/dev/null 2>&1 || want+=(sysbench)
  command -v chromium >/dev/null 2>&1 || want+=(chromium)
  command -v valgrind >/dev/null 2>&1 || want+=(valgrind)  # callgrind: embedded engines' instructions
  command -v debootstrap >/dev/null 2>&1 || want+=(debootstrap)
  command -v docker-registry >/dev/null 2>&1 || want+=(docker-registry)  # the official-image path's test
  # FerretDB is built from its Go module on the host (Go >= 1.22; bookworm's 1.19 is too old, and
  # `benchlib engines` then says so); /usr/local/go, where present, is found without PATH.
  command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || want+=(golang-go)
  if [ "${#want[@]}" -gt 0 ]; then
    log "installing ${want[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null
  fi
  start_dockerd
}

python_setup() {
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    log "$PYTHON is older than 3.10"; return 1; }
  local stamp="$VENV/.benchlib-installed" want
  want=$(cat "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$VENV/bin/python" -c 'import benchlib' 2>/dev/null; then
    return 0
  fi
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  log "installing Python dependencies into $VENV"
  if "$VENV/bin/python" -m pip install -q --disable-pip-version-check uv 2>/dev/null; then
    "$VENV/bin/python" -m uv pip install -q --python "$VENV/bin/python" -e "$ROOT"
  else
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT"
  fi
  # papermill and nbval start the notebooks' "python3" kernel: make it this virtualenv's python.
  "$VENV/bin/python" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (benchlib)" >/dev/null
  # Notebooks are committed without outputs: strip them on `git add` in this checkout.
  # The filter names the interpreter relative to the checkout's top (git runs filters there), so
  # that git worktrees, which share one config, each use their own virtualenv; nbstripout
  # --install would write this checkout's absolute path into the shared config.
  if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    local py="$VENV/bin/python"
    case "$py" in "$ROOT"/*) py="${py#"$ROOT"/}" ;; esac
    { git -C "$ROOT" config filter.nbstripout.clean "\"$py\" -m nbstripout" \
        && git -C "$ROOT" config filter.nbstripout.smudge cat \
        && git -C "$ROOT" config filter.nbstripout.required true \
        && git -C "$ROOT" config diff.ipynb.textconv "\"$py\" -m nbstripout -t"; } \
      || log "note: could not install the nbstripout git filter"
  fi
  echo "$want" > "$stamp"
}

case "${1:-all}" in
  system) system_setup ;;
  python) python_setup ;;
  all) system_setup; python_setup ;;
  *) echo "usage: $0 [all|system|python]" >&2; exit 2 ;;
esac
