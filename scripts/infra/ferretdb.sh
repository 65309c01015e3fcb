# shellcheck shell=bash disable=SC2034 # *_WAIT_S/*_STOP_GRACE_S are read indirectly by infra.sh
# MongoDB-compatible component for infra.sh (sourced): FerretDB v1 with the SQLite
# backend, built from the small Go program in scripts/infra/ferretdb/, with the
# patches in scripts/infra/ferretdb/patches/ applied to FerretDB's source.

MONGO_PORT="${MONGO_PORT:-27017}"
FERRETDB_WAIT_S="${MONGO_WAIT_S:-30}"
FERRETDB_STOP_GRACE_S=15

FERRETDB_SRC="$INFRA_DIR/ferretdb"
# Only the SQLite backend is used: dropping PostgreSQL saves compile time.
# Stripped (-s -w) and path-free (-trimpath) binary, ~20 MB.
FERRETDB_BUILD_FLAGS=(-trimpath "-ldflags=-s -w" -tags ferretdb_no_postgresql)

ferretdb_url() { echo "MONGO_URL=mongodb://127.0.0.1:$MONGO_PORT"; }

# FerretDB's own source gets the patches in ferretdb/patches/ (each explains itself):
# the module go.sum pins is copied, patched and used through a `replace`.
FERRETDB_MODULE=github.com/FerretDB/FerretDB

# The binary is named after a hash of its inputs (sources, patches, build flags, Go
# version): an unchanged program is reused, a changed one is rebuilt next to the old one.
ferretdb_bin() {
  local key
  key="$( { cat "$FERRETDB_SRC/go.mod" "$FERRETDB_SRC/go.sum" "$FERRETDB_SRC/main.go" \
            "$FERRETDB_SRC"/patches/*.patch
            echo "${FERRETDB_BUILD_FLAGS[*]}"; go env GOVERSION; } | sha256sum | cut -c1-16)"
  echo "$INFRA_CACHE_DIR/ferretdb/bin/ferretdb-$key"
}

# The user's own Go module and build caches are used (GOMODCACHE/GOCACHE,
# outside the repo): a from-scratch build needs ~850 MB of them, not worth
# duplicating. -mod=readonly: build exactly what go.sum pins, never edit go.mod.
ferretdb_go() {
  GOFLAGS="-mod=readonly" go "$@"
}

ferretdb_install() {
  command -v go >/dev/null || die "mongo: go not found (need Go 1.22+ to build it once)"
  FERRETDB_BIN="$(ferretdb_bin)"
  [ -x "$FERRETDB_BIN" ] && return 0
  log "mongo: building $FERRETDB_BIN (first run only: about a minute on 2 cores)"
  mkdir -p "$(dirname "$FERRETDB_BIN")"
  # -v lists each package as it is compiled; show that as a progress line every
  # 25 packages instead of ~480 package names. Lines with spaces (go: downloading
  # ..., compiler errors) pass through.
  log "mongo: downloading modules and compiling"
  # A build directory of its own: two run directories (tests, benchmarks) may build at once.
  local work="$INFRA_CACHE_DIR/ferretdb/build-$$" module_dir patch_file
  rm -rf "$work" && mkdir -p "$work/program"
  ferretdb_go -C "$FERRETDB_SRC" mod download "$FERRETDB_MODULE" || die "mongo: go mod download failed"
  module_dir="$(ferretdb_go -C "$FERRETDB_SRC" list -m -f '{{.Dir}}' "$FERRETDB_MODULE")"
  [ -d "$module_dir" ] || die "mongo: $FERRETDB_MODULE not in the module cache"
  cp -R "$module_dir" "$work/FerretDB" && chmod -R u+w "$work/FerretDB"
  for patch_file in "$FERRETDB_SRC"/patches/*.patch; do
    log "mongo: applying $(basename "$patch_file")"
    patch --quiet --forward -p1 -d "$work/FerretDB" <"$patch_file" \
      || die "mongo: $(basename "$patch_file") does not apply to $FERRETDB_MODULE"
  done
  cp "$FERRETDB_SRC/go.mod" "$FERRETDB_SRC/go.sum" "$FERRETDB_SRC/main.go" "$work/program/"
  go -C "$work/program" mod edit -replace "$FERRETDB_MODULE=../FerretDB"
  if ! ferretdb_go -C "$work/program" build -v "${FERRETDB_BUILD_FLAGS[@]}" -o "$FERRETDB_BIN.tmp" . 2>&1 \
    | awk '/^#|[[:space:]]/ { print; next }
           { n++; if (n % 25 == 0) { printf "[infra] mongo:   %d packages compiled\n", n; fflush() } }' >&2
  then
    die "mongo: go build failed (output above)"
  fi
  mv -f "$FERRETDB_BIN.tmp" "$FERRETDB_BIN"
  rm -rf "$work"
  # Older builds are dead weight (~20 MB each). Deleting one that a running
  # server was started from is harmless on Linux (the process keeps its inode).
  find "$(dirname "$FERRETDB_BIN")" -name 'ferretdb-*' ! -path "$FERRETDB_BIN" -type f -delete
  log "mongo: built $FERRETDB_BIN"
}

ferretdb_launch() {
  local dir="$INFRA_RUN_DIR/ferretdb"
  mkdir -p "$dir/data"
  start_detached ferretdb "$FERRETDB_BIN" serve \
    -listen-addr "127.0.0.1:$MONGO_PORT" -sqlite-dir "$dir/data"
}

# Ready = a MongoDB `ping` over the wire protocol returns {ok: 1}, checked with
# the binary's own `ping` subcommand. Any built binary will do for that (the
# server may still run an older build after main.go changed); with none built,
# nothing of ours can be running.
ferretdb_ready() {
  local bin=""
  bin="$(ferretdb_bin 2>/dev/null)" || true
  if [ ! -x "$bin" ]; then
    bin="$(find "$INFRA_CACHE_DIR/ferretdb/bin" -name 'ferretdb-*' ! -name '*.tmp' -type f 2>/dev/null | head -n 1)"
  fi
  [ -n "$bin" ] && [ -x "$bin" ] || return 1
  "$bin" ping -url "mongodb://127.0.0.1:$MONGO_PORT/" -timeout 2s >/dev/null 2>&1
}

ferretdb_data_dirs() { echo "$INFRA_RUN_DIR/ferretdb/data"; }
