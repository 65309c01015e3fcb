#!/usr/bin/env bash
# The one command that runs every test (README): `npm test`.
#
# On a fresh machine it installs what is missing (npm packages; Redis, Kafka and FerretDB through
# scripts/infra, cached under ~/.cache/platform-dev), starts those servers on 127.0.0.1 unless
# MONGO_URL, KAFKA_BROKERS and REDIS_URL are given, type-checks and lints, then runs every jest
# project: libs/shared, each service, tools, the manifests, and the end-to-end suite against
# the whole stack. It ends with one line `tests: N passed, N failed, N skipped`.
#
# Extra arguments go to jest, e.g. `npm test -- services/projects`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*" >&2; }
started=$(date +%s)

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund
fi

step "type-checking and building (tsc -b)"
npx tsc -b

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

# The sign-in page is tested in a real headless browser: Debian's chromium.
if [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  step "installing Debian's chromium for the browser test"
  if [ "$(id -u)" = 0 ]; then apt_get() { apt-get "$@"; }; else apt_get() { sudo apt-get "$@"; }; fi
  DEBIAN_FRONTEND=noninteractive apt_get install -y -q chromium >/dev/null 2>&1 ||
    { apt_get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt_get install -y -q chromium >/dev/null; }
fi

step "running the test suites (jest)"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
set +e
npx jest --ci --maxWorkers="${JEST_WORKERS:-2}" --json --outputFile="$results" "$@"
status=$?
set -e

node -e '
  const r = require(process.argv[1]);
  console.log(`\nsuites: ${r.numPassedTestSuites} passed, ${r.numFailedTestSuites} failed`);
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
' "$results" 2>/dev/null || echo "tests: 0 passed, 1 failed"
echo "took $(($(date +%s) - started)) s" >&2
exit "$status"
