#!/bin/sh
# Honours the official postgres image's conventions: POSTGRES_PASSWORD (required),
# POSTGRES_USER (default postgres), POSTGRES_DB (default: the user), extra `-c k=v` arguments.
set -eu
PATH="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1):$PATH"
export PATH
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
initdb_here() {
  # The minbase image has no locales: without C.UTF-8 initdb picks SQL_ASCII.
  as_postgres initdb -D "$PGDATA" -U postgres -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 --no-sync >/dev/null
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
}
if [ "${1:-}" = benchlib-initdb ]; then initdb_here; exit 0; fi
if [ "${1:-postgres}" != postgres ] && [ "${1#-}" = "$1" ]; then exec "$@"; fi
[ "${1:-}" = postgres ] && shift
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "error: POSTGRES_PASSWORD must be set (as with the official postgres image)" >&2
  exit 1
fi
[ -s "$PGDATA/PG_VERSION" ] || initdb_here  # an empty volume mounted over the image's cluster
if [ ! -e "$PGDATA/benchlib-configured" ]; then
  sql_literal() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }
  sql_ident() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }
  user=$(sql_ident "$POSTGRES_USER")
  # Single-user mode takes one statement per line; it is the cheapest way to set a password
  # without starting the server twice.
  {
    if [ "$POSTGRES_USER" != postgres ]; then echo "CREATE ROLE $user SUPERUSER LOGIN;"; fi
    echo "ALTER ROLE $user PASSWORD $(sql_literal "$POSTGRES_PASSWORD");"
    if [ "$POSTGRES_DB" != postgres ]; then echo "CREATE DATABASE $(sql_ident "$POSTGRES_DB") OWNER $user;"; fi
  } | as_postgres postgres --single -D "$PGDATA" -c fsync=off postgres > /tmp/benchlib-setup.log 2>&1 \
    && ! grep -q 'ERROR:' /tmp/benchlib-setup.log || { cat /tmp/benchlib-setup.log >&2; exit 1; }
  touch "$PGDATA/benchlib-configured"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*' "$@"
