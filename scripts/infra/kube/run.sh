#!/usr/bin/env bash
# The cluster's supervisor (started by kube.sh's kube_launch through infra.sh, in its own
# session): starts each process in order, waits for what the next one needs, and then watches
# them. If one exits, it stops the others and exits 1; on SIGTERM (infra.sh stop) it stops them in
# reverse order and exits 0. What they changed on the host is put back by kube.sh afterwards
# (kube/host.sh), so that also happens after a crash of this script.
#
# Env (from kube_launch): KUBE_VERSION, KUBE_BIN, KUBE_COREDNS, KUBE_ROUTER, KUBE_CONTAINERD_DIR, KUBE_CRANE,
# INFRA_RUN_DIR, INFRA_CACHE_DIR and the ports.
set -uo pipefail
INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../lib.sh
. "$INFRA_DIR/lib.sh"
# shellcheck source=config.sh
. "$INFRA_DIR/kube/config.sh"
# shellcheck source=images.sh
. "$INFRA_DIR/kube/images.sh"
# shellcheck source=kaniko.sh
. "$INFRA_DIR/kube/kaniko.sh"

d="$KUBE_DIR"
pki="$d/pki"
names=()
pids=()
say() { printf '%s run.sh: %s\n' "$(date -u +%H:%M:%S.%3N)" "$*"; }

# spawn NAME CMD...: start CMD in the background, its output in logs/NAME.log.
spawn() {
  local name="$1"; shift
  [ -f "$d/logs/$name.log" ] && mv -f "$d/logs/$name.log" "$d/logs/$name.log.1"
  "$@" </dev/null >>"$d/logs/$name.log" 2>&1 &
  names+=("$name")
  pids+=("$!")
  say "started $name (pid $!)"
}

terminate() {
  local i pid
  trap - TERM INT
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid="${pids[$i]}"
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 150); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then
      say "${names[$i]} still running after 15 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    say "stopped ${names[$i]}"
  done
}
trap 'say "SIGTERM: stopping"; terminate; exit 0' TERM INT

