# shellcheck shell=bash
# A real node for the local control plane, sourced by hack/local-cluster.sh (`up --real-node`):
# one kubelet (built from the control plane's own k8s.io/kubernetes pin, hack/tools/kubernetes)
# with containerd (hack/tools/node, runc from Debian), the CNI bridge, host-local, loopback and
# portmap plugins, kube-proxy (iptables mode) and CoreDNS (hack/tools/coredns) as the cluster DNS.
#
# Layout, per cluster (so that two clusters with a real node run side by side on one machine,
# e.g. `make dev`'s and `make test`'s): every name comes from RN_HASH, a short hash of the state
# folder.
#   - network namespace sparkop-HASH, joined to the host by the veth pair spkHASH (host side,
#     10.201.X.1/30) and eth0 in the namespace (10.201.X.2, the node's InternalIP); X is chosen
#     per cluster among the /30s no other interface uses. containerd, kubelet, kube-proxy and
#     CoreDNS run in it (nsenter --net: only the network namespace, so their mounts are the
#     host's and each sees the others'); IPv4 forwarding and bridge-nf-call-iptables are on in
#     it, not on the host;
#   - pods on the bridge cni0 in 10.244.X.0/24 (the node's spec.podCIDR), the host routing that
#     /24 via the node's IP so the API server reaches pods;
#   - the API server listens on 0.0.0.0 and its serving certificate names 10.201.X.1, which the
#     default/kubernetes EndpointSlice points at (the API server runs with
#     --endpoint-reconciler-type none); kube-dns (10.96.0.10) points at CoreDNS on the node's IP;
#   - names outside the cluster resolve only if the host forwards IPv4 (CoreDNS forwards to the
#     host's resolv.conf from the namespace); the script leaves the host's ip_forward alone;
#   - files under $STATE/node, sockets and containerd's state under /run/sparkop/HASH (unix
#     sockets take 108 characters at most), cgroups under /sparkop-HASH in every hierarchy
#     (the kubelet's cgroupRoot: its pods' QoS cgroups never meet another kubelet's).
# `down` (real_node_down, hack/real-node-down.sh) removes all of it, pods and their containers
# first, and only what carries this cluster's hash.
#
# This file owns that layout and bringing the node up: the network, cgroups, certificates and
# configuration, containerd, kubelet, kube-proxy and CoreDNS, the Services' endpoints, and the
# node's health. It sources hack/real-node-build.sh (can this machine run containers; the node's
# binaries and images; importing images) and hack/real-node-down.sh (removing the node).

REAL_NODE_NAME=real-node
RN_HASH=$(printf '%s' "$STATE" | sha256sum | cut -c1-8)
RN_NETNS=sparkop-$RN_HASH
RN_VETH=spk$RN_HASH
RN_DIR=$STATE/node
RN_RUN=/run/sparkop/$RN_HASH
RN_SOCK=$RN_RUN/containerd.sock
RN_CGROUP=sparkop-$RN_HASH
# The CPU weight of the node's cgroup, in busy processes of the machine: on cgroup v1 every
# process outside a cgroup of its own weighs one, as the whole node's pods do by default, so when
# the machine is short of CPU Spark gets little of it. At 8, make test's kill storm took 17
# minutes instead of 42 on 2 cores, but two other tests failed on the CPU they lost; so 1 by
# default (the cgroup's own). Idle, the weight changes nothing.
REAL_NODE_CPU_WEIGHT=${REAL_NODE_CPU_WEIGHT:-1}
RN_CLUSTER_DNS=10.96.0.10
# Set by real_node_net: the host's and the node's ends of the veth pair, and the pod CIDR.
RN_HOST_IP=
RN_NODE_IP=
RN_POD_CIDR=
# The real node's processes, in the order they start; real_node_down stops them its own way.
RN_COMPONENTS=(containerd kubelet kube-proxy coredns)

# shellcheck source=hack/real-node-build.sh
source "$ROOT/hack/real-node-build.sh"
# shellcheck source=hack/real-node-down.sh
source "$ROOT/hack/real-node-down.sh"

# ---------------------------------------------------------------------------------------------
# Host setup

rn_exec() { nsenter --net="/run/netns/$RN_NETNS" -- "$@"; }

