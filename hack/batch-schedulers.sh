# shellcheck shell=bash
# Real batch schedulers for the local control plane, sourced by hack/local-cluster.sh:
#
#   hack/local-cluster.sh volcano    Volcano's scheduler and controller manager (v1.15.1)
#   hack/local-cluster.sh yunikorn   YuniKorn in its scheduler-plugin mode (k8shim v1.8.0)
#
# Neither is served by the Go module proxy: their released source is read from the tarballs in
# $SPARKOP_SHARED/third_party (default: ../shared/third_party beside the repository; its README
# lists the tags and commits), unpacked into $STORE/src and built there into the store (linked
# into $BIN), once per machine; their dependencies come from the module proxy. Nothing is copied into the repository. `down` stops
# them with the cluster.

THIRD_PARTY=${SPARKOP_SHARED:-$ROOT/../shared}/third_party

VOLCANO_TARBALL=volcano-v1.15.1.tar.gz
VOLCANO_SRC=$STORE/src/volcano-v1.15.1
YUNIKORN_TARBALLS=(yunikorn-k8shim-v1.8.0.tar.gz yunikorn-core-v1.8.0-1.tar.gz yunikorn-scheduler-interface-v1.8.0-0.tar.gz)
YUNIKORN_SRC=$STORE/src/yunikorn-k8shim-v1.8.0
# The namespace of YuniKorn's configuration (the yunikorn-configs ConfigMap).
YUNIKORN_NAMESPACE=yunikorn

# The processes `volcano` and `yunikorn` start; `down` stops them before the control plane.
BATCH_SCHEDULER_COMPONENTS=(vc-controller-manager vc-scheduler yunikorn-scheduler)

# How to get the trees without ../shared, for the message of a missing tarball.
third_party_help() {
  cat <<EOF
$THIRD_PARTY holds no $1. The tarballs there are the upstream releases, unmodified: make the same with
  git clone --depth 1 --branch v1.15.1 https://github.com/volcano-sh/volcano && tar czf volcano-v1.15.1.tar.gz volcano
  git clone --depth 1 --branch v1.8.0 https://github.com/apache/yunikorn-k8shim && tar czf yunikorn-k8shim-v1.8.0.tar.gz yunikorn-k8shim
  git clone --depth 1 --branch v1.8.0-1 https://github.com/apache/yunikorn-core && tar czf yunikorn-core-v1.8.0-1.tar.gz yunikorn-core
  git clone --depth 1 --branch v1.8.0-0 https://github.com/apache/yunikorn-scheduler-interface && tar czf yunikorn-scheduler-interface-v1.8.0-0.tar.gz yunikorn-scheduler-interface
and put them in \$SPARKOP_SHARED/third_party (or ../shared/third_party beside the repository).
EOF
}

# unpack TARBALL DIR: extracts TARBALL (its one top folder stripped) into DIR unless DIR holds
# that tarball's contents already; a changed tarball is unpacked afresh.
unpack() {
  local tarball=$THIRD_PARTY/$1 dir=$2 sum
  [ -f "$tarball" ] || die "$(third_party_help "$1")"
  sum=$(sha256sum "$tarball" | cut -c1-16)
  if [ "$(cat "$dir/.sparkop-unpacked" 2>/dev/null)" = "$sum" ]; then return 0; fi
  log "unpacking $1 into $dir"
  rm -rf "$dir" && mkdir -p "$dir"
  tar xzf "$tarball" -C "$dir" --strip-components=1
  echo "$sum" > "$dir/.sparkop-unpacked"
}

# build_third_party NAME SRC STAMP BINARY=PACKAGE...: builds each package of the module in SRC
# into the store, unless they were built there from the same tarballs (STAMP), and links them
# into $BIN. The same flags as the control plane's, and the same absolute source folder each
# time, so Go's build cache serves a rebuild.
build_third_party() {
  local name=$1 src=$2 want=$3; shift 3
  stored_build "$name" "$want" build_third_party_into "$@"
}

# build_third_party_into OUT ENTRY...: the builder of build_third_party ($name and $src are its
# caller's). The releases carry no vendor folder: modules come from the proxy (-mod=mod).
build_third_party_into() {
  log "building $name into $STORE/bin (~5-10 minutes cold on 2 cores)"
  GOFLAGS="-mod=mod -buildvcs=false" go_build_entries "$src" "-s -w" "$@"
}

# Builds share $STORE/src and the store with other checkouts and test packages: one build of
# each scheduler at a time. with_build_lock NAME COMMAND...
with_build_lock() {
  local name=$1; shift
  mkdir -p "$STORE/src"
  (
    flock 8
    "$@"
  ) 8>"$STORE/src/.$name.build.lock"
}

