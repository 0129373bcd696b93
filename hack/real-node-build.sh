# shellcheck shell=bash
# What the real node of hack/real-node.sh needs before it starts, sourced by it:
#   - a machine that can run containers: checked (real_node_possible, the command
#     `hack/local-cluster.sh can-run-containers`), the Debian packages it lacks installed
#     (real_node_host);
#   - the node's binaries, built into the store once per machine and pin (build_real_node, also
#     `hack/local-cluster.sh build --with-real-node`);
#   - its images, made once in $STORE/images: the sandbox (pause) image and a busybox test image;
#   - and importing image tarballs into its containerd (real_node_import, also the command
#     `hack/local-cluster.sh import-image`).

# Debian packages the node needs from the host, and a command of each that tells it is there.
RN_PACKAGES=(runc:runc iptables:iptables-legacy conntrack:conntrack)

# ---------------------------------------------------------------------------------------------
# Can this machine run containers?

# real_node_possible: exit 0 if this machine can run the real node (what is missing and can be
# installed from Debian, runc and iptables, does not count), else 1 with the reason on stderr.
# Cheap: no build, no state.
real_node_possible() {
  local why
  if why=$(real_node_missing); then return 0; fi
  printf '%s\n' "$why" >&2
  return 1
}

# real_node_missing: prints what keeps this machine from running containers and fails, or
# succeeds printing nothing.
real_node_missing() {
  local missing=()
  [ "$(id -u)" = 0 ] || missing+=("root (the node's network namespace, cgroups and mounts need it; run as root)")
  command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || missing+=("\`ip netns\` (iproute2)")
  command -v nsenter >/dev/null && command -v unshare >/dev/null || missing+=("nsenter and unshare (util-linux)")
  if [ "$(id -u)" = 0 ]; then
    unshare --mount --pid --net --uts --ipc --fork true 2>/dev/null ||
      missing+=("new namespaces (unshare --mount --pid --net --uts --ipc fails: a container without privileges?)")
    # veth and bridge, tried in a throwaway network namespace.
    unshare --net sh -c 'ip link add rn0 type veth peer name rn1 && ip link add rnbr type bridge' 2>/dev/null ||
      missing+=("veth and bridge network devices (kernel modules veth, bridge)")
  fi
  if ! real_node_cgroups >/dev/null; then
    missing+=("cgroups: neither cgroup v2 on /sys/fs/cgroup nor the v1 hierarchies cpu, cpuacct, cpuset, memory and pids")
  fi
  if ! command -v runc >/dev/null && ! command -v apt-get >/dev/null; then
    missing+=("runc (not installed, and no apt-get to install it)")
  elif command -v runc >/dev/null && ! runc --version >/dev/null 2>&1; then
    missing+=("a working runc ($(command -v runc) --version fails)")
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    local joined
    joined=$(printf '%s; ' "${missing[@]}")
    echo "this machine cannot run containers: missing ${joined%; }"
    return 1
  fi
}

# real_node_cgroups: prints the cgroup hierarchies to make the node's cgroup root in, one a line
# (the v2 mount; or every mounted v1 hierarchy, and the v2 one of a hybrid machine, where runc
# makes the containers' cgroups too), and fails if the kubelet could not run on them.
real_node_cgroups() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    echo /sys/fs/cgroup
    return 0
  fi
  local need
  for need in cpu cpuacct cpuset memory pids; do
    awk '$9 == "cgroup" {print $NF}' /proc/self/mountinfo | tr ',' '\n' | grep -qx "$need" || return 1
  done
  awk '$9 == "cgroup" || $9 == "cgroup2" {print $5}' /proc/self/mountinfo
}

