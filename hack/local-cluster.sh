#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for tests and `make dev`: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, and kwok simulating the kubelets of N nodes.
#
#   hack/local-cluster.sh build [--with-helm] [--with-cert-manager]
#                                               build the binaries into the cache (once)
#   hack/local-cluster.sh up [flags]            start the cluster (or reuse a running one);
#                                               the last line printed is the kubeconfig path
#   hack/local-cluster.sh down                  stop every process `up` started, remove the state
#   hack/local-cluster.sh status                exit 0 if the cluster is up and healthy
#   hack/local-cluster.sh can-run-containers    exit 0 if this machine can run `up --real-node`,
#                                               else 1 with the reason on stderr
#   hack/local-cluster.sh import-image TAR...   import image tarballs (docker-archive, as
#                                               hack/tools/ociimage makes) into the real node
#   hack/local-cluster.sh tag-image SOURCE TARGET  give an image of the real node another name
#   hack/local-cluster.sh restart-runtime       stop the real node's containerd and start it again
#                                               (its containers keep running)
#   hack/local-cluster.sh kubeconfig            print the kubeconfig path of a running cluster
#   hack/local-cluster.sh cert-manager          on a running cluster: install cert-manager's CRDs and
#                                               start cert-manager-lite (its controllers for the
#                                               SelfSigned and CA issuers, and its cainjector; no
#                                               webhook) unless it runs; `down` stops it too
#   hack/local-cluster.sh volcano               on a running cluster: Volcano's CRDs, scheduler and
#                                               controller manager, built from ../shared/third_party
#                                               (hack/batch-schedulers.sh); `down` stops them too
#   hack/local-cluster.sh yunikorn              on a running cluster: YuniKorn (k8shim v1.8.0) in its
#                                               scheduler-plugin mode, beside kube-scheduler, built
#                                               the same way; `down` stops it too
#   hack/local-cluster.sh coscheduling          on a running cluster: install scheduler-plugins' PodGroup
#                                               (and ElasticQuota) CRDs and start its kube-scheduler as a
#                                               second scheduler, profile "kube-scheduler" running the
#                                               Coscheduling plugin, and its PodGroup controller;
#                                               `down` stops them
#   hack/local-cluster.sh kueue                 on a running cluster: install Kueue's CRDs and start its
#                                               manager (SparkApplication integration on), its webhooks
#                                               registered by URL; `down` stops it
#   hack/local-cluster.sh build-batch-schedulers  build (once) the four above: scheduler-plugins
#                                               and Kueue, then Volcano and YuniKorn where their
#                                               source is
#
# `build` takes --with-coscheduling and --with-kueue too (each about 6-10 minutes cold on 2 cores),
# --with-spark-scheduler (see --spark-scheduler below) and --with-real-node (see --real-node).
# Flags of `up`: --nodes N (4), --node-cpu C (16), --node-memory M (64Gi), --node-pods P (110),
# --workload-api: serve the Workload API (scheduling.k8s.io/v1beta1 Workload and PodGroup) and
# run kube-scheduler's gang scheduling plugin, i.e. the GenericWorkload feature gate on the API
# server, controller manager and scheduler, and the API version enabled. The state folder
# remembers it: a later `up` without the flag, reusing or restarting that cluster, keeps it;
# `up --workload-api` on a running cluster started without it fails (restarting would pull the
# cluster from under its users): `down` it first.
# --spark-scheduler: run spark-scheduler (cmd/spark-scheduler: kube-scheduler with the
# SparkReservations plugin, built into the cache) in place of kube-scheduler, so that every pod
# is placed by it and the room of the gang scheduler's Reservations holds against all of them
# (--gang-enforcement=plugin). Remembered by the state folder like --workload-api, and refused
# the same way on a running cluster started without it. SPARK_SCHEDULER_RESERVATION_TIMEOUT
# (default 5m) is the plugin's reservationTimeout: the operator's --gang-reservation-timeout.
# --real-node: one node run by a real kubelet, with containerd, pod networking, kube-proxy and
# CoreDNS (hack/real-node.sh), and no simulated nodes unless --nodes is given too: then those are
# tainted sparkop.dev/simulated=true:NoSchedule, so that only pods tolerating it land there.
# Remembered by the state folder and refused on a running cluster like --workload-api.
# Environment: SPARKOP_STORE (default ${XDG_CACHE_HOME:-~/.cache}/sparkop) keeps what is built,
# once per machine: every clone, CI's fresh one included, reuses it (see "Build" below);
# SPARKOP_CACHE (default .cache in the repository) is the clone's own: bin/ links to the
# stored binaries; LOCAL_CLUSTER_DIR (default $SPARKOP_CACHE/local-cluster) holds one
# cluster's state, so several clusters can run side by side with different state folders.
#
# Everything is built from source through the Go module proxy: the versions are pinned by the
# go.mod files under hack/tools/ (Volcano's and YuniKorn's own source comes from the tarballs in
# ../shared/third_party, their dependencies from the proxy). Nothing else is downloaded.
set -euo pipefail
# (The help above ends at that line.) This file owns the control plane: its build, up, down,
# status and the command dispatch. It sources the rest: hack/store.sh (the per-machine store of
# builds), hack/cluster-extras.sh (the on-demand cert-manager, coscheduling and kueue),
# hack/batch-schedulers.sh (volcano, yunikorn) and hack/real-node.sh (`up --real-node`).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
BIN=$CACHE/bin
STATE=${LOCAL_CLUSTER_DIR:-$CACHE/local-cluster}
# One spelling of the state folder, links resolved: a cluster's processes are recognised by it
# (running), and a checkout whose .cache links to another's must see that cluster as running,
# not as stale.
STATE=$(realpath -m "$STATE")
TOOLS=$ROOT/hack/tools

