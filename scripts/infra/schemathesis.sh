#!/usr/bin/env bash
# Schemathesis (https://schemathesis.readthedocs.io), the property-based API tester the e2e suite
# runs against the stack's /api/openapi.json (e2e/src/schemathesis.test.ts).
#
#   bash scripts/infra/schemathesis.sh          installs it if missing; prints the path of `st`
#
# Installed from PyPI with pip, at the pinned version, into a virtual environment of its own
# under ~/.cache/platform-dev (beside scripts/infra's other downloads), never inside the repository; kept
# between runs, made again when the version changes. Needs python3 (3.10 or later) with venv.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
cache="${XDG_CACHE_HOME:-$HOME/.cache}/platform-dev"
venv="$cache/schemathesis-$SCHEMATHESIS_VERSION"
st="$venv/bin/st"

# `.installed` is written last: an install that was cut short is made again from scratch.
if [ ! -f "$venv/.installed" ]; then
  python3 -c 'import venv, ensurepip' 2>/dev/null || {
    echo "schemathesis needs python3 with venv and pip (Debian: apt-get install python3-venv)" >&2
    exit 1
  }
  echo "installing schemathesis $SCHEMATHESIS_VERSION into $venv (pip, from PyPI)" >&2
  rm -rf "$venv"
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "schemathesis==$SCHEMATHESIS_VERSION" >&2
  touch "$venv/.installed"
fi
"$st" --version >/dev/null
echo "$st"
