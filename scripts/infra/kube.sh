# shellcheck shell=bash disable=SC2034 # *_WAIT_S/*_STOP_GRACE_S are read indirectly by infra.sh
# A single-node Kubernetes cluster for infra.sh (sourced): etcd, kube-apiserver, the controller
# manager, the scheduler, containerd v2 with runc (built: pods' user namespaces need runc >= 1.2)
# and Debian's CNI plugins, kubelet, kube-proxy
# (nftables), kube-router's firewall (enforces NetworkPolicies), CoreDNS and Debian's
# docker-registry, all on this machine. Not part of `all`.
#
# Built once from the Go module proxy into $INFRA_CACHE_DIR/kube (kube/cluster: one binary
# dispatching to each Kubernetes component and etcd; containerd and its runc shim; kube/coredns;
# kube/kube-router; crane, which makes images from tarballs; runc; kaniko's executor, which builds
# a repository's own Dockerfile in a build pod). kube/run.sh starts and supervises the processes;
# kube/host.sh records what the cluster changes on the host and puts it back at `stop`.

# shellcheck source=kube/config.sh
. "$INFRA_DIR/kube/config.sh"
# shellcheck source=kube/host.sh
. "$INFRA_DIR/kube/host.sh"
# shellcheck source=kube/images.sh
. "$INFRA_DIR/kube/images.sh"
# shellcheck source=kube/kaniko.sh
. "$INFRA_DIR/kube/kaniko.sh"

KUBE_WAIT_S="${KUBE_WAIT_S:-300}"
KUBE_STOP_GRACE_S=60
KUBE_VERSION=v1.36.3
KUBE_CONTAINERD_VERSION=v2.2.9
KUBE_CRANE_VERSION=v0.22.1
# runc with cgo and libseccomp: Debian's 1.1.5 cannot run a pod with `hostUsers: false`
# ("runtime does not support user namespaces"), which a Dockerfile's build needs (kaniko.sh).
KUBE_RUNC_VERSION=v1.4.3
KUBE_APT_PACKAGES=(runc containernetworking-plugins docker-registry conntrack busybox-static ipset libseccomp-dev)
KUBE_GO_FLAGS=(-p 2 -trimpath)
# kube-router is built one package at a time: it is the smallest, and builds beside the others.
KUBE_ROUTER_GO_FLAGS=(-p 1 -trimpath)

kube_url() {
  echo "KUBECONFIG=$KUBE_DIR/admin.kubeconfig"
  echo "KUBE_REGISTRY=127.0.0.1:$KUBE_REGISTRY_PORT"
  echo "KUBE_NODE_IMAGE=$KUBE_NODE_IMAGE"
  echo "KUBE_KANIKO_IMAGE=$KUBE_KANIKO_IMAGE"
  # CoreDNS answers on the node, not as a kube-dns pod: the runner's NetworkPolicies open it.
  echo "KUBE_DNS_CIDRS=$KUBE_NODE_IP/32"
}
kube_data_dirs() { echo "$KUBE_DIR"; }

# kube_bin_key DIR FLAGS...: a hash of a Go program's inputs, so that a changed one is rebuilt.
kube_bin_key() {
  local dir="$1"; shift
  { cat "$dir/go.mod" "$dir/go.sum" "$dir/main.go"; echo "$*"; go env GOVERSION; } | sha256sum | cut -c1-16
}
kube_cluster_ldflags() {
  local v=k8s.io/component-base/version
  echo "-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=36 -X $v.gitTreeState=clean"
}
# Each built program in a directory named after its inputs' hash; the binary keeps its own name
# (the cluster binary dispatches on its first argument when called `cluster`).
kube_cluster_bin() { echo "$KUBE_CACHE/cluster-$(kube_bin_key "$INFRA_DIR/kube/cluster" "$(kube_cluster_ldflags)")/cluster"; }
kube_coredns_bin() { echo "$KUBE_CACHE/coredns-$(kube_bin_key "$INFRA_DIR/kube/coredns" -s -w)/coredns"; }
kube_router_bin() {
  echo "$KUBE_CACHE/kube-router-$(kube_bin_key "$INFRA_DIR/kube/kube-router" -s -w "${KUBE_ROUTER_GO_FLAGS[@]}")/kube-router"
}
kube_containerd_dir() { echo "$KUBE_CACHE/containerd-$KUBE_CONTAINERD_VERSION"; }
kube_crane() { echo "$KUBE_CACHE/crane-$KUBE_CRANE_VERSION/crane"; }
kube_runc() { echo "$KUBE_CACHE/runc-$KUBE_RUNC_VERSION/runc"; }
kubectl() { "$(kube_cluster_bin)" kubectl --kubeconfig "$KUBE_DIR/admin.kubeconfig" "$@"; }

