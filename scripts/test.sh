#!/usr/bin/env bash
# The one command that runs every test (README): `npm test`.
#
# On a fresh machine it installs what is missing (npm packages; Redis, Kafka and FerretDB through
# scripts/infra, cached under ~/.cache/platform-dev), starts those servers on 127.0.0.1 unless
# MONGO_URL, KAFKA_BROKERS and REDIS_URL are given, and the local Kubernetes cluster unless
# KUBECONFIG is given, type-checks and lints, then runs every jest project: libs/shared, each
# service, tools, the dashboard's logic, the manifests, and the end-to-end suite against the
# whole stack. It ends with one line `tests: N passed, N failed, N skipped`. Tests are never
# retried unless JEST_RETRY_TIMES=n is set; then the summary names every retried test.
#
# Extra arguments go to jest, e.g. `npm test -- services/projects`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=lib/npm-packages.sh
. scripts/lib/npm-packages.sh # install_npm_packages

step() { printf '\n==> %s\n' "$*" >&2; }
started=$(date +%s)

install_npm_packages step

step "type-checking and building (tsc -b; the web dashboard: scripts/build-dashboard.sh)"
npx tsc -b
bash scripts/build-dashboard.sh

step "linting (eslint, prettier)"
npx eslint --max-warnings 0 .
npx prettier --check . >/dev/null || { npx prettier --check . ; exit 1; }

if [ -z "${MONGO_URL:-}" ] || [ -z "${KAFKA_BROKERS:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  if docker info >/dev/null 2>&1; then
    step "a Docker engine answers: the tests start their own containers (testcontainers)"
  else
    step "starting local Redis, Kafka and FerretDB (scripts/infra; first run installs and builds them)"
    bash scripts/infra/infra.sh start all
    eval "$(bash scripts/infra/infra.sh url all | sed 's/^/export /')"
  fi
fi

# The Kubernetes runner's tests run on a real single-node cluster (scripts/infra kube): started here,
# before jest, so that its first build (many minutes, cached in ~/.cache/platform-dev/kube) happens
# once and not under a jest timeout; the fault test stops it at the end. KUBECONFIG: use that one.
if [ -z "${KUBECONFIG:-}" ]; then
  step "starting the local Kubernetes cluster (scripts/infra kube; the first run builds it)"
  bash scripts/infra/infra.sh start kube || step "no cluster: the Kubernetes tests will fail and say why"
fi

# Builds and apps run in a bubblewrap sandbox (services/deployments/src/sandbox): Debian's bwrap.
step "checking the sandbox (bubblewrap; installed by scripts/infra/bubblewrap.sh if missing)"
bash scripts/infra/bubblewrap.sh || step "no working sandbox: the sandbox tests will fail and say why"
# Sandboxes reach public addresses only; the package registries' addresses count as public here.
export SANDBOX_EGRESS_ALLOW="${SANDBOX_EGRESS_ALLOW-$(bash scripts/infra/registry-egress.sh)}"

# The sign-in page and the web dashboard are tested in a real headless browser: Debian's chromium
# (installed by scripts/infra/chromium.sh if missing; CHROMIUM_PATH names another).
step "checking the browser (Debian's chromium; installed by scripts/infra/chromium.sh if missing)"
bash scripts/infra/chromium.sh || step "no working browser: the browser tests will fail and say why"

# Phase 1: every suite in parallel. Phase 2: the fault tests (`*.fault.test.ts`), one at a time,
# because they stop and restart the shared Redis, Kafka or MongoDB server.
results_dir=$(mktemp -d)
trap 'rm -rf "$results_dir"' EXIT
status=0
if [ $# -gt 0 ]; then
  # A chosen part (`npm test -- services/projects`): one run, one file at a time.
  step "running the chosen tests (jest $*)"
  npx jest --ci --runInBand --json --outputFile="$results_dir/main.json" "$@" || status=$?
  echo '{"numPassedTestSuites":0,"numFailedTestSuites":0,"numPassedTests":0,"numFailedTests":0,"numPendingTests":0}' >"$results_dir/faults.json"
else
  step "running the test suites (jest)"
  npx jest --ci --maxWorkers="${JEST_WORKERS:-2}" --testPathIgnorePatterns '\.fault\.test\.ts$' \
    --json --outputFile="$results_dir/main.json" || status=$?
  step "running the fault tests one at a time (they stop and start servers)"
  npx jest --ci --runInBand --passWithNoTests --testPathPatterns '\.fault\.test\.ts$' \
    --json --outputFile="$results_dir/faults.json" || status=$?
fi

node -e '
  const fs = require("node:fs");
  const runs = process.argv.slice(1).filter((f) => fs.existsSync(f)).map((f) => require(f));
  const sum = (k) => runs.reduce((n, r) => n + r[k], 0);
  if (runs.length < 2) console.log("(a jest run produced no results)");
  // Retries are off unless JEST_RETRY_TIMES asks for them; every retried test is named.
  const retried = runs.flatMap((r) => (r.testResults ?? []).flatMap((file) =>
    (file.assertionResults ?? []).filter((t) => (t.invocations ?? 1) > 1)
      .map((t) => `${t.fullName} (${t.invocations} runs, ${t.status})`)));
  if (retried.length > 0) console.log(`\nretried (JEST_RETRY_TIMES=${process.env.JEST_RETRY_TIMES}):\n  ${retried.join("\n  ")}`);
  console.log(`\nsuites: ${sum("numPassedTestSuites")} passed, ${sum("numFailedTestSuites")} failed`);
  console.log(`tests: ${sum("numPassedTests")} passed, ${sum("numFailedTests") + (runs.length < 2 ? 1 : 0)} failed, ${sum("numPendingTests")} skipped`);
' "$results_dir/main.json" "$results_dir/faults.json"
echo "took $(($(date +%s) - started)) s" >&2
exit "$status"
