#!/usr/bin/env bash
# Starts the whole platform locally (README): `npm start`.
#
# Installs what is missing, starts Redis, Kafka and FerretDB on 127.0.0.1 (unless MONGO_URL,
# KAFKA_BROKERS and REDIS_URL are given), builds the services, starts the development identity
# provider (unless GOOGLE_CERTS_URL is given) and the five services (the gateway serving the web
# dashboard at /, built by scripts/build-dashboard.sh), waits until every /readyz
# answers and prints the gateway URL. Ctrl-C or SIGTERM stops everything it started.
#
# It watches only the platform's own processes: dev-idp and the five services, each listening on
# 127.0.0.1 (HOST). One that exits is started again, after 1 s, then 2 s, 4 s ... (at most 30 s),
# its log kept as <name>.log.1; one that exits RESTART_LIMIT times (5) within RESTART_WINDOW_S (60)
# stops the platform, as Ctrl-C does. Deployed apps are not watched here: they run under the
# runtime's supervisor, which restarts them and which the deployments service starts (again, if it
# died) detached; so an app that dies, or a crash of the deployments service itself, never stops
# the platform, and the apps keep serving while deployments restarts. <name>.pid in LOG_DIR holds
# each process's pid.
#
# INTERNAL_SECRET, SESSION_SECRET and ENCRYPTION_KEY, unless given, are this machine's own: made
# at random on the first start and kept in ~/.cache/platform-dev/secrets (mode 600,
# scripts/infra/README.md), the same on every later start.
#
# Passed through to the services when set: GATEWAY_PORT, GOOGLE_CLIENT_ID, GOOGLE_CERTS_URL,
# WEBHOOK_ALLOW_PRIVATE, WEBHOOK_RETRY_SCHEDULE, SOURCE_ALLOW_LOCAL, HEALTH_CHECK_TIMEOUT,
# RUNTIME_ROUTER_PORT, LOG_LEVEL.
# Deployed apps answer at http://<serviceId>.localhost:$GATEWAY_PORT: the gateway forwards those
# hosts to the local runtime's router. The runtime's supervisor (started by the deployments
# service, in RUNTIME_DIR) outlives a restart of the services; this script stops it, and the apps
# with it, when it stops.
# STACK_NAME (default "platform") names the databases (<name>_auth, ...) and consumer groups
# (<service>-<name>: a service may only use groups starting with its name), so a second stack
# (the end-to-end tests') can run beside this one on other ports.
# RUNTIME=kubernetes: builds and apps run on the local single-node Kubernetes cluster instead
# (docs/kubernetes-runner.md), started with its registry like the other servers (the first time
# builds it: many minutes), or on the one KUBECONFIG names (with KUBE_REGISTRY, KUBE_NODE_IMAGE).
# Kafka: each service logs in as its own user (scripts/infra/kafka-acls.sh) with the password in
# KAFKA_SASL_PASSWORD_<SERVICE> (infra.sh url gives the local broker's); KAFKA_SASL_MECHANISM,
# KAFKA_TLS and KAFKA_TLS_CA_FILE are passed through. Without such a password the service
# connects without a login (a broker without SASL).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
# shellcheck source=infra/lib.sh
. scripts/infra/lib.sh # dev_secret
# shellcheck source=lib/npm-packages.sh
. scripts/lib/npm-packages.sh # install_npm_packages

say() { printf '[start] %s\n' "$*" >&2; }
started_at=$(date +%s)

: "${STACK_NAME:=platform}"
: "${GATEWAY_PORT:=8080}" "${AUTH_PORT:=4001}" "${PROJECTS_PORT:=4002}" "${DEPLOYMENTS_PORT:=4003}"
: "${WEBHOOKS_PORT:=4004}" "${DEV_IDP_PORT:=4010}"
: "${LOG_DIR:=${XDG_CACHE_HOME:-$HOME/.cache}/platform-dev/run/$STACK_NAME-logs}"
mkdir -p "$LOG_DIR"