# kube_go_build NAME DIR OUT LDFLAGS [GO FLAGS...]: build the wrapper module in DIR (go.sum pins
# everything), niced and two packages at a time unless told otherwise: the machine is shared.
kube_go_build() {
  local name="$1" dir="$2" out="$3" ldflags="$4" started=$SECONDS
  shift 4
  [ $# -gt 0 ] || set -- "${KUBE_GO_FLAGS[@]}"
  [ -x "$out" ] && return 0
  log "kube: building $name (first start only; the cluster binary takes 7+ minutes on 2 idle cores, 35+ on busy ones)"
  mkdir -p "$(dirname "$out")"
  GOFLAGS=-mod=readonly nice -n 19 go -C "$dir" build "$@" -ldflags "$ldflags" \
    -o "$out.tmp.$$" . || die "kube: go build of $name failed (output above)"
  mv -f "$out.tmp.$$" "$out"
  # Older builds (~190 MB for the cluster): a running process keeps its inode.
  find "$KUBE_CACHE" -maxdepth 1 -name "$name-*" ! -path "$(dirname "$out")" -exec rm -rf {} +
  log "kube: built $out in $((SECONDS - started)) s"
}

# kube_go_install DIR PACKAGE@VERSION...: released programs that build with `go install`.
kube_go_install() {
  local dir="$1"; shift
  log "kube: building $* (first start only)"
  mkdir -p "$dir"
  GOBIN="$dir" CGO_ENABLED=0 nice -n 19 go install "${KUBE_GO_FLAGS[@]}" -ldflags "-s -w" \
    -tags "no_btrfs no_devmapper no_zfs" "$@" || die "kube: go install $* failed"
}

kube_install() {
  command -v go >/dev/null || die "kube: go not found (need Go 1.26 to build the cluster once)"
  local missing=() p
  for p in "${KUBE_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "kube: installing Debian's ${missing[*]}"
    { run_as_root apt-get update -q && DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q \
        --no-install-recommends "${missing[@]}"; } >"$INFRA_CACHE_DIR/apt-kube.log" 2>&1 \
      || { tail -20 "$INFRA_CACHE_DIR/apt-kube.log" >&2; die "kube: apt-get install failed"; }
  fi
  kube_go_build cluster "$INFRA_DIR/kube/cluster" "$(kube_cluster_bin)" "$(kube_cluster_ldflags)"
  kube_go_build coredns "$INFRA_DIR/kube/coredns" "$(kube_coredns_bin)" "-s -w"
  kube_go_build kube-router "$INFRA_DIR/kube/kube-router" "$(kube_router_bin)" "-s -w" "${KUBE_ROUTER_GO_FLAGS[@]}"
  local cd; cd="$(kube_containerd_dir)"
  [ -x "$cd/containerd-shim-runc-v2" ] || kube_go_install "$cd" \
    "github.com/containerd/containerd/v2/cmd/containerd@$KUBE_CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$KUBE_CONTAINERD_VERSION"
  [ -x "$(kube_crane)" ] || kube_go_install "$(dirname "$(kube_crane)")" \
    "github.com/google/go-containerregistry/cmd/crane@$KUBE_CRANE_VERSION"
  if [ ! -x "$(kube_runc)" ]; then
    log "kube: building runc $KUBE_RUNC_VERSION (first start only, cgo with libseccomp)"
    mkdir -p "$(dirname "$(kube_runc)")"
    GOBIN="$(dirname "$(kube_runc)")" CGO_ENABLED=1 nice -n 19 go install "${KUBE_GO_FLAGS[@]}" \
      -tags seccomp "github.com/opencontainers/runc@$KUBE_RUNC_VERSION" || die "kube: go install runc failed"
  fi
  kube_kaniko_build
  kube_images_build
}

kube_launch() {
  # A cluster that died without `stop` left its changes on the host: undo them first.
  kube_host_restore
  kube_write_config
  kube_host_snapshot
  start_detached kube env KUBE_BIN="$(kube_cluster_bin)" KUBE_COREDNS="$(kube_coredns_bin)" KUBE_ROUTER="$(kube_router_bin)" \
    KUBE_CONTAINERD_DIR="$(kube_containerd_dir)" KUBE_CRANE="$(kube_crane)" KUBE_VERSION="$KUBE_VERSION" \
    INFRA_RUN_DIR="$INFRA_RUN_DIR" INFRA_CACHE_DIR="$INFRA_CACHE_DIR" \
    KUBE_PORT="$KUBE_PORT" KUBE_REGISTRY_PORT="$KUBE_REGISTRY_PORT" KUBE_ETCD_PORT="$KUBE_ETCD_PORT" \
    bash "$INFRA_DIR/kube/run.sh"
}

# Ready: every process started, the registry answers, and the node is Ready by a heartbeat of
# this run's kubelet (the Node object kept in etcd still says Ready from the previous run).
kube_ready() {
  local bin ready since
  bin="$(kube_cluster_bin 2>/dev/null)" || return 1
  [ -x "$bin" ] && [ -s "$KUBE_DIR/admin.kubeconfig" ] && [ -f "$KUBE_STATE_DIR/all-started" ] || return 1
  curl -fsS -o /dev/null "http://127.0.0.1:$KUBE_REGISTRY_PORT/v2/" || return 1
  ready="$(kubectl get node "$KUBE_NODE_NAME" --request-timeout=3s \
    -o 'jsonpath={range .status.conditions[?(@.type=="Ready")]}{.status} {.lastHeartbeatTime}{end}' 2>/dev/null)" \
    || return 1
  since="$(cat "$KUBE_STATE_DIR/started-at" 2>/dev/null)" || return 1
  [ "${ready%% *}" = True ] && [ "$(date -u -d "${ready#* }" +%s 2>/dev/null || echo 0)" -ge "$since" ]
}

# After the supervisor is gone (stopped, crashed or failed to start): the host as it was.
kube_cleanup() { kube_host_restore; }
