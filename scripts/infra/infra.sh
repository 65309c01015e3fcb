#!/usr/bin/env bash
# Install, start, wait for and stop the local infrastructure servers (Redis, Kafka,
# FerretDB as MongoDB) on 127.0.0.1, for tests and the local stack. No Docker. Also, only when
# named (not in `all`): a single-node Kubernetes cluster with its image registry (kube).
#
#   scripts/infra/infra.sh start   [redis|kafka|mongo|kube|all]   install if needed, start, wait until it answers
#   scripts/infra/infra.sh stop    [redis|kafka|mongo|kube|all]   SIGTERM, wait, SIGKILL after a bound
#   scripts/infra/infra.sh restart [redis|kafka|mongo|kube|all]
#   scripts/infra/infra.sh status  [redis|kafka|mongo|kube|all]   one line each; exit 3 if any is not running
#   scripts/infra/infra.sh url     [redis|kafka|mongo|kube|all]   REDIS_URL=... lines, for eval
#   scripts/infra/infra.sh logs    <redis|kafka|mongo|kube>       last 100 lines of the server log
#   scripts/infra/infra.sh reset   [redis|kafka|mongo|kube|all]   stop and DELETE its data
#
# Env: REDIS_PORT (6379), KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093),
#      MONGO_PORT (27017), KUBE_PORT (6443), KUBE_REGISTRY_PORT (5000), KUBE_ETCD_PORT (2379),
#      PLATFORM_RUN_DIR (runtime state), XDG_CACHE_HOME.
# See scripts/infra/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=redis.sh
. "$here/redis.sh"
# shellcheck source=kafka.sh
. "$here/kafka.sh"
# shellcheck source=ferretdb.sh
. "$here/ferretdb.sh"
# shellcheck source=kube.sh
. "$here/kube.sh"

ALL_COMPONENTS=(redis kafka ferretdb)

usage() {
  sed -n '6,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

# Each component file defines <c>_install, <c>_launch, <c>_ready, <c>_url,
# <c>_data_dirs and <C>_WAIT_S / <C>_STOP_GRACE_S; this file drives them. Optional:
# <c>_outdated (its data dir was made by an older version of these scripts: recreate it) and
# <c>_configure (run once it answers, e.g. Kafka's ACLs) and <c>_cleanup (run once its process is
# gone, by stop and by a start that failed: the cluster puts the host back as it was).
# "mongo" is the public name, "ferretdb" the implementation (run dir, functions).
resolve() {
  case "${1:-all}" in
    all) echo "${ALL_COMPONENTS[@]}" ;;
    redis | kafka | ferretdb | kube) echo "$1" ;;
    mongo | mongodb) echo ferretdb ;;
    *) log "unknown component '$1'"; usage ;;
  esac
}
upper() { tr '[:lower:]' '[:upper:]' <<<"$1"; }
port_var() { if [ "$1" = ferretdb ]; then echo MONGO_PORT; else echo "$(upper "$1")_PORT"; fi; }
port_of() { local v; v="$(port_var "$1")"; echo "${!v}"; }

# Start in two phases: first install + launch everything that isn't answering
# yet, then wait for each. Kafka's JVM boots while the others are set up.
cmd_start() {
  local c pending=() launched=" " failed=0
  for c in "$@"; do
    # Data made by an older version of these scripts (Kafka before SASL): recreated, but a
    # running server is left as it is, so a routine `start` (a test run's) never pulls it from
    # under whoever uses it; `restart` (stop, then start) recreates it.
    if declare -F "${c}_outdated" >/dev/null && "${c}_outdated"; then
      if pid_of "$c" >/dev/null || port_open "$(port_of "$c")"; then
        log "$(label "$c"): running with data made by an older version of scripts/infra; left as it is ('$0 restart $(label "$c")' recreates it, deleting its data)"
      else
        log "$(label "$c"): its data was made by an older version of scripts/infra; recreating it (deleting its data)"
        local d
        for d in $("${c}_data_dirs"); do rm -rf "$d"; done
      fi
    fi
    if "${c}_ready"; then
      if pid_of "$c" >/dev/null; then
        log "$(label "$c"): already running on 127.0.0.1:$(port_of "$c")"
      else
        log "$(label "$c"): already answering on 127.0.0.1:$(port_of "$c") (not started by infra.sh; leaving it alone)"
      fi
      # A set-up step an earlier start did not finish (configure steps are idempotent).
      if declare -F "${c}_configure" >/dev/null && ! "${c}_configure"; then failed=1; fi
      continue
    fi
    # Our own server may be up but not answering yet (another start still
    # waiting for it): wait for it too rather than starting a second copy.
    if ! pid_of "$c" >/dev/null; then
      if port_open "$(port_of "$c")"; then
        die "$(label "$c"): port $(port_of "$c") is taken by a process that does not answer like $(label "$c"); free it or set $(port_var "$c")"
      fi
      "${c}_install"
      log "$(label "$c"): starting on 127.0.0.1:$(port_of "$c") (log: $INFRA_RUN_DIR/$c/$c.log)"
      "${c}_launch"
      launched+="$c "
      # Who started it learns what it must stop (scripts/start.sh stops only what it launched).
      if [ -n "${INFRA_LAUNCHED_FILE:-}" ]; then echo "$c" >>"$INFRA_LAUNCHED_FILE"; fi
    fi
    pending+=("$c")
  done
  for c in "${pending[@]}"; do
    local wait_var grace_var
    wait_var="$(upper "$c")_WAIT_S"; grace_var="$(upper "$c")_STOP_GRACE_S"
    if ! wait_ready "$c" "${!wait_var}" "${c}_ready"; then
      log "$(label "$c"): did not become ready"
      log_tail "$c" 40
      # Don't leave a half-started server of ours behind to confuse the next
      # attempt; one that was already running before this call is left alone.
      if [[ "$launched" == *" $c "* ]]; then
        stop_process "$c" "${!grace_var}"
        if declare -F "${c}_cleanup" >/dev/null; then "${c}_cleanup"; fi
      fi
      failed=1
    elif declare -F "${c}_configure" >/dev/null && ! "${c}_configure"; then
      failed=1
    fi
  done
  return "$failed"
}

