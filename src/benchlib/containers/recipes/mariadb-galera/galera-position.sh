#!/bin/sh
# Gives the image's data directory a Galera position: one cluster history (a fixed UUID), at the
# seqno a short bootstrap of it reaches, recorded both in grastate.dat and in InnoDB. Every node
# of a cluster starts from this same directory, so a joining node is already at the group's
# state but for the few transactions the first node's start-up added: it catches up by
# incremental state transfer (IST, from the first node's write-set cache) in about a second,
# instead of copying the whole directory (SST: 7-15 s per node here). A node whose directory
# has no position (the official image's, created at its first start) still joins by SST.
set -eu
datadir=/var/lib/mysql
printf '# GALERA saved state\nversion: 2.1\nuuid:    6b3c1a2e-4f5d-11f1-9a7b-0242ac110002\nseqno:   0\nsafe_to_bootstrap: 1\n' \
  > "$datadir/grastate.dat"
chown mysql:mysql "$datadir/grastate.dat"
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
mariadbd --user=mysql --datadir="$datadir" --skip-networking --wsrep-on=ON \
  --wsrep-provider=/usr/lib/galera/libgalera_smm.so --wsrep-cluster-address=gcomm:// --binlog-format=ROW \
  --innodb-autoinc-lock-mode=2 --wsrep-new-cluster > /tmp/benchlib-galera-position.log 2>&1 &
pid=$!
i=0
until mariadb-admin ping >/dev/null 2>&1; do
  i=$((i + 1))
  if [ "$i" -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then cat /tmp/benchlib-galera-position.log >&2; exit 1; fi
  sleep 0.1
done
mariadb-admin shutdown
wait "$pid"
grep -q '^seqno: *[0-9]' "$datadir/grastate.dat" || { cat "$datadir/grastate.dat" >&2; exit 1; }
# The write-set cache and the last view belong to that one bootstrap, not to the clusters started later.
rm -f "$datadir/galera.cache" "$datadir/gvwstate.dat" /tmp/benchlib-galera-position.log
