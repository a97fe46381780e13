#!/bin/sh
# Honours the official mariadb image's conventions: MARIADB_ROOT_PASSWORD or MYSQL_ROOT_PASSWORD
# (required), MARIADB_DATABASE or MYSQL_DATABASE, root allowed from any host, extra `--k=v`.
set -eu
datadir=/var/lib/mysql
install_db() {
  rm -rf "$datadir" && mkdir -p "$datadir" /run/mysqld && chown mysql:mysql "$datadir" /run/mysqld
  mariadb-install-db --user=mysql --datadir="$datadir" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve >/dev/null
}
if [ "${1:-}" = benchlib-install-db ]; then install_db; exit 0; fi
if [ "${1:-mariadbd}" != mariadbd ] && [ "${1#-}" = "$1" ]; then exec "$@"; fi
[ "${1:-}" = mariadbd ] && shift
root_pw="${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}"
database="${MARIADB_DATABASE:-${MYSQL_DATABASE:-}}"
if [ -z "$root_pw" ]; then
  echo "error: MARIADB_ROOT_PASSWORD (or MYSQL_ROOT_PASSWORD) must be set" >&2
  exit 1
fi
[ -d "$datadir/mysql" ] || install_db  # an empty volume mounted over the image's data directory
pw=$(printf '%s' "$root_pw" | sed "s/\\\\/\\\\\\\\/g; s/'/\\\\'/g")
init=/run/mysqld/init.sql
# --init-file runs one statement per line; a bad line is only logged, so keep each simple.
{
  echo "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$pw';"
  echo "GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;"
  echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$pw';"
  [ -n "$database" ] && echo "CREATE DATABASE IF NOT EXISTS \`$database\`;"
  echo "FLUSH PRIVILEGES;"
} > "$init"
chown mysql "$init"
chmod 600 "$init"
exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 --skip-name-resolve \
  --port=3306 --init-file="$init" "$@"
