#!/usr/bin/env bash
# Builds the web dashboard (apps/dashboard → apps/dashboard/dist, which the gateway serves at /)
# when its build is missing or older than its sources or the API document it is typed from.
# scripts/start.sh and scripts/test.sh run it after `tsc -b`; FORCE=1 builds anyway.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dir=apps/dashboard
stamp=$dir/dist/index.html
if [ -z "${FORCE:-}" ] && [ -f "$stamp" ] &&
  [ -z "$(find "$dir/src" "$dir/index.html" "$dir/vite.config.ts" "$dir/package.json" \
    "$dir/tsconfig.json" services/gateway/openapi.json -newer "$stamp" -not -name schema.d.ts \
    -print -quit)" ]; then
  exit 0
fi
printf '[dashboard] building %s (types from services/gateway/openapi.json, then vite)\n' "$dir" >&2
started=$(date +%s)
npm run build --silent -w "$dir" >&2
printf '[dashboard] built in %s s\n' "$(($(date +%s) - started))" >&2