cmd_stop() {
  local c grace_var
  for c in "$@"; do
    grace_var="$(upper "$c")_STOP_GRACE_S"
    if pid_of "$c" >/dev/null; then
      stop_process "$c" "${!grace_var}"
      if declare -F "${c}_cleanup" >/dev/null; then "${c}_cleanup"; fi
      log "$(label "$c"): stopped"
    elif port_open "$(port_of "$c")"; then
      # Claiming success here would let a fault test believe the server is down.
      die "$(label "$c"): port $(port_of "$c") is in use by a process not started by infra.sh (no pid file in $INFRA_RUN_DIR/$c); not stopping it"
    else
      # What a crashed run left behind (the cluster's changes to the host) goes all the same.
      if declare -F "${c}_cleanup" >/dev/null; then "${c}_cleanup"; fi
      log "$(label "$c"): not running"
    fi
  done
}

cmd_status() {
  local c pid rc=0 url
  for c in "$@"; do
    url="$("${c}_url")"; url="${url%%$'\n'*}"; url="${url#*=}"   # the first line's value
    url="$(sed -E 's#//[^/@]*@#//#' <<<"$url")"   # without a password (Redis's)
    if pid="$(pid_of "$c")"; then
      if "${c}_ready"; then
        printf '%-6s running   pid %-8s %s\n' "$(label "$c")" "$pid" "$url"
      else
        printf '%-6s starting  pid %-8s %s (not answering yet)\n' "$(label "$c")" "$pid" "$url"; rc=3
      fi
    elif "${c}_ready"; then
      printf '%-6s running   (not started by infra.sh) %s\n' "$(label "$c")" "$url"
    elif port_open "$(port_of "$c")"; then
      printf '%-6s blocked   port %s is used by another program\n' "$(label "$c")" "$(port_of "$c")"; rc=3
    else
      printf '%-6s stopped   %s\n' "$(label "$c")" "$url"; rc=3
    fi
  done
  return "$rc"
}

cmd_restart() {
  cmd_stop "$@"
  cmd_start "$@"
}

cmd_url() {
  local c
  for c in "$@"; do "${c}_url"; done
}

cmd_logs() {
  [ $# -eq 1 ] || die "logs takes one component"
  log_tail "$1" 100
}

cmd_reset() {
  local c d
  cmd_stop "$@"
  for c in "$@"; do
    for d in $("${c}_data_dirs"); do
      log "$(label "$c"): deleting $d"
      rm -rf "$d"
    done
  done
  log "data wiped; run '$0 start' to start again"
}

main() {
  [ $# -ge 1 ] || usage
  local cmd="$1" comps
  # shellcheck disable=SC2207 # component names have no spaces
  comps=($(resolve "${2:-all}"))
  case "$cmd" in
    start) with_lock cmd_start "${comps[@]}" ;;
    stop) with_lock cmd_stop "${comps[@]}" ;;
    restart) with_lock cmd_restart "${comps[@]}" ;;
    reset) with_lock cmd_reset "${comps[@]}" ;;
    status) cmd_status "${comps[@]}" ;;
    url) cmd_url "${comps[@]}" ;;
    logs) [ $# -ge 2 ] || usage; cmd_logs "${comps[@]}" ;;
    -h | --help | help) usage ;;
    *) log "unknown command '$cmd'"; usage ;;
  esac
}

main "$@"
