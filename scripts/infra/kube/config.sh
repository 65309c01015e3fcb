# shellcheck shell=bash
# The cluster's configuration (sourced by kube.sh): its addresses, where everything lives, and the
# files each component reads, written into the run directory at every start.
#
# Ranges: pods 10.244.0.0/24 on the bridge kbr0 (the node's address 10.244.0.1), Services
# 10.96.0.0/16. Neither touches the sandboxes' 10.213.0.0/16 nor the tests' 10.123.0.0/16.
# Only the bridge address and 127.0.0.1 are listened on: nothing of the cluster is on eth0.

KUBE_PORT="${KUBE_PORT:-6443}"                        # kube-apiserver, 127.0.0.1
KUBE_REGISTRY_PORT="${KUBE_REGISTRY_PORT:-5000}"      # docker-registry, 127.0.0.1
KUBE_ETCD_PORT="${KUBE_ETCD_PORT:-2379}"              # etcd clients (peer: +1), 127.0.0.1
KUBE_NODE_NAME=platform-kube
KUBE_BRIDGE=kbr0
KUBE_NODE_IP=10.244.0.1
KUBE_POD_SUBNET=10.244.0.0/24
KUBE_SERVICE_CIDR=10.96.0.0/16
KUBE_API_SERVICE_IP=10.96.0.1
# What tenants' pods may never reach (services/deployments/src/sandbox/network/non-public-ranges.ts).
KUBE_NON_PUBLIC_IPV4="0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, 192.0.0.0/24, 192.0.2.0/24, 192.88.99.0/24, 192.168.0.0/16, 198.18.0.0/15, 198.51.100.0/24, 203.0.113.0/24, 224.0.0.0/4, 240.0.0.0/4"
KUBE_PAUSE_IMAGE="127.0.0.1:$KUBE_REGISTRY_PORT/platform/pause:3.10.2"

KUBE_DIR="$INFRA_RUN_DIR/kube"           # data (etcd, images, registry) and generated config
KUBE_STATE_DIR=/run/platform-kube         # sockets, containerd's task state, netns mounts (tmpfs)
KUBE_CACHE="$INFRA_CACHE_DIR/kube"        # built binaries

# kubeconfig NAME CN [O]: a client certificate signed by the cluster's CA and a kubeconfig using it.
kube_kubeconfig() {
  local name="$1" cn="$2" org="${3:-}" pki="$KUBE_DIR/pki" subj
  subj="/CN=$cn"; [ -z "$org" ] || subj="/O=$org$subj"
  if [ ! -s "$pki/$name.crt" ]; then
    openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$name.key" -subj "$subj" \
      -out "$pki/$name.csr" 2>/dev/null
    openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 3650 -out "$pki/$name.crt" 2>/dev/null
    rm -f "$pki/$name.csr"
  fi
  cat >"$KUBE_DIR/$name.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: platform-kube
  cluster: {server: "https://127.0.0.1:$KUBE_PORT", certificate-authority: "$pki/ca.crt"}
users:
- name: $name
  user: {client-certificate: "$pki/$name.crt", client-key: "$pki/$name.key"}
contexts:
- name: platform-kube
  context: {cluster: platform-kube, user: $name}
current-context: platform-kube
EOF
  chmod 600 "$KUBE_DIR/$name.kubeconfig"
}

# The CA, the apiserver's serving certificate, the service-account key, and the clients: an
# administrator (system:masters: kubectl, tests, the controllers, kube-proxy, CoreDNS, the
# apiserver's calls to the kubelet) and the node (system:nodes, held to its own objects by the
# Node authorizer). Made once; kept with the data so that a restart keeps every token valid.
kube_pki() {
  local pki="$KUBE_DIR/pki"
  mkdir -p "$pki" && chmod 700 "$pki"
  if [ ! -s "$pki/ca.crt" ]; then
    openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -subj "/CN=platform-kube-ca" \
      -days 3650 -out "$pki/ca.crt" 2>/dev/null
  fi
  if [ ! -s "$pki/apiserver.crt" ]; then
    openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/apiserver.key" -subj "/CN=kube-apiserver" \
      -out "$pki/apiserver.csr" 2>/dev/null
    printf 'subjectAltName=%s\n' "IP:127.0.0.1,IP:$KUBE_API_SERVICE_IP,IP:$KUBE_NODE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      >"$pki/apiserver.ext"
    openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 3650 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
    rm -f "$pki/apiserver.csr"
  fi
  [ -s "$pki/sa.key" ] || openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  kube_kubeconfig admin platform-admin system:masters
  kube_kubeconfig kubelet "system:node:$KUBE_NODE_NAME" system:nodes
}

