#!/bin/bash
# FerretDB over PostgreSQL in one container. PostgreSQL starts through the postgres recipe's
# entrypoint, docker-entrypoint.sh (its env conventions: POSTGRES_PASSWORD required,
# POSTGRES_USER, POSTGRES_DB), listening inside the container only; FerretDB starts once
# PostgreSQL accepts connections and passes each MongoDB client's credentials (PLAIN) on to
# PostgreSQL. Extra `--flag=value` arguments go to FerretDB.
set -eu
if [ "${1:-ferretdb}" != ferretdb ] && [ "${1#-}" = "$1" ]; then exec "$@"; fi
[ "${1:-}" = ferretdb ] && shift
PATH="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1):$PATH"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
docker-entrypoint.sh postgres -c listen_addresses=127.0.0.1 &
pg=$!
ferret=
stop() {
  if [ -n "$ferret" ]; then kill -TERM "$ferret" 2>/dev/null || true; fi
  kill -INT "$pg" 2>/dev/null || true  # PostgreSQL's fast shutdown
}
trap 'stop' TERM INT
until pg_isready -q -h 127.0.0.1 -p 5432; do
  kill -0 "$pg" 2>/dev/null || { wait "$pg"; exit 1; }
  sleep 0.05
done
# No telemetry (it would call out to beacon.ferretdb.com); state (an instance id) in /tmp.
ferretdb --listen-addr=0.0.0.0:27017 --handler=postgresql \
  --postgresql-url="postgres://127.0.0.1:5432/$POSTGRES_DB" \
  --telemetry=disable --state-dir=/tmp --debug-addr=- "$@" &
ferret=$!
# Either process ending ends the container (waiting, not polling: no wake-ups in idle baselines).
wait -n "$pg" "$ferret" || true
stop
wait
