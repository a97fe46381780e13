#!/bin/sh
# Honours the official mysql image's conventions: MYSQL_ROOT_PASSWORD (required), MYSQL_DATABASE,
# MYSQL_ROOT_HOST (root's extra host, default '%'), extra `--k=v` arguments.
set -eu
datadir=/var/lib/mysql
initialize() {
  rm -rf "$datadir" && mkdir -p "$datadir" /run/mysqld /var/lib/mysql-files \
    && chown mysql:mysql "$datadir" /run/mysqld /var/lib/mysql-files
  mysqld --initialize-insecure --user=mysql --datadir="$datadir"
  # Generated at the first start instead, so each container has its own server_uuid.
  rm -f "$datadir/auto.cnf"
}
if [ "${1:-}" = benchlib-initialize ]; then initialize; exit 0; fi
if [ "${1:-mysqld}" != mysqld ] && [ "${1#-}" = "$1" ]; then exec "$@"; fi
[ "${1:-}" = mysqld ] && shift
if [ -z "${MYSQL_ROOT_PASSWORD:-}" ]; then
  echo "error: MYSQL_ROOT_PASSWORD must be set (as with the official mysql image)" >&2
  exit 1
fi
root_host="${MYSQL_ROOT_HOST:-%}"
[ -d "$datadir/mysql" ] || initialize  # an empty volume mounted over the image's data directory
pw=$(printf '%s' "$MYSQL_ROOT_PASSWORD" | sed "s/\\\\/\\\\\\\\/g; s/'/\\\\'/g")
init=/run/mysqld/init.sql
# --init-file runs one statement per line.
{
  echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$pw';"
  if [ "$root_host" != localhost ]; then
    echo "CREATE USER IF NOT EXISTS 'root'@'$root_host' IDENTIFIED BY '$pw';"
    echo "GRANT ALL PRIVILEGES ON *.* TO 'root'@'$root_host' WITH GRANT OPTION;"
  fi
  if [ -n "${MYSQL_DATABASE:-}" ]; then echo "CREATE DATABASE IF NOT EXISTS \`$MYSQL_DATABASE\`;"; fi
} > "$init"
chown mysql "$init"
chmod 600 "$init"
exec mysqld --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 --skip-name-resolve \
  --port=3306 --init-file="$init" "$@"
