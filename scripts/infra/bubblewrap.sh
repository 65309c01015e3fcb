#!/usr/bin/env bash
# Installs the sandbox the deployments service runs tenants' builds and apps in: Debian's
# bubblewrap (`bwrap`) and nftables (`nft`, the sandboxes' egress rules), apt-get installed as
# root or through sudo, quietly, only when missing.
# scripts/test.sh and scripts/start.sh call it; see scripts/infra/README.md.
#
#   scripts/infra/bubblewrap.sh          install if missing, then check that it can make a sandbox
#   scripts/infra/bubblewrap.sh check    only check (exit 1 with the reason if bwrap is unusable)
#
# The check asks bwrap for what the service asks of it (new namespaces: mount, PID, IPC, UTS,
# network; a private /proc and /tmp). In a container without the privilege to make namespaces it
# fails and says so; the service then refuses to run code unless SANDBOX=none with
# ALLOW_UNSANDBOXED=true (development only), see services/deployments/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

bwrap_works() {
  bwrap --unshare-pid --unshare-ipc --unshare-uts --unshare-net --die-with-parent \
    --ro-bind / / --proc /proc --dev /dev --tmpfs /tmp true 2>&1
}

bwrap_install() {
  command -v bwrap >/dev/null && command -v nft >/dev/null && return 0
  log "sandbox: installing Debian's bubblewrap and nftables (apt-get)"
  local aptlog="$INFRA_CACHE_DIR/apt-bubblewrap.log"
  mkdir -p "$INFRA_CACHE_DIR"
  if ! { DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q bubblewrap nftables ||
    { run_as_root apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q bubblewrap nftables; }; } >"$aptlog" 2>&1; then
    tail -n 30 "$aptlog" >&2
    die "sandbox: apt-get install bubblewrap failed (full output: $aptlog)"
  fi
}

bwrap_check() {
  command -v bwrap >/dev/null || die "sandbox: bwrap is not installed (run scripts/infra/bubblewrap.sh)"
  local out
  if ! out="$(bwrap_works)"; then
    die "sandbox: bwrap is installed but cannot make a sandbox here: $out"
  fi
}

case "${1:-install}" in
  install) bwrap_install && bwrap_check ;;
  check) bwrap_check ;;
  *) sed -n '6,7s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
