# shellcheck shell=bash
# Removing the real node of hack/real-node.sh, sourced by it: real_node_down (`down`; and `up`,
# on finding the remains of a node whose state folder went without `down`) and what it looks for
# that no pid file names: the node's processes and its mounts. It removes only what carries this
# cluster's hash or state folder in its name.

# ---------------------------------------------------------------------------------------------
# down

# real_node_down: removes this cluster's real node and everything it made, whatever `up` got to:
# the kubelet first (it would restart what is removed), then every pod through the CRI so the
# CNI plugins release their addresses and veths, then whatever is left of the containers, the
# processes, mounts, network, cgroups and /var/log/containers links. Touches nothing without this
# cluster's hash or state folder in its name.
real_node_down() {
  [ -f "$STATE/real-node" ] || [ -e "/run/netns/$RN_NETNS" ] || [ -d "$RN_RUN" ] || [ -d "$RN_DIR" ] || return 0
  log "removing the real node ($RN_NETNS)"
  stop kubelet
  if running containerd && [ -x "$BIN/crictl" ]; then
    timeout 120 "$BIN/crictl" --runtime-endpoint "unix://$RN_SOCK" --timeout 60s rmp -af >/dev/null 2>&1 ||
      log "warning: crictl rmp -af failed; killing the containers"
  fi
  stop coredns
  stop kube-proxy
  stop containerd
  # The node's processes no pid file names any more (their command lines name its folder).
  local pid
  for pid in $(real_node_orphans); do kill -KILL "$pid" 2>/dev/null || true; done
  # Shims of this containerd (their -address names its socket) and whatever still runs in this
  # node's cgroups: containers a failed `up` left behind.
  for pid in $(pgrep -f -- "-address $RN_SOCK" || true); do kill -KILL "$pid" 2>/dev/null || true; done
  local h procs
  for h in $(real_node_cgroups 2>/dev/null || true); do
    [ -d "$h/$RN_CGROUP" ] || continue
    procs=$(find "$h/$RN_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null || true)
    # shellcheck disable=SC2086 # one argument per pid
    [ -z "$procs" ] || kill -KILL $procs 2>/dev/null || true
  done
  real_node_unmount
  # The network: the namespace (its end of the veth pair and the bridge go with it), the route.
  if [ -e "/run/netns/$RN_NETNS" ]; then ip netns delete "$RN_NETNS" || log "warning: ip netns delete $RN_NETNS failed"; fi
  ip link delete "$RN_VETH" 2>/dev/null || true
  local route
  while read -r route; do
    # shellcheck disable=SC2086 # the route's words
    [ -z "$route" ] || ip route delete $route 2>/dev/null || true
  done < <(ip route show | grep -F " dev $RN_VETH " | cut -d' ' -f1)
  # The cgroups, deepest first, once their processes are gone.
  local deadline=$((SECONDS + 20))
  for h in $(real_node_cgroups 2>/dev/null || true); do
    [ -d "$h/$RN_CGROUP" ] || continue
    until find "$h/$RN_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null; [ ! -d "$h/$RN_CGROUP" ]; do
      if [ $SECONDS -ge $deadline ]; then log "warning: could not remove the cgroup $h/$RN_CGROUP"; break; fi
      sleep 0.2
    done
  done
  # The kubelet's links to this node's container logs.
  find /var/log/containers -maxdepth 1 -type l -lname "$RN_DIR/*" -delete 2>/dev/null || true
  rm -rf --one-file-system "$RN_RUN"
  if [ -n "$(real_node_mounts)" ]; then
    die "mounts under $STATE or $RN_RUN remain (see /proc/self/mountinfo); not removing the state"
  fi
}

# real_node_orphans: the pids of processes whose command line names this node's folder.
real_node_orphans() {
  pgrep -f -- "$RN_DIR/" || true
}

# real_node_mounts: the mount points under this node's folders, deepest first.
real_node_mounts() {
  awk -v a="$STATE/" -v b="$RN_RUN/" 'index($5, a) == 1 || index($5, b) == 1 {print length($5), $5}' /proc/self/mountinfo |
    sort -rn | cut -d' ' -f2-
}

real_node_unmount() {
  local m tries
  # shellcheck disable=SC2034 # three tries; the count is not read
  for tries in 1 2 3; do
    [ -n "$(real_node_mounts)" ] || return 0
    while read -r m; do
      [ -z "$m" ] || umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done < <(real_node_mounts)
  done
}