kube_write_config() {
  local d="$KUBE_DIR"
  mkdir -p "$d"/{etcd,logs,registry,kubelet,cni/net.d,cni/ipam,containerd,containerd-hosts/127.0.0.1:"$KUBE_REGISTRY_PORT",pod-logs}
  kube_pki
  cat >"$d/containerd.toml" <<EOF
version = 3
root = "$d/containerd"
state = "$KUBE_STATE_DIR/containerd"
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$KUBE_STATE_DIR/containerd.sock"
[plugins.'io.containerd.internal.v1.opt']
  path = "$d/containerd-opt"
[plugins.'io.containerd.cri.v1.runtime']
  # root here lacks CAP_SYS_RESOURCE: without this every pod fails on /proc/self/oom_score_adj.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$(kube_runc)"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$d/cni/net.d"
    max_conf_num = 1
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$KUBE_PAUSE_IMAGE"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$d/containerd-hosts"
EOF
  cat >"$d/containerd-hosts/127.0.0.1:$KUBE_REGISTRY_PORT/hosts.toml" <<EOF
server = "http://127.0.0.1:$KUBE_REGISTRY_PORT"
[host."http://127.0.0.1:$KUBE_REGISTRY_PORT"]
  capabilities = ["pull", "resolve", "push"]
EOF
  # The shim is found next to containerd (PATH below); CNI: one bridge, no masquerading by the
  # plugin (run.sh's own nftables table does it, so that stop removes exactly what start made).
  cat >"$d/cni/net.d/10-platform-kube.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "platform-kube", "plugins": [
  {"type": "bridge", "bridge": "$KUBE_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$d/cni/ipam",
            "ranges": [[{"subnet": "$KUBE_POD_SUBNET", "gateway": "$KUBE_NODE_IP"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
  cat >"$d/registry.yml" <<EOF
version: 0.1
log: {level: warn, fields: {service: registry}}
storage:
  filesystem: {rootdirectory: "$d/registry"}
  delete: {enabled: true}
http: {addr: "127.0.0.1:$KUBE_REGISTRY_PORT"}
EOF
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $KUBE_NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$d/pki/ca.crt"}
authorization: {mode: Webhook}
# This VM mounts cgroup v1; kubelet 1.36 refuses it unless told.
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: "unix://$KUBE_STATE_DIR/containerd.sock"
clusterDNS: [$KUBE_NODE_IP]
clusterDomain: cluster.local
failSwapOn: false
podLogsDir: "$d/pod-logs"
serializeImagePulls: false
# The disk and memory are shared with other work: evict only near the very end.
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
# A pod's processes and threads (the API has no per-pod setting): a tenant's fork bomb ends at
# its pod's limit, not at the node's (docs/kubernetes-runner.md; processes.kubernetes.test.ts).
podPidsLimit: 512
EOF
  cat >"$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection: {kubeconfig: "$d/admin.kubeconfig"}
hostnameOverride: $KUBE_NODE_NAME
clusterCIDR: $KUBE_POD_SUBNET
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$KUBE_NODE_IP/32"]
# 0: leave the host's conntrack sysctls as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  # CoreDNS runs on the host beside the other components, on the bridge's address: pods ask it,
  # and it needs no way for pods to the apiserver. Names outside the cluster go to the host's
  # resolver.
  cat >"$d/Corefile" <<EOF
.:53 {
    bind $KUBE_NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $d/admin.kubeconfig platform-kube
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
}
EOF
}
