# shellcheck shell=bash
# What the cluster changes on the host, recorded before it starts and put back after it stopped
# (sourced by kube.sh). kubelet sets kernel sysctls (vm.overcommit_memory, kernel.panic, ...),
# kubelet, kube-proxy and kube-router add netfilter chains and tables (kube-router ipsets too), the
# pods leave mounts, cgroups, network namespaces, veths and the bridge. The snapshot lives on /run,
# so a reboot (which undoes all of it anyway) leaves none behind. Nothing here touches a table,
# chain, set or process the cluster did not make: other work on this machine (the sandboxes'
# `inet platform_sandbox_*` tables) goes on.

KUBE_SNAPSHOT="$KUBE_STATE_DIR/host-before"
# Every sysctl a component of the cluster is known to set.
KUBE_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv6.conf.all.forwarding
  net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
  net.netfilter.nf_conntrack_tcp_timeout_close_wait net.netfilter.nf_conntrack_tcp_be_liberal)
# The tables iptables-nft and the cluster's own nftables use.
KUBE_XT_TABLES=(filter nat mangle raw security)

kube_host_snapshot() {
  local k v
  mkdir -p "$KUBE_SNAPSHOT"
  for k in "${KUBE_SYSCTLS[@]}"; do
    v="$(sysctl -n "$k" 2>/dev/null)" && printf '%s=%s\n' "$k" "$v"
  done >"$KUBE_SNAPSHOT/sysctl"
  nft list tables >"$KUBE_SNAPSHOT/tables"
  ipset list -n >"$KUBE_SNAPSHOT/ipsets" 2>/dev/null
  [ -e /var/log/containers ] && touch "$KUBE_SNAPSHOT/var-log-containers"
  touch "$KUBE_SNAPSHOT/complete"
}

# kube_host_kill: every process of the cluster that outlived its supervisor: the containers (in
# kubelet's kubepods cgroups), containerd's shims and anything started from the cluster's binaries.
kube_host_kill() {
  local sig pids p exe
  for sig in TERM KILL; do
    pids=()
    for p in $(find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
      pids+=("$p")
    done
    for p in /proc/[0-9]*; do
      exe="$(readlink "$p/exe" 2>/dev/null)" || continue
      case "$exe" in "$KUBE_CACHE"/*) pids+=("${p#/proc/}"); continue ;; esac
      # docker-registry and anything else started in the cluster's directories.
      [ "${p#/proc/}" != $$ ] && [ "${p#/proc/}" != "$BASHPID" ] || continue
      case "$(readlink "$p/cwd" 2>/dev/null)/" in "$KUBE_DIR"/* | "$KUBE_STATE_DIR"/*) pids+=("${p#/proc/}") ;; esac
    done
    [ ${#pids[@]} -gt 0 ] || return 0
    log "kube: SIG$sig to ${#pids[@]} leftover processes of the cluster"
    kill "-$sig" "${pids[@]}" 2>/dev/null
    for _ in $(seq 50); do
      local left=0
      for p in "${pids[@]}"; do alive "$p" && left=1; done
      [ "$left" = 0 ] && break
      sleep 0.1
    done
  done
}

# kube_xt_cleanup FAMILY TABLE: the KUBE-*/CNI-* chains kubelet, kube-proxy or CNI made in an
# iptables-nft table, and the rules that jump to them; the table itself if it did not exist before.
kube_xt_cleanup() {
  local fam="$1" table="$2" chain handle
  nft list table "$fam" "$table" >/dev/null 2>&1 || return 0
  for chain in $(nft list table "$fam" "$table" 2>/dev/null | awk '$1 == "chain" { print $2 }'); do
    case "$chain" in KUBE-* | CNI-*) continue ;; esac
    for handle in $(nft -a list chain "$fam" "$table" "$chain" 2>/dev/null \
        | awk '/(jump|goto) (KUBE-|CNI-)/ { print $NF }'); do
      nft delete rule "$fam" "$table" "$chain" handle "$handle"
    done
  done
  for chain in $(nft list table "$fam" "$table" 2>/dev/null | awk '$1 == "chain" && $2 ~ /^(KUBE-|CNI-)/ { print $2 }'); do
    nft flush chain "$fam" "$table" "$chain"
  done
  for chain in $(nft list table "$fam" "$table" 2>/dev/null | awk '$1 == "chain" && $2 ~ /^(KUBE-|CNI-)/ { print $2 }'); do
    nft delete chain "$fam" "$table" "$chain"
  done
  if ! grep -qx "table $fam $table" "$KUBE_SNAPSHOT/tables" 2>/dev/null \
     && ! nft list table "$fam" "$table" 2>/dev/null | grep -qvE '^\s*(#|table|chain|type|policy|\}|$)'; then
    nft delete table "$fam" "$table"
  fi
}

# kube_ipset_cleanup: kube-router's ipsets (KUBE-SRC-*, KUBE-DST-*, its TMP-* while it swaps) that
# were not there before the cluster started; the rules that used them must be gone already.
kube_ipset_cleanup() {
  local set
  for set in $(ipset list -n 2>/dev/null | grep -E '^(KUBE-(SRC|DST)-|TMP-)'); do
    grep -qx -- "$set" "$KUBE_SNAPSHOT/ipsets" 2>/dev/null || ipset destroy "$set" \
      || log "kube: could not destroy ipset $set"
  done
}

# Undo everything; safe to run at any time the cluster is not running (it does nothing then).
kube_host_restore() {
  [ -d "$KUBE_SNAPSHOT" ] || [ -d "$KUBE_STATE_DIR" ] || ip link show "$KUBE_BRIDGE" >/dev/null 2>&1 || return 0
  log "kube: putting the host back as it was before the cluster started"
  kube_host_kill
  local m
  # Mounts: containers' root filesystems, pods' volumes and network namespaces, deepest first.
  for m in $(findmnt -rn -o TARGET | grep -E "^($KUBE_STATE_DIR|$KUBE_DIR)(/|$)" | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "kube: could not unmount $m"
  done
  for m in /sys/fs/cgroup/*/kubepods; do
    [ -d "$m" ] && find "$m" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  if ip link show "$KUBE_BRIDGE" >/dev/null 2>&1; then
    for m in $(ip -o link show master "$KUBE_BRIDGE" | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
      ip link del "$m" 2>/dev/null
    done
    ip link del "$KUBE_BRIDGE"
  fi
  for m in "ip platform_kube" "ip kube-proxy" "ip6 kube-proxy"; do
    # shellcheck disable=SC2086 # family and name
    nft list table $m >/dev/null 2>&1 && nft delete table $m
  done
  for m in "${KUBE_XT_TABLES[@]}"; do kube_xt_cleanup ip "$m"; kube_xt_cleanup ip6 "$m"; done
  kube_ipset_cleanup
  if [ -f "$KUBE_SNAPSHOT/sysctl" ]; then
    local k v
    while IFS='=' read -r k v; do
      [ "$(sysctl -n "$k" 2>/dev/null)" = "$v" ] || sysctl -q -w "$k=$v" >/dev/null \
        || log "kube: could not restore $k=$v"
    done <"$KUBE_SNAPSHOT/sysctl"
  fi
  if [ -d /var/log/containers ] && [ -f "$KUBE_SNAPSHOT/complete" ] && [ ! -e "$KUBE_SNAPSHOT/var-log-containers" ]; then
    find /var/log/containers -maxdepth 1 -type l -delete
    rmdir /var/log/containers 2>/dev/null
  fi
  rm -rf "$KUBE_STATE_DIR" "$KUBE_DIR/cni/ipam"
}