# real_node_host: dies naming what is missing where this machine cannot run the node; installs
# runc, iptables and conntrack from Debian when they are missing.
real_node_host() {
  local why
  why=$(real_node_missing) || die "$why"
  local entry pkgs=()
  for entry in "${RN_PACKAGES[@]}"; do
    command -v "${entry#*:}" >/dev/null || pkgs+=("${entry%%:*}")
  done
  if [ ${#pkgs[@]} -gt 0 ]; then
    log "installing ${pkgs[*]} from Debian (apt-get), which the real node needs"
    apt_install "$STATE/logs/apt-get.log" "${pkgs[@]}" ||
      die "apt-get install ${pkgs[*]} failed (log: $STATE/logs/apt-get.log); install them by hand"
  fi
  for entry in "${RN_PACKAGES[@]}"; do
    command -v "${entry#*:}" >/dev/null || die "this machine cannot run containers: ${entry#*:} (package ${entry%%:*}) is missing"
  done
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
  # br_netfilter makes bridged pod traffic pass iptables, which Services need.
  [ -d /proc/sys/net/bridge ] || modprobe br_netfilter 2>/dev/null ||
    die "this machine cannot run containers: the kernel module br_netfilter is missing (Services need it)"
}

# ---------------------------------------------------------------------------------------------
# Build

# build_real_node: the node's binaries, into the store once per machine and pin. The kubelet and
# kube-proxy are a build of their own from the control plane's module (stored as kubernetes-node,
# its stamp the control plane's). containerd, the CNI plugins, crictl, pause and CoreDNS are
# static (CGO_ENABLED=0), containerd without the snapshotters that want C headers (btrfs,
# devmapper, zfs).
build_real_node() {
  local module=kubernetes
  stored_build kubernetes-node "$(tools_stamp "$TOOLS/kubernetes")" build_tools_module \
    kubelet=k8s.io/kubernetes/cmd/kubelet kube-proxy=k8s.io/kubernetes/cmd/kube-proxy
  module=node
  stored_build node "$(rn_stamp "$TOOLS/node")" rn_build_into \
    containerd=github.com/containerd/containerd/v2/cmd/containerd \
    containerd-shim-runc-v2=github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    ctr=github.com/containerd/containerd/v2/cmd/ctr crictl=sigs.k8s.io/cri-tools/cmd/crictl \
    bridge=github.com/containernetworking/plugins/plugins/main/bridge \
    host-local=github.com/containernetworking/plugins/plugins/ipam/host-local \
    loopback=github.com/containernetworking/plugins/plugins/main/loopback \
    portmap=github.com/containernetworking/plugins/plugins/meta/portmap \
    pause=./pause
  module=coredns
  stored_build coredns "$(rn_stamp "$TOOLS/coredns")" rn_build_into coredns=.
  # Packs the images (pause, the test image): hack/tools/ociimage.
  [ -f "$TOOLS/ociimage/go.mod" ] || die "hack/tools/ociimage (the image packer) is missing from this checkout"
  build_module ociimage ociimage=.
}

# rn_stamp MODULE_DIR: the module's pins and every Go file of its own, in subfolders too.
rn_stamp() {
  local files
  mapfile -t files < <(find "$1" -name '*.go' | sort)
  cat "$1/go.mod" "$1/go.sum" "${files[@]}" | sha256sum | cut -c1-16
}

# rn_build_into OUT ENTRY...: the builder of the node's static binaries ($module is its caller's).
rn_build_into() {
  log "building $module into $STORE/bin (~3-5 minutes cold on 2 cores)"
  CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -tags=no_btrfs,no_devmapper,no_zfs" go_build_entries "$TOOLS/$module" "-s -w" "$@"
}

# The CNI plugins, in the folder containerd looks them up in: the node module's stored build.
rn_cni_bin() { dirname "$(readlink -f "$BIN/bridge")"; }

# real_node_pause_image: the sandbox image, our pause program alone, made once per build of it in
# $STORE/images; prints its reference and the tarball's path.
RN_PAUSE_REF=
RN_PAUSE_TAR=
real_node_pause_image() {
  local stamp; stamp=$(sha256sum "$BIN/pause" | cut -c1-12)
  RN_PAUSE_REF=sparkop.dev/pause:$stamp
  RN_PAUSE_TAR=$STORE/images/pause-$stamp.tar
  [ -f "$RN_PAUSE_TAR" ] && return 0
  mkdir -p "$STORE/images"
  local tmp; tmp=$(mktemp -d)
  cp "$BIN/pause" "$tmp/pause"
  tar --numeric-owner --owner 0 --group 0 -C "$tmp" -cf "$tmp/layer.tar" pause
  "$BIN/ociimage" -name "$RN_PAUSE_REF" -o "$tmp/pause.tar" -layer "$tmp/layer.tar" -entrypoint /pause -user 65535 &&
    mv "$tmp/pause.tar" "$RN_PAUSE_TAR"
  rm -rf "$tmp"
  [ -f "$RN_PAUSE_TAR" ] || die "could not make the pause image"
}

# RN_BUSYBOX_REF: a small image for tests of the real node: Debian's busybox-static, its applets
# linked in /bin, made once per machine in $STORE/images and imported by `up --real-node`.
RN_BUSYBOX_REF=sparkop.dev/busybox:1
real_node_busybox_image() {
  local tar=$STORE/images/busybox-1.tar
  if [ ! -f "$tar" ]; then
    log "making the test image $RN_BUSYBOX_REF from Debian's busybox-static"
    mkdir -p "$STORE/images"
    local tmp; tmp=$(mktemp -d)
    # Debian's package lists may be missing (a fresh container) or stale: updated once on failure.
    (cd "$tmp" && { apt-get download busybox-static || { apt-get update && apt-get download busybox-static; }; } >/dev/null 2>&1) ||
      { rm -rf "$tmp"; die "apt-get download busybox-static failed"; }
    dpkg -x "$tmp"/busybox-static_*.deb "$tmp/deb"
    mkdir -p "$tmp/root/bin" "$tmp/root/tmp" "$tmp/root/etc"
    cp "$tmp/deb/bin/busybox" "$tmp/root/bin/busybox"
    local applet
    for applet in $("$tmp/root/bin/busybox" --list); do
      [ "$applet" = busybox ] || ln -sf busybox "$tmp/root/bin/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$tmp/root/etc/passwd"
    printf 'root:x:0:\nnobody:x:65534:\n' > "$tmp/root/etc/group"
    chmod 1777 "$tmp/root/tmp"
    tar --numeric-owner --owner 0 --group 0 -C "$tmp/root" -cf "$tmp/layer.tar" .
    "$BIN/ociimage" -name "$RN_BUSYBOX_REF" -o "$tmp/busybox.tar" -layer "$tmp/layer.tar" -cmd /bin/sh \
      -env PATH=/bin && mv "$tmp/busybox.tar" "$tar"
    rm -rf "$tmp"
    [ -f "$tar" ] || die "could not make the test image $RN_BUSYBOX_REF"
  fi
  echo "$tar"
}

# ---------------------------------------------------------------------------------------------
# Images into the node

# real_node_import IMAGE_TAR: imports a docker-archive (or OCI) tarball into the real node's
# containerd, where the kubelet finds it (namespace k8s.io), unpacked for its snapshotter. Its
# pods must not pull it (imagePullPolicy IfNotPresent or Never, or a tag other than latest).
real_node_import() {
  [ -f "$1" ] || die "no image tarball $1"
  local snapshotter; snapshotter=$(cat "$RN_DIR/snapshotter" 2>/dev/null || echo overlayfs)
  log "importing $(basename "$1") into the real node's containerd"
  local out
  out=$("$BIN/ctr" --address "$RN_SOCK" -n k8s.io images import --snapshotter "$snapshotter" "$1" 2>&1) ||
    die "ctr images import $1 failed: $out (log: $STATE/logs/containerd.log)"
}

# cmd_real_node_import IMAGE_TAR...: `hack/local-cluster.sh import-image`: imports each tarball
# into the real node of the running cluster.
cmd_real_node_import() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up --real-node\` first"
  [ -f "$STATE/real-node" ] || die "the cluster in $STATE has no real node (start it with \`$0 up --real-node\`)"
  [ $# -gt 0 ] || die "import-image wants the image tarballs to import"
  local tar
  for tar in "$@"; do real_node_import "$tar"; done
}

# cmd_real_node_tag SOURCE TARGET: `hack/local-cluster.sh tag-image`: gives an image the real
# node has a second name (the same image under another tag, for an upgrade that changes the
# image without building another).
cmd_real_node_tag() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up --real-node\` first"
  [ -f "$STATE/real-node" ] || die "the cluster in $STATE has no real node (start it with \`$0 up --real-node\`)"
  [ $# -eq 2 ] || die "tag-image wants SOURCE and TARGET image references"
  local out
  out=$("$BIN/ctr" --address "$RN_SOCK" -n k8s.io images tag --force "$1" "$2" 2>&1) ||
    die "ctr images tag $1 $2 failed: $out"
}