# await WHAT TIMEOUT_S CMD...: until CMD succeeds; give up when a process died or time ran out.
await() {
  local what="$1" timeout="$2" start=$SECONDS i; shift 2
  until "$@" >/dev/null 2>&1; do
    for i in "${!pids[@]}"; do
      alive "${pids[$i]}" || { say "${names[$i]} exited while waiting for $what"; terminate; exit 1; }
    done
    [ $((SECONDS - start)) -lt "$timeout" ] || { say "$what: not ready after ${timeout}s"; terminate; exit 1; }
    sleep 0.2
  done
  say "$what ready after $((SECONDS - start)) s"
}
api() { curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://127.0.0.1:$KUBE_PORT$1"; }

# The pods' bridge carries the node's address before anything listens on it. The cluster's own
# nftables table (kube/host.sh deletes it) masquerades pods' traffic leaving the node and holds
# every pod to what contracts.md lets tenant code reach, whatever NetworkPolicies say (kube-router
# enforces those, below, between pods and namespaces): of the node, only CoreDNS (53 on the node's
# address): not kubelet, not the apiserver, nothing bound to 0.0.0.0; beyond the node, other pods
# and public addresses, never a private, loopback, link-local or reserved one (the package
# registries' addresses excepted, as for the sandboxes: registry-egress.sh).
if ! ip link show "$KUBE_BRIDGE" >/dev/null 2>&1; then
  ip link add "$KUBE_BRIDGE" type bridge && ip addr add "$KUBE_NODE_IP/24" dev "$KUBE_BRIDGE" \
    || { say "could not make the bridge $KUBE_BRIDGE"; exit 1; }
fi
ip link set "$KUBE_BRIDGE" up
allow="$(bash "$INFRA_DIR/registry-egress.sh" 2>/dev/null || true)"
nft -f - <<EOF || { say "could not add the nftables table ip platform_kube"; exit 1; }
table ip platform_kube {
  set allow4 {
    type ipv4_addr; flags interval;${allow:+ elements = { $allow }}
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr $KUBE_POD_SUBNET ip daddr != $KUBE_POD_SUBNET masquerade
  }
  chain input {
    type filter hook input priority filter - 5; policy accept;
    iifname "$KUBE_BRIDGE" ct state established,related accept
    iifname "$KUBE_BRIDGE" ip daddr $KUBE_NODE_IP meta l4proto { tcp, udp } th dport 53 accept
    iifname "$KUBE_BRIDGE" meta l4proto tcp reject with tcp reset
    iifname "$KUBE_BRIDGE" reject with icmp type admin-prohibited
  }
  chain forward {
    type filter hook forward priority filter - 5; policy accept;
    iifname "$KUBE_BRIDGE" ct state established,related accept
    iifname "$KUBE_BRIDGE" ip daddr $KUBE_POD_SUBNET accept
    iifname "$KUBE_BRIDGE" ip daddr @allow4 accept
    iifname "$KUBE_BRIDGE" ip daddr { $KUBE_NON_PUBLIC_IPV4 } meta l4proto tcp reject with tcp reset
    iifname "$KUBE_BRIDGE" ip daddr { $KUBE_NON_PUBLIC_IPV4 } reject with icmp type admin-prohibited
  }
}
EOF

mkdir -p "$KUBE_STATE_DIR"
rm -f "$KUBE_STATE_DIR/all-started"
date -u +%s >"$KUBE_STATE_DIR/started-at"
spawn registry docker-registry serve "$d/registry.yml"
spawn etcd "$KUBE_BIN" etcd --name "$KUBE_NODE_NAME" --data-dir "$d/etcd" --log-level warn \
  --listen-client-urls "http://127.0.0.1:$KUBE_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$KUBE_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$((KUBE_ETCD_PORT + 1))" \
  --initial-advertise-peer-urls "http://127.0.0.1:$((KUBE_ETCD_PORT + 1))" \
  --initial-cluster "$KUBE_NODE_NAME=http://127.0.0.1:$((KUBE_ETCD_PORT + 1))" \
  --unsafe-no-fsync
spawn containerd env PATH="$KUBE_CONTAINERD_DIR:$PATH" "$KUBE_CONTAINERD_DIR/containerd" --config "$d/containerd.toml"

await etcd 60 curl -fsS "http://127.0.0.1:$KUBE_ETCD_PORT/health"
spawn kube-apiserver "$KUBE_BIN" kube-apiserver --bind-address 127.0.0.1 --secure-port "$KUBE_PORT" \
  --advertise-address "$KUBE_NODE_IP" --etcd-servers "http://127.0.0.1:$KUBE_ETCD_PORT" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
  --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
  --kubelet-preferred-address-types InternalIP,Hostname \
  --service-cluster-ip-range "$KUBE_SERVICE_CIDR" --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --anonymous-auth=false --profiling=false

await registry 30 curl -fsS "http://127.0.0.1:$KUBE_REGISTRY_PORT/v2/"
kube_images_push || { say "could not push the cluster's images"; terminate; exit 1; }

await kube-apiserver 120 api /readyz
spawn kube-controller-manager "$KUBE_BIN" kube-controller-manager --kubeconfig "$d/admin.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --cluster-name platform-kube \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --profiling=false
spawn kube-scheduler "$KUBE_BIN" kube-scheduler --kubeconfig "$d/admin.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --profiling=false
await containerd 60 test -S "$KUBE_STATE_DIR/containerd.sock"
spawn kubelet "$KUBE_BIN" kubelet --config "$d/kubelet.yaml" --kubeconfig "$d/kubelet.kubeconfig" \
  --hostname-override "$KUBE_NODE_NAME" --node-ip "$KUBE_NODE_IP" --root-dir "$d/kubelet"
spawn kube-proxy "$KUBE_BIN" kube-proxy --config "$d/kube-proxy.yaml"
# NetworkPolicies: kube-router's firewall alone (kube/kube-router), through iptables-nft and
# ipsets in the filter table; it reads its node's address from the Node object, so it starts once
# kubelet has registered it. Traffic from the node itself (the host, kubelet's probes) always
# passes. No health or metrics port: nothing of the cluster listens beyond 127.0.0.1 and the node.
await "the Node object" 60 api "/api/v1/nodes/$KUBE_NODE_NAME"
spawn kube-router "$KUBE_ROUTER" --kubeconfig "$d/admin.kubeconfig" --hostname-override "$KUBE_NODE_NAME" \
  --run-firewall=true --run-router=false --run-service-proxy=false \
  --service-cluster-ip-range "$KUBE_SERVICE_CIDR" --health-port 0 --metrics-port 0
await kube-router 60 iptables -w -t filter -S KUBE-ROUTER-FORWARD
spawn coredns "$KUBE_COREDNS" -conf "$d/Corefile"
say "all started"
touch "$KUBE_STATE_DIR/all-started"

# Watch: the first process to exit ends the cluster (its log says why).
while true; do
  wait -n "${pids[@]}"
  for i in "${!pids[@]}"; do
    if ! alive "${pids[$i]}"; then
      say "${names[$i]} exited (log: $d/logs/${names[$i]}.log); stopping the others"
      terminate
      exit 1
    fi
  done
done
