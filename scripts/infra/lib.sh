# shellcheck shell=bash
# Shared helpers for scripts/infra/*.sh. Sourced, never executed.
#
# Layout (all outside the repo, so `git clean` never loses a build and
# the repo never picks up binaries or data):
#   $INFRA_CACHE_DIR                 downloads and builds, reused across runs
#   $INFRA_RUN_DIR/<component>/      data dir, pid file, log, generated config

# shellcheck disable=SC2034 # used by the component files
INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
INFRA_CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/platform-dev"
INFRA_RUN_DIR="${PLATFORM_RUN_DIR:-$INFRA_CACHE_DIR/run}"
# Absolute and symlink-free: servers run from another cwd, and pid_of compares
# it with the kernel's (resolved) /proc/PID/cwd.
INFRA_RUN_DIR="$(realpath -m "$INFRA_RUN_DIR")"

# label COMPONENT: the name users see ("mongo" is implemented by "ferretdb",
# which names its functions and run dir).
label() { if [ "$1" = ferretdb ]; then echo mongo; else echo "$1"; fi; }

log() { printf '[infra] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# run_as_root CMD...: apt-get needs root; use sudo only when we are not root already.
run_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root to run: $*"
  fi
}

# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT.
# Pure bash (/dev/tcp) so it works before any client tool is installed.
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# alive PID: the process exists and is not a zombie. An exited server that its
# parent (often PID 1 in containers, which may reap lazily) hasn't reaped yet
# still passes `kill -0`, which would make stop wait for nothing.
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"   # drop "pid (comm) "; comm may contain spaces
  [ -n "$stat" ] && [ "${stat%% *}" != Z ]
}

# pid_of COMPONENT: prints the pid from the component's pid file if that process
# is still alive. A stale pid file (crash, reboot) is removed, so "no output"
# reliably means "not running under our control".
pid_of() {
  local pidfile="$INFRA_RUN_DIR/$1/$1.pid" pid
  [ -f "$pidfile" ] || return 1
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  # Guard against pid reuse after a reboot: the process must still run inside
  # the component's run dir (start_detached starts it there; the command line is
  # no good for this because redis-server rewrites its process title).
  local cwd
  cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null || true)"
  if [ -n "$pid" ] && alive "$pid" \
     && case "$cwd/" in "$INFRA_RUN_DIR/$1/"*) true ;; *) false ;; esac; then
    echo "$pid"
    return 0
  fi
  rm -f "$pidfile"
  return 1
}

# start_detached COMPONENT CMD...: start CMD in its own session (setsid), so it
# survives the calling shell, its Ctrl-C and its terminal closing; stdout and
# stderr go to the component log (previous log kept as .log.1); its cwd is the
# component's run dir (pid_of relies on that).
# The pid is written by the child itself before exec, which stays correct even
# if setsid has to fork.
start_detached() {
  local name="$1"; shift
  local dir="$INFRA_RUN_DIR/$name"
  local logfile="$dir/$name.log" pidfile="$dir/$name.pid"
  [ -f "$logfile" ] && mv -f "$logfile" "$logfile.1"
  rm -f "$pidfile"
  # 9>&- : don't leak the start lock (see with_lock) into the long-lived server.
  # shellcheck disable=SC2016 # $$ and $@ are for the inner sh
  (cd "$dir" && exec setsid sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" \
    </dev/null >>"$logfile" 2>&1 9>&-) &
  for _ in $(seq 50); do [ -s "$pidfile" ] && return 0; sleep 0.1; done
  die "$(label "$name"): process did not start (no pid file $pidfile)"
}

# wait_ready COMPONENT TIMEOUT_S CHECK_CMD...: poll CHECK_CMD until it succeeds,
# every 0.5 s, printing a dot per attempt to stderr. Fails early if the server
# process died (no point waiting out the timeout on a crash).
wait_ready() {
  local name="$1" timeout="$2"; shift 2
  local start=$SECONDS
  printf '[infra] %s: waiting for it to answer (max %ss) ' "$(label "$name")" "$timeout" >&2
  while true; do
    if "$@" >/dev/null 2>&1; then
      printf ' ready in %ss\n' "$((SECONDS - start))" >&2
      return 0
    fi
    if ! pid_of "$name" >/dev/null; then
      printf ' process exited\n' >&2
      return 1
    fi
    if [ $((SECONDS - start)) -ge "$timeout" ]; then
      printf ' timed out\n' >&2
      return 1
    fi
    printf '.' >&2
    sleep 0.5
  done
}

# log_tail COMPONENT [LINES]: show the end of the server log on stderr (for failures).
log_tail() {
  local logfile="$INFRA_RUN_DIR/$1/$1.log"
  if [ -f "$logfile" ]; then
    log "last ${2:-40} lines of $logfile:"
    tail -n "${2:-40}" "$logfile" | sed 's/^/    /' >&2
  else
    log "no log file at $logfile"
  fi
}

# stop_process COMPONENT GRACE_S: SIGTERM, wait up to GRACE_S for a clean
# shutdown (Kafka and FerretDB flush data on SIGTERM), then SIGKILL.
# Succeeds if the component was not running.
stop_process() {
  local name="$1" grace="$2" pid
  if ! pid="$(pid_of "$name")"; then
    return 0
  fi
  log "$(label "$name"): stopping pid $pid (SIGTERM, up to ${grace}s)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $((grace * 10))); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    log "$(label "$name"): still alive after ${grace}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  fi
  rm -f "$INFRA_RUN_DIR/$name/$name.pid"
}

# with_lock CMD...: serialise infra.sh start/stop/reset, so two test runners
# calling `infra.sh start` at once don't install or launch anything twice.
# Uses fd 9; start_detached closes it so servers don't hold the lock.
with_lock() {
  mkdir -p "$INFRA_RUN_DIR"
  (
    exec 9>"$INFRA_RUN_DIR/.lock"
    flock -w 900 9 || die "could not get the lock $INFRA_RUN_DIR/.lock within 15 min"
    "$@"
  )
}

# random_hex BYTES: BYTES random bytes as lower-case hexadecimal (no tool beyond coreutils).
random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# dev_secret NAME [GENERATOR...]: this machine's development secret NAME, printed on stdout.
# Made once (by GENERATOR, default `random_hex 32`) and kept in $INFRA_CACHE_DIR/secrets/NAME,
# the directory mode 700 and the file 600, so that nothing secret is written in the repository
# and a restart keeps sessions, sealed values and logins working. Two starts at once agree: the
# first file linked into place wins.
dev_secret() {
  local name="$1" dir="$INFRA_CACHE_DIR/secrets" tmp
  shift
  [ $# -gt 0 ] || set -- random_hex 32
  if [ ! -s "$dir/$name" ]; then
    mkdir -p "$dir"
    chmod 700 "$dir"
    tmp="$(mktemp "$dir/.$name.XXXXXX")" # mode 600
    "$@" >"$tmp"
    [ -s "$tmp" ] || { rm -f "$tmp"; die "could not generate the development secret $name"; }
    ln "$tmp" "$dir/$name" 2>/dev/null || true
    rm -f "$tmp"
  fi
  chmod 700 "$dir"
  chmod 600 "$dir/$name"
  cat "$dir/$name"
}
