# shellcheck shell=bash
# Sourced by scripts/start.sh and scripts/test.sh (from the repository's root), never executed.

# install_npm_packages SAY: `npm install` when node_modules is missing or older than
# package-lock.json; SAY (the calling script's own message function) tells the person first.
install_npm_packages() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    # `npm install` with the committed lock, not `npm ci`: the registry this project is built
    # against serves only linux-x64 builds of platform-specific packages, so the lock cannot list
    # the other platforms' optional ones, and `npm ci` refuses a lock without them.
    "$1" "installing npm packages (npm install, versions from package-lock.json)"
    npm install --no-audit --no-fund
  fi
}
