# shellcheck shell=bash disable=SC2034 # *_WAIT_S/*_STOP_GRACE_S are read indirectly by infra.sh
# Redis component for infra.sh (sourced). Debian's redis-server, run by us, not
# by the distro's init: tests stop and restart it, and need to own the process.

REDIS_PORT="${REDIS_PORT:-6379}"
REDIS_WAIT_S="${REDIS_WAIT_S:-20}"
REDIS_STOP_GRACE_S=10

# The password clients give (requirepass): this machine's own, made once (lib.sh dev_secret),
# hexadecimal so that it goes into a URL as it is. A tenant's code that reached the port would
# still need it: the gateway's sessions are here.
redis_password() { dev_secret redis-password; }

# redis_without_password: a server answers here that lets clients in without a password (one
# started by an older version of this script): it keeps serving as it is (`url` gives no password,
# so whoever uses it goes on) until `infra.sh restart redis` starts it with the password.
redis_without_password() {
  [ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}

redis_url() {
  if redis_without_password; then
    echo "REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
  else
    echo "REDIS_URL=redis://:$(redis_password)@127.0.0.1:$REDIS_PORT"
  fi
}

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
# The password goes through the environment (REDISCLI_AUTH), never the command line (ps shows
# that); a server without a password answers too (see redis_without_password).
redis_ready() {
  [ "$(REDISCLI_AUTH="$(redis_password)" timeout 3 redis-cli --no-auth-warning \
    -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}

redis_launch() {
  local dir="$INFRA_RUN_DIR/redis"
  mkdir -p "$dir/data"
  # Our own config file holds only the password (mode 600: not on the command line, which ps
  # shows); everything else is on the command line, so nothing in /etc applies.
  # Loopback only; protected mode off so a bind-less client config can't trip it.
  # Sessions live here, and a restarted Redis must still know them (as a production
  # one with persistence would): append-only file, flushed every second and on SIGTERM.
  (umask 077 && printf 'requirepass %s\n' "$(redis_password)" >"$dir/auth.conf")
  start_detached redis redis-server "$dir/auth.conf" \
    --bind 127.0.0.1 --port "$REDIS_PORT" \
    --protected-mode no --daemonize no --supervised no \
    --dir "$dir/data" --save '' --appendonly yes --appendfsync everysec \
    --logfile '' --loglevel notice
}

redis_data_dirs() { echo "$INFRA_RUN_DIR/redis/data"; }

# Once it answers (infra.sh start): say so when the server lets clients in without a password.
redis_configure() {
  if redis_without_password; then
    log "redis: answers without a password (started by an older scripts/infra); left as it is, 'infra.sh restart redis' starts it with one"
  fi
  return 0
}
