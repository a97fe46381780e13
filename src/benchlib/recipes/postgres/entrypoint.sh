#!/bin/sh
# Honours the official postgres image's conventions: POSTGRES_PASSWORD (required),
# POSTGRES_USER (default postgres), POSTGRES_DB (default: the user), extra `-c k=v` arguments.
set -eu
PATH="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1):$PATH"
export PATH
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ "${1:-postgres}" != postgres ] && [ "${1#-}" = "$1" ]; then exec "$@"; fi
[ "${1:-}" = postgres ] && shift
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "error: POSTGRES_PASSWORD must be set (as with the official postgres image)" >&2
  exit 1
fi
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" > "$pwfile"
  chown postgres "$pwfile"
  # The minbase image has no locales: without C.UTF-8 initdb picks SQL_ASCII.
  as_postgres initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 --no-sync >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\"" | as_postgres postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*' "$@"