NODES=4
NODE_CPU=16
NODE_MEMORY=64Gi
NODE_PODS=110
# Workload API (--workload-api): 1 to serve it. The feature gate is GenericWorkload
# (k8s.io/kubernetes pkg/features/kube_features.go, beta and off by default in 1.37): the API
# server stores workloads and podgroups only with it, the controller manager runs its
# podgroup-protection controller only with it, and the scheduler's default plugins include
# GangScheduling only with it (pkg/scheduler/apis/config/v1/default_plugins.go); 1.37 has no
# gate of its own for the gang plugin.
WORKLOAD_API=0
SPARK_SCHEDULER=0
# --real-node: 1 for the real node of hack/real-node.sh.
REAL_NODE=0
WORKLOAD_GATES=GenericWorkload=true
WORKLOAD_RUNTIME_CONFIG=scheduling.k8s.io/v1beta1=true

# The order in which components start; `down` stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# shellcheck source=hack/store.sh
source "$ROOT/hack/store.sh"
# shellcheck source=hack/cluster-extras.sh
source "$ROOT/hack/cluster-extras.sh"
# shellcheck source=hack/batch-schedulers.sh
source "$ROOT/hack/batch-schedulers.sh"
# shellcheck source=hack/real-node.sh
source "$ROOT/hack/real-node.sh"

log() { printf '[local-cluster] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------------------------------------
# Build

# build_module MODULE BINARY=PACKAGE... : builds the packages of hack/tools/MODULE into the
# store, unless they were built there from the same pins, and links them into $BIN. Go's build
# cache makes a build after other pins of the same libraries partly a matter of linking.
build_module() {
  local module=$1; shift
  stored_build "$module" "$(tools_stamp "$TOOLS/$module")" build_tools_module "$@"
}

# build_tools_module OUT ENTRY...: the builder of build_module ($module is its caller's).
build_tools_module() {
  local out=$1; shift
  local dir=$TOOLS/$module ldflags="-s -w" cold="~1-3 minutes"
  case $module in scheduler-plugins | kueue) cold="~6-10 minutes (17 on a busy machine)" ;; esac
  if [ "$module" = kubernetes ]; then
    cold="~6-12 minutes"
    ldflags=$(kube_ldflags "$dir")
  fi
  log "building $module into $STORE/bin ($cold cold on 2 cores)"
  go_build_entries "$dir" "$ldflags" "$out" "$@"
}

