#!/usr/bin/env bash
# Installs the browser the dashboard's browser tests drive (e2e/src/dashboard, the sign-in page's
# test): Debian's chromium, apt-get installed as root or through sudo, quietly, only when missing,
# then checks that it starts headless. CHROMIUM_PATH names another browser binary (then nothing is
# installed). scripts/test.sh calls it; see scripts/infra/README.md.
#
#   scripts/infra/chromium.sh          install if missing, then check it starts
#   scripts/infra/chromium.sh check    only check (exit 1 with the reason if it does not start)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

browser="${CHROMIUM_PATH:-/usr/bin/chromium}"

chromium_install() {
  [ -x "$browser" ] && return 0
  [ -n "${CHROMIUM_PATH:-}" ] && die "browser: CHROMIUM_PATH=$CHROMIUM_PATH is not an executable"
  log "browser: installing Debian's chromium (apt-get)"
  local aptlog="$INFRA_CACHE_DIR/apt-chromium.log"
  mkdir -p "$INFRA_CACHE_DIR"
  if ! { DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q chromium ||
    { run_as_root apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q chromium; }; } >"$aptlog" 2>&1; then
    tail -n 30 "$aptlog" >&2
    die "browser: apt-get install chromium failed (full output: $aptlog)"
  fi
}

chromium_check() {
  [ -x "$browser" ] || die "browser: no chromium at $browser (run scripts/infra/chromium.sh)"
  local out
  # The flags the tests launch it with; about:blank needs no network.
  if ! out=$(timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --dump-dom about:blank 2>&1); then
    die "browser: $browser does not start headless: $(tail -n 5 <<<"$out")"
  fi
}

case "${1:-install}" in
  install) chromium_install && chromium_check ;;
  check) chromium_check ;;
  *) die "usage: scripts/infra/chromium.sh [install|check]" ;;
esac
