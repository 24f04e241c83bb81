#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL from the Debian packages, for tests and benchmarks.
#   scripts/throwaway-postgres.sh start   prints the admin URL (postgres://…) on stdout
#   scripts/throwaway-postgres.sh stop
# PostgreSQL refuses to run as root, so when run as root the server runs as the `postgres` user.
# State lives in $PLATFORM_PG_DIR (default /tmp/platform-pg); `stop` deletes it.
set -euo pipefail

PGDIR=${PLATFORM_PG_DIR:-/tmp/platform-pg}
PORT=${PLATFORM_PG_PORT:-55432}
BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}

if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "PostgreSQL server binaries not found (install the postgresql package)" >&2
  exit 1
fi

as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "${1:-}" in
  start)
    if [ -f "$PGDIR/data/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1; then
      echo "postgres://platform:platform@127.0.0.1:$PORT/postgres"
      exit 0
    fi
    rm -rf "$PGDIR"
    mkdir -p "$PGDIR"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$PGDIR"
    printf 'platform\n' > "$PGDIR/pwfile.tmp"
    [ "$(id -u)" = 0 ] && chown postgres "$PGDIR/pwfile.tmp"
    as_pg "$BIN/initdb" -D "$PGDIR/data" -U platform --pwfile="$PGDIR/pwfile.tmp" -A scram-sha-256 \
      --encoding=UTF8 --locale=C.UTF-8 >"$PGDIR/initdb.log" 2>&1 || { cat "$PGDIR/initdb.log" >&2; exit 1; }
    rm -f "$PGDIR/pwfile.tmp"
    # Throwaway and local: trade durability for speed; socket in our own directory.
    as_pg "$BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 start \
      -o "-h 127.0.0.1 -p $PORT -k $PGDIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      >/dev/null || { cat "$PGDIR/server.log" >&2; exit 1; }
    echo "postgres://platform:platform@127.0.0.1:$PORT/postgres"
    ;;
  stop)
    if [ -d "$PGDIR/data" ]; then
      as_pg "$BIN/pg_ctl" -D "$PGDIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$PGDIR"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