# kube_ldflags MODULE_DIR: the link flags that give a build from k8s.io/kubernetes its version,
# as the module in MODULE_DIR pins it (components check the API server's version against theirs).
kube_ldflags() {
  local v minor
  v=$(cd "$1" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
  minor=${v#v1.}; minor=${minor%%.*}
  echo "-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
}

# spark-scheduler: kube-scheduler of the control plane's version with the SparkReservations
# plugin (cmd/spark-scheduler, a module of its own that takes the operator's packages from this
# repository, so its stamp covers those it builds on too). Its Kubernetes packages are the
# control plane's, already in Go's build cache: a cold build is mostly linking.
build_spark_scheduler() {
  local want files
  mapfile -t files < <(cd "$ROOT" && find cmd/spark-scheduler scheduler/reservation apis -name '*.go' ! -name '*_test.go' | sort)
  want=$(cd "$ROOT" && cat cmd/spark-scheduler/go.mod cmd/spark-scheduler/go.sum "${files[@]}" | sha256sum | cut -c1-16)
  stored_build spark-scheduler "$want" build_spark_scheduler_into spark-scheduler=.
}

build_spark_scheduler_into() {
  local dir=$ROOT/cmd/spark-scheduler
  log "building spark-scheduler into $STORE/bin (~1-3 minutes once the control plane is built)"
  go_build_entries "$dir" "$(kube_ldflags "$dir")" "$@"
}

cmd_build() {
  build_module etcd etcd=go.etcd.io/etcd/server/v3
  build_module kwok kwok=sigs.k8s.io/kwok/cmd/kwok
  build_module kubernetes kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver \
    kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager \
    kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler kubectl=k8s.io/kubernetes/cmd/kubectl
  local flag
  for flag in "$@"; do
    case $flag in
      --with-helm) build_module helm helm=helm.sh/helm/v3/cmd/helm ;;
      --with-cert-manager) build_cert_manager ;;
      --with-coscheduling) build_coscheduling ;;
      --with-kueue) build_kueue ;;
      --with-spark-scheduler) build_spark_scheduler ;;
      --with-real-node) build_real_node ;;
      *) die "unknown flag of build: $flag" ;;
    esac
  done
}

# ---------------------------------------------------------------------------------------------
# State helpers

pidfile() { echo "$STATE/pids/$1.pid"; }

# running COMPONENT: the component's recorded process is alive and is the one we started
# (its command line names our state folder), so a recycled pid is never mistaken for ours.
running() {
  local pid; pid=$(cat "$(pidfile "$1")" 2>/dev/null) || return 1
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$STATE/"
}

kctl() { "$BIN/kubectl" --kubeconfig "$STATE/kubeconfig" "$@"; }

healthy() {
  local c
  for c in "${COMPONENTS[@]}"; do running "$c" || return 1; done
  if [ -f "$STATE/real-node" ]; then real_node_healthy || return 1; fi
  kctl get --raw /readyz >/dev/null 2>&1
}