# cmd_build_batch_schedulers: builds (once) scheduler-plugins and Kueue (hack/cluster-extras.sh),
# in the order test/batchschedulers starts them, then each scheduler whose source is in
# $THIRD_PARTY, and skips, saying so, one whose source is not (under CI=true a missing source
# fails instead: CI must run every test). `make test` runs it in the background from its first
# step, so that the builds overlap the others and the tests before test/batchschedulers, which
# waits for them.
cmd_build_batch_schedulers() {
  build_coscheduling
  build_kueue
  if [ -f "$THIRD_PARTY/$VOLCANO_TARBALL" ]; then
    with_build_lock volcano build_volcano
  else
    missing_source "$VOLCANO_TARBALL"
  fi
  local t
  for t in "${YUNIKORN_TARBALLS[@]}"; do
    [ -f "$THIRD_PARTY/$t" ] || { missing_source "$t"; return 0; }
  done
  with_build_lock yunikorn build_yunikorn
}

# missing_source TARBALL: a skip on a developer's clone, a failure under CI.
missing_source() {
  case ${CI:-} in
    true | TRUE | True | 1) die "$(third_party_help "$1")" ;;
  esac
  log "skipping the build: $THIRD_PARTY/$1 is missing"
}

tarball_stamp() { (cd "$THIRD_PARTY" && sha256sum "$@") | sha256sum | cut -c1-16; }

build_volcano() {
  unpack "$VOLCANO_TARBALL" "$VOLCANO_SRC"
  build_third_party volcano "$VOLCANO_SRC" "$(tarball_stamp "$VOLCANO_TARBALL")" \
    vc-scheduler=./cmd/scheduler vc-controller-manager=./cmd/controller-manager
}

# YuniKorn's k8shim v1.8.0 requires exactly core v1.8.0-1 and scheduler-interface v1.8.0-0,
# which the proxy does not serve: its go.mod (in the unpacked copy) is pointed at their trees.
build_yunikorn() {
  unpack "${YUNIKORN_TARBALLS[0]}" "$YUNIKORN_SRC"
  unpack "${YUNIKORN_TARBALLS[1]}" "$STORE/src/yunikorn-core-v1.8.0-1"
  unpack "${YUNIKORN_TARBALLS[2]}" "$STORE/src/yunikorn-scheduler-interface-v1.8.0-0"
  (cd "$YUNIKORN_SRC" && go mod edit \
    -replace github.com/apache/yunikorn-core=../yunikorn-core-v1.8.0-1 \
    -replace github.com/apache/yunikorn-scheduler-interface=../yunikorn-scheduler-interface-v1.8.0-0)
  build_third_party yunikorn "$YUNIKORN_SRC" "$(tarball_stamp "${YUNIKORN_TARBALLS[@]}")" \
    yunikorn-scheduler=./pkg/cmd/schedulerplugin
}

# ---------------------------------------------------------------------------------------------
# Volcano

# Volcano's scheduler configuration. enqueue lets a PodGroup in only when its minResources fit
# beside the groups already in; overcommit-factor 1.0 makes that "fit in the cluster" (Volcano's
# default, 1.2, lets groups in for 20% more than the cluster holds, so some can start in part);
# gang keeps a group's pods from binding before minMember of them can; proportion shares the
# cluster between queues.
volcano_scheduler_conf() {
  cat <<'EOF'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.0
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
EOF
}

queue_open() { [ "$(kctl get queue.scheduling.volcano.sh "$1" -o jsonpath='{.status.state}' 2>/dev/null)" = Open ]; }