# real_node_net: makes the network namespace and veth pair (real_node_prepare removed any left
# over). Sets RN_HOST_IP, RN_NODE_IP and RN_POD_CIDR, recorded in $RN_DIR/net.
real_node_net() {
  mkdir -p "$RN_DIR" /run/sparkop
  local x
  (
    # One /30 per cluster, chosen under a machine-wide lock among those no interface holds.
    flock 8
    x=$(( 16#${RN_HASH:0:4} % 250 + 1 ))
    local tries=0
    while ip -o -4 addr show | grep -q " 10\.201\.$x\." || ip route show | grep -q "^10\.244\.$x\.0/24 "; do
      x=$(( x % 250 + 1 )); tries=$((tries + 1))
      [ $tries -lt 250 ] || die "no free 10.201.X.0/30 for the real node's veth pair"
    done
    echo "$x" > "$RN_DIR/net"
    ip netns add "$RN_NETNS" || die "ip netns add $RN_NETNS failed"
    ip link add "$RN_VETH" type veth peer name "n$RN_VETH" || die "cannot make the veth pair $RN_VETH"
    ip link set "n$RN_VETH" netns "$RN_NETNS"
    ip addr add "10.201.$x.1/30" dev "$RN_VETH"
    ip link set "$RN_VETH" up
    rn_exec ip link set "n$RN_VETH" name eth0
    rn_exec ip addr add "10.201.$x.2/30" dev eth0
    rn_exec ip link set eth0 up
    rn_exec ip link set lo up
    rn_exec ip route add default via "10.201.$x.1"
    ip route add "10.244.$x.0/24" via "10.201.$x.2" dev "$RN_VETH"
  ) 8>/run/sparkop/net.lock || exit
  real_node_addresses
  # Inside the namespace only: pods' traffic is routed there, and bridged traffic passes
  # iptables (kube-proxy's Service rules).
  rn_exec sysctl -qw net.ipv4.ip_forward=1
  rn_exec sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null ||
    log "warning: net.bridge.bridge-nf-call-iptables is not per network namespace on this kernel; pods on one node may not reach each other through Services"
  log "real node network: namespace $RN_NETNS, node IP $RN_NODE_IP, host $RN_HOST_IP ($RN_VETH), pods $RN_POD_CIDR"
}

real_node_addresses() {
  local x; x=$(cat "$RN_DIR/net")
  RN_HOST_IP=10.201.$x.1
  RN_NODE_IP=10.201.$x.2
  RN_POD_CIDR=10.244.$x.0/24
}

# real_node_cgroup_root: /RN_CGROUP in every hierarchy, the kubelet's cgroupRoot (it requires it
# to exist). A new cpuset cgroup of v1 has no CPUs nor memory nodes: its parent's are copied.
real_node_cgroup_root() {
  local h
  while read -r h; do
    mkdir -p "$h/$RN_CGROUP"
    if [ -f "$h/cpuset.cpus" ] && [ -f "$h/$RN_CGROUP/cpuset.cpus" ]; then
      cat "$h/cpuset.cpus" > "$h/$RN_CGROUP/cpuset.cpus"
      cat "$h/cpuset.mems" > "$h/$RN_CGROUP/cpuset.mems"
    fi
    if [ -f "$h/$RN_CGROUP/cpu.shares" ]; then # v1 (1024 a process)
      echo $((REAL_NODE_CPU_WEIGHT * 1024)) > "$h/$RN_CGROUP/cpu.shares"
    fi
    if [ -f "$h/cgroup.subtree_control" ]; then # v2: the controllers the pods' cgroups use
      local c
      for c in cpuset cpu io memory pids hugetlb; do
        grep -qw "$c" "$h/cgroup.controllers" || continue
        echo "+$c" > "$h/cgroup.subtree_control" 2>/dev/null || true
        echo "+$c" > "$h/$RN_CGROUP/cgroup.subtree_control" 2>/dev/null || true
      done
      if [ -f "$h/$RN_CGROUP/cpu.weight" ]; then # 100 a process
        echo $((REAL_NODE_CPU_WEIGHT * 100)) > "$h/$RN_CGROUP/cpu.weight"
      fi
    fi
  done < <(real_node_cgroups)
}

# real_node_pki: the kubelet's client certificate (system:node:NAME in system:nodes, as the Node
# authorizer wants) and serving certificate (the node's IP), signed by the cluster's CA; and the
# kubeconfigs the node's processes use: they reach the API server at the host's end of the veth.
real_node_pki() {
  local d=$STATE/pki
  openssl req -newkey rsa:2048 -nodes -subj "/O=system:nodes/CN=system:node:$REAL_NODE_NAME" \
    -keyout "$d/kubelet-client.key" -out "$d/kubelet-client.csr" 2>/dev/null
  openssl x509 -req -in "$d/kubelet-client.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
    -extfile <(echo "extendedKeyUsage=clientAuth") -out "$d/kubelet-client.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/O=system:nodes/CN=system:node:$REAL_NODE_NAME" \
    -keyout "$d/kubelet-serving.key" -out "$d/kubelet-serving.csr" 2>/dev/null
  openssl x509 -req -in "$d/kubelet-serving.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
    -extfile <(printf 'subjectAltName=IP:%s,DNS:%s\nextendedKeyUsage=serverAuth\n' "$RN_NODE_IP" "$REAL_NODE_NAME") \
    -out "$d/kubelet-serving.crt" 2>/dev/null
  rn_kubeconfig "$RN_DIR/kubelet.kubeconfig" kubelet-client
  rn_kubeconfig "$RN_DIR/admin.kubeconfig" admin
}

# rn_kubeconfig FILE CERT: a kubeconfig for the API server at the host's end of the veth pair,
# as the user of pki/CERT.crt.
rn_kubeconfig() {
  local kc=$1 d=$STATE/pki
  "$BIN/kubectl" config --kubeconfig "$kc" set-cluster local --server "https://$RN_HOST_IP:$API_PORT" \
    --certificate-authority "$d/ca.crt" --embed-certs >/dev/null
  "$BIN/kubectl" config --kubeconfig "$kc" set-credentials node \
    --client-certificate "$d/$2.crt" --client-key "$d/$2.key" --embed-certs >/dev/null
  "$BIN/kubectl" config --kubeconfig "$kc" set-context local --cluster local --user node >/dev/null
  "$BIN/kubectl" config --kubeconfig "$kc" use-context local >/dev/null
}

# rn_path: a folder for the node's PATH where iptables is the legacy one when the kernel has no
# nf_tables (kube-proxy and the CNI plugins run `iptables`), ahead of the system's. Decided once,
# when the node comes up: the node's processes must all use one iptables.
rn_path() {
  local d=$RN_DIR/bin t
  mkdir -p "$d"
  if ! rn_exec iptables-nft -w -t nat -L >/dev/null 2>&1 && command -v iptables-legacy >/dev/null; then
    for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
      command -v "${t/iptables/iptables-legacy}" >/dev/null && ln -sfn "$(command -v "${t/iptables/iptables-legacy}")" "$d/$t"
    done
  fi
  rn_path_value
}

# rn_path_value: the node's PATH, as rn_path made it.
rn_path_value() {
  echo "$RN_DIR/bin:$(dirname "$(readlink -f "$BIN/containerd")"):/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

# rn_start NAME ARGS...: like `start`, in the node's network namespace with the node's PATH.
rn_start() {
  local name=$1; shift
  log "starting $name (real node)"
  setsid nsenter --net="/run/netns/$RN_NETNS" -- env PATH="$RN_PATH" GOGC="${GOGC:-300}" "$BIN/$name" "$@" \
    </dev/null >>"$STATE/logs/$name.log" 2>&1 9>&- &
  echo $! > "$(pidfile "$name")"
}

# cmd_real_node_restart_runtime: stops the real node's containerd (TERM, as a service manager
# does) and starts it again with the same configuration, as an upgrade or a crash and restart of
# the runtime would: running containers keep running under their shims, and the kubelet
# reconnects.
cmd_real_node_restart_runtime() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up --real-node\` first"
  [ -f "$STATE/real-node" ] || die "the cluster in $STATE has no real node (start it with \`$0 up --real-node\`)"
  stop containerd
  RN_PATH=$(rn_path_value)
  rn_start containerd --config "$RN_DIR/containerd.toml"
  wait_for 60 containerd "$BIN/ctr" --address "$RN_SOCK" version
}

# ---------------------------------------------------------------------------------------------
# up

# real_node_prepare: before the control plane starts (its serving certificate and address need
# the host's end of the veth pair): host checks, builds, the network.
real_node_prepare() {
  real_node_host
  build_real_node
  # Left over by a cluster of this state folder whose state was removed by hand, not by `down`.
  if [ -e "/run/netns/$RN_NETNS" ] || [ -d "$RN_RUN" ] || [ -n "$(real_node_orphans)" ]; then
    log "found the remains of an earlier real node of $STATE; removing them"
    real_node_down
  fi
  touch "$STATE/real-node"
  real_node_net
}

# real_node_up: once the control plane runs: containerd, the images, kubelet, kube-proxy and
# CoreDNS, the kubernetes and kube-dns Services' endpoints; waits for the node to be Ready and
# DNS to answer.
real_node_up() {
  local d=$RN_DIR snapshotter=overlayfs
  grep -qw overlay /proc/filesystems || { snapshotter=native; log "no overlay filesystem: containerd's native snapshotter (slower)"; }
  echo "$snapshotter" > "$d/snapshotter"
  mkdir -p "$d/containerd" "$d/kubelet" "$d/pod-logs" "$d/cni/net.d" "$d/cni/bin" "$d/cni/ipam" "$RN_RUN"
  RN_PATH=$(rn_path)
  real_node_pki
  real_node_cgroup_root
  real_node_pause_image

  cat > "$d/cni/net.d/10-bridge.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "sparkop",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$RN_POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$d/cni/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  cat > "$d/containerd.toml" <<EOF
version = 3
root = "$d/containerd"
state = "$RN_RUN/containerd"
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$RN_SOCK"
[ttrpc]
  address = "$RN_RUN/containerd.ttrpc.sock"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd-opt"
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "$snapshotter"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$RN_PAUSE_REF"
[plugins."io.containerd.cri.v1.runtime"]
  netns_mounts_under_state_dir = true
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  # Pods' oom_score_adj no lower than containerd's own: lowering it takes CAP_SYS_RESOURCE, which
  # root in a container (a CI runner's) may lack, and the kubelet asks -998 for every sandbox.
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$(rn_cni_bin)"]
    conf_dir = "$d/cni/net.d"
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      snapshotter = "$snapshotter"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
        Root = "$RN_RUN/runc"
EOF
  rn_start containerd --config "$d/containerd.toml"
  wait_for 60 containerd "$BIN/ctr" --address "$RN_SOCK" version
  real_node_import "$RN_PAUSE_TAR"
  # Also under the name of the gang scheduler's placeholder pods (--gang-placeholder-image's
  # default), which do nothing either.
  "$BIN/ctr" --address "$RN_SOCK" -n k8s.io images tag --force "$RN_PAUSE_REF" registry.k8s.io/pause:3.10 >/dev/null
  real_node_import "$(real_node_busybox_image)"

  cat > "$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 machines: 1.37 refuses them unless told not to; harmless on v2.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: true
# Every pod's cgroup under this cluster's own root: two kubelets on one machine never share one.
cgroupRoot: /$RN_CGROUP
failSwapOn: false
containerRuntimeEndpoint: unix://$RN_SOCK
address: $RN_NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $STATE/pki/kubelet-serving.crt
tlsPrivateKeyFile: $STATE/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization:
  mode: Webhook
clusterDNS: [$RN_CLUSTER_DNS]
clusterDomain: cluster.local
podCIDR: $RN_POD_CIDR
podLogsDir: $d/pod-logs
volumePluginDir: $d/volume-plugins
registerNode: true
rotateCertificates: false
serverTLSBootstrap: false
# No registry reachable: an image the kubelet collected could not come back.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
# A shared machine's disk and memory are not the node's own to defend.
evictionPressureTransitionPeriod: 10s
nodeStatusReportFrequency: 10s
serializeImagePulls: false
EOF
  rn_start kubelet --config "$d/kubelet.yaml" --kubeconfig "$d/kubelet.kubeconfig" --root-dir "$d/kubelet" \
    --cert-dir "$d/kubelet/pki" --hostname-override "$REAL_NODE_NAME" --node-ip "$RN_NODE_IP" \
    --node-labels "sparkop.dev/node=real" --v 1
  wait_for 120 "the real node to register" kctl get node "$REAL_NODE_NAME"
  # The kubelet registers without spec.podCIDR (no node IPAM controller here): set it, as the
  # kube-proxy and CNI configuration say.
  kctl patch node "$REAL_NODE_NAME" --type merge -p "{\"spec\":{\"podCIDR\":\"$RN_POD_CIDR\",\"podCIDRs\":[\"$RN_POD_CIDR\"]}}" >/dev/null

  real_node_endpoints
  cat > "$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: 10.244.0.0/16
hostnameOverride: $REAL_NODE_NAME
bindAddress: $RN_NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clientConnection:
  kubeconfig: $d/admin.kubeconfig
# Leave the machine-wide conntrack table size and timeouts alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
nodePortAddresses: [$RN_NODE_IP/32]
EOF
  rn_start kube-proxy --config "$d/kube-proxy.yaml"

  cat > "$d/Corefile" <<EOF
.:53 {
    errors
    health 127.0.0.1:8080
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $d/admin.kubeconfig local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
    loadbalance
}
EOF
  rn_start coredns -conf "$d/Corefile"

  wait_for 120 "the real node to be Ready" real_node_ready
  wait_for 60 "kube-proxy" rn_exec curl -sf http://127.0.0.1:10256/healthz
  wait_for 60 "CoreDNS to be ready" rn_exec curl -sf http://127.0.0.1:8181/ready
  wait_for 60 "CoreDNS to answer for kubernetes.default.svc.cluster.local" real_node_dns_answers
  local c
  for c in "${RN_COMPONENTS[@]}"; do running "$c" || die "$c exited during start-up (log: $STATE/logs/$c.log)"; done
  log "real node $REAL_NODE_NAME is Ready: $(nproc) CPUs, node IP $RN_NODE_IP, pods $RN_POD_CIDR, DNS $RN_CLUSTER_DNS"
}

real_node_ready() {
  [ "$(kctl get node "$REAL_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# real_node_dns_answers: CoreDNS, on the node's IP, and through kube-proxy's Service rule, gives
# the kubernetes Service's address.
real_node_dns_answers() {
  local ip
  for ip in "$RN_NODE_IP" "$RN_CLUSTER_DNS"; do
    rn_exec python3 - "$ip" <<'PY' || return 1
import socket, struct, sys
name = b"".join(bytes([len(p)]) + p for p in b"kubernetes.default.svc.cluster.local".split(b".")) + b"\0"
q = struct.pack(">HHHHHH", 0x5350, 0x0100, 1, 0, 0, 0) + name + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.sendto(q, (sys.argv[1], 53))
r = s.recv(512)
ok = r[:2] == b"\x53\x50" and (r[3] & 0x0F) == 0 and struct.unpack(">H", r[6:8])[0] > 0 and bytes([10, 96, 0, 1]) in r
sys.exit(0 if ok else 1)
PY
  done
}

# real_node_endpoints: the EndpointSlice the API server does not write (--endpoint-reconciler-type
# none) and the cluster DNS Service, both without a selector: kubernetes.default at the host's
# end of the veth pair, kube-dns at CoreDNS on the node's IP. EndpointSlices alone (kube-proxy
# reads nothing else; v1 Endpoints are deprecated).
real_node_endpoints() {
  kctl apply --server-side --force-conflicts -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: local-cluster.sparkop.dev}
addressType: IPv4
endpoints:
- addresses: [$RN_HOST_IP]
  conditions: {ready: true}
ports: [{name: https, port: $API_PORT, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  clusterIP: $RN_CLUSTER_DNS
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: local-cluster.sparkop.dev}
addressType: IPv4
endpoints:
- addresses: [$RN_NODE_IP]
  conditions: {ready: true}
  nodeName: $REAL_NODE_NAME
ports:
- {name: dns, port: 53, protocol: UDP}
- {name: dns-tcp, port: 53, protocol: TCP}
EOF
}

# real_node_healthy: the node's processes run (used by `healthy`).
real_node_healthy() {
  local c
  for c in "${RN_COMPONENTS[@]}"; do running "$c" || return 1; done
}
