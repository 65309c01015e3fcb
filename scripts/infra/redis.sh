# shellcheck shell=bash disable=SC2034 # *_WAIT_S/*_STOP_GRACE_S are read indirectly by infra.sh
# Redis component for infra.sh (sourced). Debian's redis-server, run by us, not
# by the distro's init: tests stop and restart it, and need to own the process.

REDIS_PORT="${REDIS_PORT:-6379}"
REDIS_WAIT_S="${REDIS_WAIT_S:-20}"
REDIS_STOP_GRACE_S=10

redis_url() { echo "REDIS_URL=redis://127.0.0.1:$REDIS_PORT"; }

redis_install() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return 0
  log "redis: installing Debian's redis-server (apt-get)"
  # apt's output goes to a log; shown only if it fails.
  local aptlog="$INFRA_CACHE_DIR/apt-redis.log"
  mkdir -p "$INFRA_CACHE_DIR"
  if ! { run_as_root apt-get update -q && \
         DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q redis-server; } >"$aptlog" 2>&1; then
    tail -n 30 "$aptlog" >&2
    die "redis: apt-get install redis-server failed (full output: $aptlog)"
  fi
  # The package's postinst starts its own redis on 6379 via init/systemd, which
  # would occupy our port with a server we don't control. Stop it and keep it
  # from coming back at boot; we start redis ourselves.
  if [ -x /etc/init.d/redis-server ]; then
    run_as_root service redis-server stop >/dev/null 2>&1 || true
    run_as_root update-rc.d redis-server disable >/dev/null 2>&1 || true
  fi
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    run_as_root systemctl disable --now redis-server >/dev/null 2>&1 || true
  fi
}

# Bounded: redis-cli waits forever if some other program holds the port and never replies.
redis_ready() {
  [ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}

redis_launch() {
  local dir="$INFRA_RUN_DIR/redis"
  mkdir -p "$dir/data"
  # No config file: everything on the command line so nothing in /etc applies.
  # Loopback only; protected mode off so a bind-less client config can't trip it.
  # Sessions live here, and a restarted Redis must still know them (as a production
  # one with persistence would): append-only file, flushed every second and on SIGTERM.
  start_detached redis redis-server \
    --bind 127.0.0.1 --port "$REDIS_PORT" \
    --protected-mode no --daemonize no --supervised no \
    --dir "$dir/data" --save '' --appendonly yes --appendfsync everysec \
    --logfile '' --loglevel notice
}

redis_data_dirs() { echo "$INFRA_RUN_DIR/redis/data"; }