# cmd_volcano: on a running cluster, installs Volcano's CRDs (from the unpacked release) and
# starts its scheduler (pods of schedulerName volcano) and its controller manager (Queue state,
# PodGroups of pods that name none). Volcano's admission webhooks are not run: they default and
# validate Volcano's own objects (Jobs, Queues, PodGroups), and the scheduler works without them.
cmd_volcano() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up\` first"
  if running vc-scheduler && running vc-controller-manager; then
    log "Volcano is already running in $STATE"
    echo "$STATE/kubeconfig"
    return 0
  fi
  with_build_lock volcano build_volcano
  log "installing Volcano's CRDs"
  kctl apply --server-side --force-conflicts -f "$VOLCANO_SRC/config/crd/volcano/bases/" >/dev/null
  kctl wait --for condition=Established crd --all --timeout 60s >/dev/null
  volcano_scheduler_conf > "$STATE/volcano-scheduler.conf"
  local kc=$STATE/kubeconfig
  # vc-scheduler always serves its metrics, on :8080 unless told: a free port of its own lets
  # two clusters' Volcanos (and a real node's CoreDNS, whose health port is 8080) run side by side.
  running vc-controller-manager || start vc-controller-manager --kubeconfig "$kc" --leader-elect=false \
    --controllers queue-controller,pg-controller --kube-api-qps 200 --kube-api-burst 400 --logtostderr -v 2
  running vc-scheduler || start vc-scheduler --kubeconfig "$kc" --leader-elect=false \
    --scheduler-conf "$STATE/volcano-scheduler.conf" --schedule-period 500ms --listen-address "127.0.0.1:$(free_ports 1)" \
    --kube-api-qps 200 --kube-api-burst 400 --cache-dumper=false --logtostderr -v 2
  # The scheduler creates the default and root queues, the controller manager opens them.
  wait_for 120 "Volcano's default queue to be open" queue_open default
  running vc-scheduler || die "vc-scheduler exited during start-up (log: $STATE/logs/vc-scheduler.log)"
  running vc-controller-manager || die "vc-controller-manager exited during start-up (log: $STATE/logs/vc-controller-manager.log)"
  log "Volcano is running (logs: $STATE/logs/vc-scheduler.log, vc-controller-manager.log)"
  echo "$STATE/kubeconfig"
}

# ---------------------------------------------------------------------------------------------
# YuniKorn

# YuniKorn's configuration: queues under root whose applications are sorted first in, first
# out, so that the oldest application gets all its placeholders before the next gets any (the
# "fair" default spreads them over applications, which can then each hold part of a gang and
# wait for each other until their placeholders time out); and queues named by applications are
# created under root (the provided placement rule).
yunikorn_configs() {
  cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
  namespace: $YUNIKORN_NAMESPACE
data:
  service.schedulingInterval: 100ms
  queues.yaml: |
    partitions:
      - name: default
        placementrules:
          - name: provided
            create: true
        queues:
          - name: root
            submitacl: "*"
            properties:
              application.sort.policy: fifo
            queues:
              - name: default
                properties:
                  application.sort.policy: fifo
EOF
}

yunikorn_healthy() { curl -skf "https://127.0.0.1:$(cat "$STATE/yunikorn-port")/healthz"; }

# cmd_yunikorn: on a running cluster, writes YuniKorn's configuration (the yunikorn-configs
# ConfigMap in the yunikorn namespace) and starts YuniKorn in its scheduler-plugin mode: a
# kube-scheduler (of the Kubernetes release k8shim v1.8.0 is built with) whose one profile,
# yunikorn, runs the YuniKorn plugin, beside the cluster's own kube-scheduler. Its REST API
# listens on :9080, a port YuniKorn does not let one change: a second cluster's YuniKorn logs
# that the port is taken and schedules all the same.
cmd_yunikorn() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up\` first"
  if running yunikorn-scheduler; then
    log "YuniKorn is already running in $STATE"
    echo "$STATE/kubeconfig"
    return 0
  fi
  with_build_lock yunikorn build_yunikorn
  kctl create namespace "$YUNIKORN_NAMESPACE" >/dev/null 2>&1 || true
  yunikorn_configs | kctl apply --server-side --force-conflicts -f - >/dev/null
  local kc=$STATE/kubeconfig port
  port=$(free_ports 1)
  echo "$port" > "$STATE/yunikorn-port"
  cat > "$STATE/yunikorn-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $kc
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: yunikorn
    plugins:
      multiPoint:
        enabled:
          - name: YuniKornPlugin
        disabled:
          - name: DefaultPreemption
          - name: SchedulingGates
EOF
  # The plugin reads its kubeconfig and the namespace of its ConfigMap from the environment.
  KUBECONFIG=$kc NAMESPACE=$YUNIKORN_NAMESPACE start yunikorn-scheduler --config "$STATE/yunikorn-scheduler.yaml" \
    --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" --bind-address 127.0.0.1 --secure-port "$port"
  wait_for 120 "YuniKorn's scheduler to be healthy" yunikorn_healthy
  running yunikorn-scheduler || die "yunikorn-scheduler exited during start-up (log: $STATE/logs/yunikorn-scheduler.log)"
  log "YuniKorn is running (log: $STATE/logs/yunikorn-scheduler.log)"
  echo "$STATE/kubeconfig"
}

stop_batch_schedulers() {
  local c
  for c in "${BATCH_SCHEDULER_COMPONENTS[@]}"; do stop "$c"; done
}
