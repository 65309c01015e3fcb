# shellcheck shell=bash disable=SC2034 # KUBE_KANIKO_IMAGE is read by images.sh and kube.sh
# kaniko's executor, which builds a repository's own Dockerfile inside a build pod (sourced by
# kube.sh and run.sh; docs/kubernetes-runner.md, "A repository's own Dockerfile"). Built once from
# the Go module proxy into a layer and pushed by run.sh as platform/kaniko:<version>: the
# executor at /kaniko/executor (the platform adds the Dockerfile's FROM image and the
# checkout as layers of each build's own image, so that the build pod needs no registry), and
# Debian's static busybox at /kaniko/busybox (the platform's script around the executor, and its
# `cat` of the built image; kaniko leaves /kaniko out of what it builds).
# kaniko is archived (2025); v1.23.2 is its last release. `go install` of it fails here (the proxy
# refuses the module's version list, which go install reads for deprecations), so it is built from
# a copy of the module's directory, whose vendor/ holds only modules.txt.

KUBE_KANIKO_VERSION=v1.23.2
KUBE_KANIKO_IMAGE="127.0.0.1:$KUBE_REGISTRY_PORT/platform/kaniko:$KUBE_KANIKO_VERSION"
kube_kaniko_layer() { echo "$KUBE_CACHE/images/kaniko-$KUBE_KANIKO_VERSION-busybox.tar"; }

kube_kaniko_build() {
  local out work mod started=$SECONDS
  out="$(kube_kaniko_layer)"
  [ -s "$out" ] && return 0
  log "kube: building kaniko $KUBE_KANIKO_VERSION's executor (first start only)"
  work="$(mktemp -d)"
  (cd "$work" && go mod download -json "github.com/GoogleContainerTools/kaniko@$KUBE_KANIKO_VERSION" >mod.json) \
    || die "kube: go mod download of kaniko $KUBE_KANIKO_VERSION failed"
  mod="$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' "$work/mod.json")"
  [ -d "$mod" ] || die "kube: kaniko's module directory not found"
  cp -r "$mod" "$work/src" && chmod -R u+w "$work/src" && rm -rf "$work/src/vendor"
  mkdir -p "$work/root/kaniko/cache" "$work/root/workspace"
  GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 19 go -C "$work/src" build "${KUBE_GO_FLAGS[@]}" -ldflags "-s -w" \
    -o "$work/root/kaniko/executor" ./cmd/executor || die "kube: go build of kaniko's executor failed"
  install -m 755 /bin/busybox "$work/root/kaniko/busybox"
  mkdir -p "$(dirname "$out")"
  tar -C "$work/root" --owner=0 --group=0 --numeric-owner -cf "$out.tmp" . && mv -f "$out.tmp" "$out"
  rm -rf "$work"
  log "kube: built $out in $((SECONDS - started)) s"
}