# start COMPONENT[=BINARY] ARGS...: runs the binary detached from this shell (its own session, no
# inherited stdio, not the lock), so callers such as `go test` that read our output are not held
# open by it and the next `up` or `down` can take the lock. The components collect garbage a third
# as often as Go's default (GOGC=300, unless GOGC is set): on a 2-core machine their collections
# took about an eighth of the API servers' CPU, for memory a local cluster has to spare.
start() {
  local name=${1%%=*} binary=${1#*=}; shift
  log "starting $name$([ "$binary" != "$name" ] && echo " ($binary)")"
  GOGC=${GOGC:-300} setsid "$BIN/$binary" "$@" </dev/null >"$STATE/logs/$name.log" 2>&1 9>&- &
  echo $! > "$(pidfile "$name")"
}

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, or fails naming WHAT and the logs.
wait_for() {
  local timeout=$1 what=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then die "timed out after ${timeout}s waiting for $what (logs: $STATE/logs)"; fi
    sleep 0.2
  done
}

free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# ---------------------------------------------------------------------------------------------
# Certificates: one CA signs the API server's serving cert, the admin client cert (system:masters)
# and kwok's kubelet serving cert; a separate key pair signs service-account tokens.

gen_certs() {
  local d=$STATE/pki
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=local-cluster-ca" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  issue() { # NAME SUBJECT EXTENSIONS
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$d/$1.key" -out "$d/$1.csr" 2>/dev/null
    openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
      -extfile <(printf '%s\n' "$3") -out "$d/$1.crt" 2>/dev/null
  }
  issue apiserver "/CN=kube-apiserver" "subjectAltName=IP:127.0.0.1,IP:10.96.0.1${RN_HOST_IP:+,IP:$RN_HOST_IP},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage=serverAuth"
  issue admin "/O=system:masters/CN=admin" "extendedKeyUsage=clientAuth"
  issue kubelet "/CN=kwok-kubelet" "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
  # kwok's own identity, which hack/kwok/delete-policy.yaml names.
  issue kwok "/O=system:masters/CN=kwok" "extendedKeyUsage=clientAuth"
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
}

# write_kubeconfig: $STATE/kubeconfig (the admin's, which everything else uses) and
# $STATE/kwok.kubeconfig (kwok's).
write_kubeconfig() {
  local d=$STATE/pki user kc
  for user in admin kwok; do
    kc=$STATE/kubeconfig
    [ $user = admin ] || kc=$STATE/$user.kubeconfig
    "$BIN/kubectl" config --kubeconfig "$kc" set-cluster local --server "https://127.0.0.1:$API_PORT" \
      --certificate-authority "$d/ca.crt" --embed-certs >/dev/null
    "$BIN/kubectl" config --kubeconfig "$kc" set-credentials $user \
      --client-certificate "$d/$user.crt" --client-key "$d/$user.key" --embed-certs >/dev/null
    "$BIN/kubectl" config --kubeconfig "$kc" set-context local --cluster local --user $user --namespace default >/dev/null
    "$BIN/kubectl" config --kubeconfig "$kc" use-context local >/dev/null
  done
}