# Tenants' builds and running apps, per stack.
: "${RUNTIME_ROUTER_PORT:=4020}"
export RUNTIME_ROUTER_PORT
export RUNTIME_DIR="${RUNTIME_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-dev/run/$STACK_NAME-runtime}"
export BUILDS_DIR="${BUILDS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-dev/run/$STACK_NAME-builds}"

# stop_supervisor: SIGTERM to the runtime's supervisor (it stops every app), if one answers.
stop_supervisor() {
  local pid
  pid=$(curl -fsS --max-time 2 --unix-socket "$RUNTIME_DIR/supervisor.sock" http://runtime/healthz 2>/dev/null \
    | sed -n 's/.*"pid":\([0-9]*\).*/\1/p') || true
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

pids=()
# The servers this run launched (infra.sh writes their names here): the only ones it stops.
infra_launched="$(mktemp)"
cleanup() {
  # Ctrl-C reaches us twice (from the terminal and forwarded by npm): finish cleaning up anyway.
  trap '' INT TERM
  trap - EXIT
  say "stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  stop_supervisor
  rm -f "$LOG_DIR"/*.pid
  local c
  while read -r c; do bash scripts/infra/infra.sh stop "$c" || true; done <"$infra_launched"
  rm -f "$infra_launched"
  say "stopped"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

install_npm_packages say
say "building (tsc -b; the dashboard when its sources changed)"
node node_modules/typescript/bin/tsc -b
bash scripts/build-dashboard.sh

if [ -z "${MONGO_URL:-}" ] || [ -z "${KAFKA_BROKERS:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  # Only what this script starts is stopped on exit; servers already running are left alone.
  say "starting infrastructure (first run installs and builds it; see scripts/infra/README.md)"
  INFRA_LAUNCHED_FILE="$infra_launched" bash scripts/infra/infra.sh start all
  eval "$(bash scripts/infra/infra.sh url all | sed 's/^/export /')"
fi
export RUNTIME="${RUNTIME:-local}"
if [ "$RUNTIME" = kubernetes ] && [ -z "${KUBECONFIG:-}" ]; then
  say "starting the Kubernetes cluster (RUNTIME=kubernetes; the first run builds it)"
  INFRA_LAUNCHED_FILE="$infra_launched" bash scripts/infra/infra.sh start kube
  eval "$(bash scripts/infra/infra.sh url kube | sed 's/^/export /')"
fi
# The Kafka logins stay in this script: no service runs as the admin (the tests' user), and each
# is handed its own password below, not the others'.
export -n KAFKA_SASL_USERNAME KAFKA_SASL_PASSWORD KAFKA_SASL_PASSWORD_PROJECTS \
  KAFKA_SASL_PASSWORD_DEPLOYMENTS KAFKA_SASL_PASSWORD_WEBHOOKS
# kafka_login SERVICE: the settings that log SERVICE in to Kafka as itself, if it has a password.
kafka_login() {
  local var
  var="KAFKA_SASL_PASSWORD_$(tr '[:lower:]' '[:upper:]' <<<"$1")"
  if [ -n "${!var:-}" ]; then
    echo "KAFKA_SASL_USERNAME=$1"
    echo "KAFKA_SASL_PASSWORD=${!var}"
  fi
}

# Deployments build and run tenants' code in a bubblewrap sandbox: Debian's bwrap, installed if
# missing. Where it cannot work, the deployments service refuses to run code (see its README).
say "checking the sandbox (bubblewrap)"
bash scripts/infra/bubblewrap.sh || say "no working sandbox: deployments will refuse to build or run code"
# Sandboxes reach public addresses only; the package registries' addresses count as public here.
export SANDBOX_EGRESS_ALLOW="${SANDBOX_EGRESS_ALLOW-$(bash scripts/infra/registry-egress.sh)}"
export KUBE_EGRESS_ALLOW="${KUBE_EGRESS_ALLOW-$SANDBOX_EGRESS_ALLOW}"

export NODE_ENV="${NODE_ENV:-development}"
export LOG_LEVEL="${LOG_LEVEL:-info}"
# This machine's own secrets (lib.sh dev_secret), never values written in the repository.
# encryption_key: <keyId>:<base64 of 32 random bytes>, the key id naming this machine's key.
encryption_key() { printf 'local-%s:%s' "$(random_hex 4)" "$(head -c 32 /dev/urandom | base64 -w0)"; }
INTERNAL_SECRET="${INTERNAL_SECRET:-$(dev_secret internal-secret)}"
SESSION_SECRET="${SESSION_SECRET:-$(dev_secret session-secret)}"
# Seals secret variables (projects) and opens them for builds and apps (deployments), and seals
# webhook signing secrets (webhooks).
ENCRYPTION_KEY="${ENCRYPTION_KEY:-$(dev_secret encryption-key encryption_key)}"
export INTERNAL_SECRET SESSION_SECRET ENCRYPTION_KEY
export GOOGLE_CLIENT_ID="${GOOGLE_CLIENT_ID:-local-development.apps.googleusercontent.com}"
export WEBHOOK_ALLOW_PRIVATE="${WEBHOOK_ALLOW_PRIVATE:-true}"
export PUBLIC_URL="${PUBLIC_URL:-http://localhost:$GATEWAY_PORT}"
export ALLOWED_ORIGINS="${ALLOWED_ORIGINS:-http://localhost:$GATEWAY_PORT,http://127.0.0.1:$GATEWAY_PORT}"
export AUTH_URL="http://127.0.0.1:$AUTH_PORT" PROJECTS_URL="http://127.0.0.1:$PROJECTS_PORT"
export DEPLOYMENTS_URL="http://127.0.0.1:$DEPLOYMENTS_PORT" WEBHOOKS_URL="http://127.0.0.1:$WEBHOOKS_PORT"
# Services' repositories may be file:// or on this machine (contracts.md); apps' URLs go through
# the gateway (projects announces them, the gateway forwards them to the runtime's router).
export SOURCE_ALLOW_LOCAL="${SOURCE_ALLOW_LOCAL:-true}"
export APPS_URL_TEMPLATE="http://{serviceId}.localhost:$GATEWAY_PORT"
export RUNTIME_ROUTER_URL="http://127.0.0.1:$RUNTIME_ROUTER_PORT"

# run NAME PORT SCRIPT [VAR=value...]: starts one process in the background, logging to a file;
# its pid in pids, in $LOG_DIR/NAME.pid and, for restarts, its name and command line in name_of
# and spec_of.
declare -A name_of=() spec_of=()
run() {
  local name=$1 port=$2 script=$3
  spec_of[$name]=$(printf '%q ' "$@")
  shift 3
  env PORT="$port" "$@" node "$root/$script" >"$LOG_DIR/$name.log" 2>&1 &
  pids+=($!)
  name_of[$!]=$name
  echo "$!" >"$LOG_DIR/$name.pid"
  say "$name: pid $! on 127.0.0.1:$port (log: $LOG_DIR/$name.log)"
}

# restart PID: starts again the process that had PID (see the header), or exits 1 when it has
# exited too often. Its log is kept as <name>.log.1.
: "${RESTART_LIMIT:=5}" "${RESTART_WINDOW_S:=60}"
declare -A exits_of=()
restart() {
  local pid=$1 name=${name_of[$1]} now recent=() t delay
  now=$(date +%s)
  for t in ${exits_of[$name]:-} "$now"; do
    [ "$t" -gt $((now - RESTART_WINDOW_S)) ] && recent+=("$t")
  done
  exits_of[$name]="${recent[*]}"
  local p kept=()
  for p in "${pids[@]}"; do [ "$p" = "$pid" ] || kept+=("$p"); done
  pids=("${kept[@]}")
  unset "name_of[$pid]"
  say "$name (pid $pid) exited; last log lines:"
  tail -n 20 "$LOG_DIR/$name.log" >&2
  if [ "${#recent[@]}" -ge "$RESTART_LIMIT" ]; then
    say "$name exited ${#recent[@]} times within ${RESTART_WINDOW_S} s: stopping the platform"
    exit 1
  fi
  delay=$((1 << (${#recent[@]} - 1)))
  [ "$delay" -le 30 ] || delay=30
  # In the background: a SIGTERM meanwhile stops the platform at once, not after the delay.
  sleep "$delay" &
  wait $!
  mv -f "$LOG_DIR/$name.log" "$LOG_DIR/$name.log.1"
  eval "run ${spec_of[$name]}"
}

if [ -z "${GOOGLE_CERTS_URL:-}" ]; then
  run dev-idp "$DEV_IDP_PORT" tools/dev-idp/dist/main.js
  export GOOGLE_CERTS_URL="http://127.0.0.1:$DEV_IDP_PORT/oauth2/v1/certs"
  export DEV_IDP_URL="http://127.0.0.1:$DEV_IDP_PORT"
fi
run auth "$AUTH_PORT" services/auth/dist/main.js MONGO_DB="${STACK_NAME}_auth"
# shellcheck disable=SC2046 # kafka_login prints whole VAR=value words (no spaces in them)
run projects "$PROJECTS_PORT" services/projects/dist/main.js $(kafka_login projects) \
  MONGO_DB="${STACK_NAME}_projects" KAFKA_GROUP_ID="projects-$STACK_NAME"
# shellcheck disable=SC2046
run deployments "$DEPLOYMENTS_PORT" services/deployments/dist/main.js $(kafka_login deployments) \
  MONGO_DB="${STACK_NAME}_deployments" KAFKA_GROUP_ID="deployments-$STACK_NAME"
# shellcheck disable=SC2046
run webhooks "$WEBHOOKS_PORT" services/webhooks/dist/main.js $(kafka_login webhooks) \
  MONGO_DB="${STACK_NAME}_webhooks" KAFKA_GROUP_ID="webhooks-$STACK_NAME"
run gateway "$GATEWAY_PORT" services/gateway/dist/main.js GATEWAY_PORT="$GATEWAY_PORT"

ready_urls=("http://127.0.0.1:$AUTH_PORT" "http://127.0.0.1:$PROJECTS_PORT" "http://127.0.0.1:$DEPLOYMENTS_PORT"
  "http://127.0.0.1:$WEBHOOKS_PORT" "http://127.0.0.1:$GATEWAY_PORT")
[ -n "${DEV_IDP_URL:-}" ] && ready_urls+=("$DEV_IDP_URL")
say "waiting for every /readyz"
deadline=$(($(date +%s) + ${READY_TIMEOUT_S:-120}))
for url in "${ready_urls[@]}"; do
  until curl -fsS -o /dev/null "$url/readyz" 2>/dev/null; do
    for pid in "${pids[@]}"; do
      if ! kill -0 "$pid" 2>/dev/null; then
        say "a process exited early; last log lines:"
        tail -n 20 "$LOG_DIR"/*.log >&2
        exit 1
      fi
    done
    if [ "$(date +%s)" -gt "$deadline" ]; then
      say "$url/readyz did not answer in time"
      tail -n 20 "$LOG_DIR"/*.log >&2
      exit 1
    fi
    sleep 0.3
  done
done

say "ready in $(($(date +%s) - started_at)) s"
# The README's first deploy: examples/hello in a git repository of its own (SOURCE_ALLOW_LOCAL).
if example=$(bash scripts/prepare-example.sh); then
  read -r example_repo example_commit <<<"$example"
  echo "Sample app (README, first deploy): repository $example_repo, commit $example_commit"
fi
echo "Platform ready at http://localhost:$GATEWAY_PORT (sign in: http://localhost:$GATEWAY_PORT/dev/)"
while true; do
  exited=
  wait -n -p exited "${pids[@]}" || true
  [ -n "$exited" ] && restart "$exited"
done
