#!/usr/bin/env bash
# Starts or stops a throwaway Redis from the Debian packages, for tests and benchmarks.
#   scripts/throwaway-redis.sh start   prints the URL (redis://…) on stdout
#   scripts/throwaway-redis.sh stop
# Installs redis-server with apt-get when it is missing (as root). No persistence: the data lives
# in memory and goes away with `stop`. State (pid, log) in $PLATFORM_REDIS_DIR.
set -euo pipefail

DIR=${PLATFORM_REDIS_DIR:-/tmp/platform-redis}
PORT=${PLATFORM_REDIS_PORT:-56379}

case "${1:-}" in
  start)
    if ! command -v redis-server >/dev/null 2>&1; then
      if [ "$(id -u)" != 0 ]; then
        echo "redis-server is not installed (apt-get install -y redis-server)" >&2
        exit 1
      fi
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) >&2
    fi
    if [ -f "$DIR/redis.pid" ] && kill -0 "$(cat "$DIR/redis.pid")" 2>/dev/null; then
      echo "redis://127.0.0.1:$PORT"
      exit 0
    fi
    rm -rf "$DIR"
    mkdir -p "$DIR"
    redis-server --port "$PORT" --bind 127.0.0.1 --daemonize yes --pidfile "$DIR/redis.pid" \
      --logfile "$DIR/redis.log" --dir "$DIR" --save '' --appendonly no >/dev/null
    for _ in $(seq 1 50); do
      if redis-cli -p "$PORT" ping >/dev/null 2>&1; then
        echo "redis://127.0.0.1:$PORT"
        exit 0
      fi
      sleep 0.1
    done
    cat "$DIR/redis.log" >&2
    exit 1
    ;;
  stop)
    if [ -f "$DIR/redis.pid" ]; then
      kill "$(cat "$DIR/redis.pid")" 2>/dev/null || true
    fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