# kwok_delete_policy: kwok may delete only pods being deleted (hack/kwok/delete-policy.yaml says
# why).
kwok_delete_policy() {
  kctl apply --server-side -f "$ROOT/hack/kwok/delete-policy.yaml" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# up / down

# nodes_ready succeeds once every node reports Ready. One list, not `kubectl wait`: that reads
# the nodes one by one under the client's rate limit, and with 100 nodes never finishes inside
# its own timeout.
nodes_ready() {
  local ready
  ready=$(kctl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}') || return 1
  [ "$(grep -c '^True$' <<<"$ready")" -ge "$NODES" ]
}

create_nodes() {
  local i manifest="" taints=""
  # Beside the real node, simulated nodes take only the pods that tolerate it.
  if [ $REAL_NODE = 1 ]; then
    taints='spec:
  taints: [{key: sparkop.dev/simulated, value: "true", effect: NoSchedule}]'
  fi
  for i in $(seq 0 $((NODES - 1))); do
    manifest+="---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  labels:
    type: kwok
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: \"0\"
$taints
status:
  allocatable: {cpu: \"$NODE_CPU\", memory: \"$NODE_MEMORY\", pods: \"$NODE_PODS\"}
  capacity: {cpu: \"$NODE_CPU\", memory: \"$NODE_MEMORY\", pods: \"$NODE_PODS\"}
"
  done
  [ -z "$manifest" ] || printf '%s' "$manifest" | kctl create -f - >/dev/null
}

# Every container of every pod answers `kubectl logs` with this file unless a test creates a
# per-pod Logs object (kwok.x-k8s.io/v1alpha1) pointing elsewhere. kwok reads the CRI log format.
default_logs() {
  local f=$STATE/logs/default-container.log now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.000000000Z)
  printf '%s stdout F %s\n' "$now" "kwok: this container is simulated; it writes no log of its own" > "$f"
  kctl apply -f - >/dev/null <<EOF
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: default
spec:
  logs:
  - logsFile: $f
EOF
}

apply_project_crds() {
  kctl apply --server-side --force-conflicts -f "$ROOT/charts/spark-operator/crds/" >/dev/null
  kctl wait --for condition=Established crd --all --timeout 60s >/dev/null
}

cmd_up() {
  local nodes_given=0
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) NODES=$2; nodes_given=1; shift 2 ;;
      --node-cpu) NODE_CPU=$2; shift 2 ;;
      --node-memory) NODE_MEMORY=$2; shift 2 ;;
      --node-pods) NODE_PODS=$2; shift 2 ;;
      --workload-api) WORKLOAD_API=1; shift ;;
      --spark-scheduler) SPARK_SCHEDULER=1; shift ;;
      --real-node) REAL_NODE=1; shift ;;
      *) die "unknown flag of up: $1" ;;
    esac
  done
  [[ $NODES =~ ^[0-9]+$ ]] || die "--nodes wants a number, got '$NODES'"

  cmd_build
  if [ -d "$STATE" ]; then
    local had_workload_api=0 had_spark_scheduler=0 had_real_node=0
    [ -f "$STATE/workload-api" ] && had_workload_api=1
    [ -f "$STATE/spark-scheduler" ] && had_spark_scheduler=1
    [ -f "$STATE/real-node" ] && had_real_node=1
    if healthy; then
      if [ $WORKLOAD_API = 1 ] && [ $had_workload_api = 0 ]; then
        die "the cluster running in $STATE was started without --workload-api, and its control plane cannot take the feature gate without a restart that would pull it from under its users; stop it first: LOCAL_CLUSTER_DIR=$STATE $0 down"
      fi
      if [ $SPARK_SCHEDULER = 1 ] && [ $had_spark_scheduler = 0 ]; then
        die "the cluster running in $STATE was started without --spark-scheduler, and swapping its scheduler would pull it from under its users; stop it first: LOCAL_CLUSTER_DIR=$STATE $0 down"
      fi
      if [ $REAL_NODE = 1 ] && [ $had_real_node = 0 ]; then
        die "the cluster running in $STATE was started without --real-node, and its API server cannot serve a real node without a restart that would pull it from under its users; stop it first: LOCAL_CLUSTER_DIR=$STATE $0 down"
      fi
      log "reusing the running cluster in $STATE$([ $had_workload_api = 1 ] && echo ' (with the Workload API)')$([ $had_spark_scheduler = 1 ] && echo ' (with spark-scheduler)')$([ $had_real_node = 1 ] && echo ' (with the real node)')"
      # The repository's CRDs may have changed (or grown) since this cluster started.
      apply_project_crds
      echo "$STATE/kubeconfig"
      return 0
    fi
    log "found a stale or half-started cluster in $STATE; cleaning it up"
    cmd_down
    # A restart keeps what the cluster was started with.
    if [ $had_workload_api = 1 ]; then WORKLOAD_API=1; fi
    if [ $had_spark_scheduler = 1 ]; then SPARK_SCHEDULER=1; fi
    if [ $had_real_node = 1 ]; then REAL_NODE=1; fi
  fi
  # The real node alone, unless simulated nodes are asked for too.
  if [ $REAL_NODE = 1 ] && [ $nodes_given = 0 ]; then NODES=0; fi
  if [ $SPARK_SCHEDULER = 1 ]; then build_spark_scheduler; fi

  mkdir -p "$STATE/pids" "$STATE/logs" "$STATE/etcd"
  # Feature flags of the components; recorded so that the state folder remembers them.
  local apiserver_flags=() gate_flags=()
  if [ $WORKLOAD_API = 1 ]; then
    log "with the Workload API ($WORKLOAD_GATES, $WORKLOAD_RUNTIME_CONFIG)"
    gate_flags=(--feature-gates "$WORKLOAD_GATES")
    apiserver_flags=("${gate_flags[@]}" --runtime-config "$WORKLOAD_RUNTIME_CONFIG")
    echo "$WORKLOAD_GATES $WORKLOAD_RUNTIME_CONFIG" > "$STATE/workload-api"
  fi
  # The scheduler's binary: kube-scheduler, or spark-scheduler in its place (its pid file and
  # log keep the name kube-scheduler: it is the cluster's scheduler).
  local scheduler_binary=kube-scheduler
  if [ $SPARK_SCHEDULER = 1 ]; then
    log "with spark-scheduler (the SparkReservations plugin) in place of kube-scheduler"
    scheduler_binary=spark-scheduler
    echo "${SPARK_SCHEDULER_RESERVATION_TIMEOUT:-5m}" > "$STATE/spark-scheduler"
  fi
  read -r ETCD_PORT ETCD_PEER_PORT API_PORT KCM_PORT SCHED_PORT KWOK_PORT _ <<<"$(free_ports 6)"
  # The real node's processes and pods reach the API server at the host's end of its veth pair.
  local api_bind=127.0.0.1 api_advertise=127.0.0.1
  if [ $REAL_NODE = 1 ]; then
    real_node_prepare
    api_bind=0.0.0.0 api_advertise=$RN_HOST_IP
    # The API server calls a webhook's Service at one of its endpoints: pod IPs are routed from
    # the host, cluster IPs only inside the node's network namespace (kube-proxy's).
    apiserver_flags+=(--enable-aggregator-routing=true)
  fi
  gen_certs
  write_kubeconfig
  local pki=$STATE/pki

  start etcd --name local --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level warn
  wait_for 30 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"

  start kube-apiserver --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$api_bind" --advertise-address "$api_advertise" --secure-port "$API_PORT" \
    --endpoint-reconciler-type none \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --allow-privileged \
    --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
    --kubelet-preferred-address-types InternalIP \
    --max-requests-inflight 1000 --max-mutating-requests-inflight 500 \
    ${apiserver_flags[@]+"${apiserver_flags[@]}"}
  wait_for 90 kube-apiserver kctl get --raw /readyz

  log "installing CRDs"
  # kwok's CRDs come from its module's source: downloaded again if the module cache was emptied
  # since kwok was built.
  local kwokdir; kwokdir=$(cd "$TOOLS/kwok" && go mod download sigs.k8s.io/kwok && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  [ -n "$kwokdir" ] || die "kwok's module source is not in the module cache (go mod download sigs.k8s.io/kwok in $TOOLS/kwok)"
  local crd
  for crd in logs clusterlogs portforwards clusterportforwards; do
    kctl apply --server-side -f "$kwokdir/kustomize/crd/bases/kwok.x-k8s.io_$crd.yaml" >/dev/null
  done
  apply_project_crds
  kwok_delete_policy

  local kc=$STATE/kubeconfig
  start kube-controller-manager --kubeconfig "$kc" --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
    --use-service-account-credentials --kube-api-qps 200 --kube-api-burst 400 --profiling=false \
    ${gate_flags[@]+"${gate_flags[@]}"}

  cat > "$STATE/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $kc
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
EOF
  if [ $SPARK_SCHEDULER = 1 ]; then
    cat >> "$STATE/scheduler.yaml" <<EOF
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: SparkReservations
  pluginConfig:
  - name: SparkReservations
    args:
      reservationTimeout: $(cat "$STATE/spark-scheduler")
EOF
  fi
  start kube-scheduler=$scheduler_binary --config "$STATE/scheduler.yaml" --authentication-kubeconfig "$kc" \
    --authorization-kubeconfig "$kc" --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" \
    ${gate_flags[@]+"${gate_flags[@]}"}

  start kwok --kubeconfig "$STATE/kwok.kubeconfig" --config "$ROOT/hack/kwok/stages.yaml" \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --node-ip 127.0.0.1 --node-port "$KWOK_PORT" --server-address "127.0.0.1:$KWOK_PORT" \
    --tls-cert-file "$pki/kubelet.crt" --tls-private-key-file "$pki/kubelet.key" \
    --enable-crds Logs,ClusterLogs,PortForward,ClusterPortForward \
    --node-lease-duration-seconds 40

  create_nodes
  default_logs
  wait_for 90 "$NODES nodes to be Ready" nodes_ready
  # The controller manager creates each namespace's default service account; pods need it.
  wait_for 60 "the default service account" kctl get serviceaccount default -n default
  for c in "${COMPONENTS[@]}"; do running "$c" || die "$c exited during start-up (log: $STATE/logs/$c.log)"; done
  if [ $REAL_NODE = 1 ]; then
    real_node_up
    # The Spark image the examples name (hack/spark-image.sh, built once per machine).
    real_node_import "$("$ROOT/hack/spark-image.sh" build | tail -n 1)"
  fi
  if [ $WORKLOAD_API = 1 ]; then
    wait_for 30 "the Workload API" kctl get --raw /apis/scheduling.k8s.io/v1beta1/workloads
  fi
  log "cluster is up: $NODES simulated nodes$([ $REAL_NODE = 1 ] && echo ", the real node $REAL_NODE_NAME")$([ $WORKLOAD_API = 1 ] && echo ', Workload API')$([ $SPARK_SCHEDULER = 1 ] && echo ', spark-scheduler'); export KUBECONFIG=$kc"
  echo "$kc"
}

# stop COMPONENT: TERM, then KILL after 15 seconds, if it is running.
stop() {
  local pid
  running "$1" || return 0
  pid=$(cat "$(pidfile "$1")")
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 15))
  while alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# alive PID: the process has not exited. An exited one stays a zombie until whatever adopted it
# reaps it, which some machines' init takes a second or two to do.
alive() {
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ -n "$state" ] && [ "${state%% *}" != Z ]
}

cmd_down() {
  local i
  # Started on demand by `cert-manager`, `coscheduling` and `kueue` (hack/cluster-extras.sh), if
  # at all; they talk to the API server, so they stop first; and those of `volcano` and `yunikorn`.
  stop_cluster_extras
  stop_batch_schedulers
  real_node_down
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop "${COMPONENTS[$i]}"; done
  rm -rf "$STATE"
  log "cluster in $STATE is down"
}

# All of up/down/status/cert-manager/coscheduling/kueue run under one lock per state folder: concurrent `go test`
# packages may all ask for the cluster at once, and only the first should start it.
with_lock() {
  mkdir -p "$(dirname "$STATE")"
  exec 9>"$STATE.lock"
  flock 9
  "$@"
}

case ${1:-} in
  build) shift; cmd_build "$@" ;;
  up) shift; with_lock cmd_up "$@" ;;
  down) with_lock cmd_down ;;
  status) with_lock healthy ;;
  can-run-containers) real_node_possible ;;
  import-image) shift; with_lock cmd_real_node_import "$@" ;;
  tag-image) shift; with_lock cmd_real_node_tag "$@" ;;
  restart-runtime) with_lock cmd_real_node_restart_runtime ;;
  kubeconfig) healthy && echo "$STATE/kubeconfig" ;;
  cert-manager) with_lock cmd_cert_manager ;;
  volcano) with_lock cmd_volcano ;;
  yunikorn) with_lock cmd_yunikorn ;;
  build-batch-schedulers) cmd_build_batch_schedulers ;;
  coscheduling) with_lock cmd_coscheduling ;;
  kueue) with_lock cmd_kueue ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
