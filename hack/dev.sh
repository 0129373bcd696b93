#!/usr/bin/env bash
# The main job, behind `make dev`: a local cluster, the operator installed into it as users
# install it, examples/spark-pi.yaml followed until it completes, and a Spark Connect session
# (examples/spark-connect.yaml) started and followed until Ready. Everything stays up afterwards.
#
#   hack/dev.sh up      start (or reuse) the cluster, install (or upgrade) the operator, run the examples
#   hack/dev.sh down    uninstall the operator and stop the cluster
#
# The operator is the Helm chart's release spark-operator, in the namespace spark-operator:
# `helm upgrade --install` of charts/spark-operator with its default values, running the
# operator's image built here (hack/operator-image.sh, named as the chart's defaults name it)
# and imported into the real node; `up` waits until its Deployments are available and its
# webhook answers through its Service. Run again, it upgrades the release in place when the
# chart or the image changed, and leaves it alone otherwise. Every batch scheduler is enabled
# (--enable-batch-scheduler, coscheduling under the profile kube-scheduler, gang the default), so
# that `LOCAL_CLUSTER_DIR=.cache/dev-cluster hack/local-cluster.sh volcano|yunikorn|coscheduling|kueue`
# is all it takes to try one. DEV_VALUES names a values file to
# install with as well, e.g. charts/spark-operator/ci/features-values.yaml (every optional
# feature on: the gang scheduler by default, UI Ingresses, driver PodDisruptionBudgets,
# ResourceQuota enforcement, batchScheduler: kubernetes). docs/helm.md has more.
#
# DEV_OPERATOR=local runs the operator as a process on this machine instead, for a debugger or
# quick edits (its log: .cache/dev/operator.log), with its webhook registered by URL and every
# optional feature on: the embedded gang scheduler as the default batch scheduler, so
# applications queue until their whole gang fits (kubectl get sparkqueues; sparkctl list shows
# QUEUED), and each admitted run's room is a Reservation (kubectl get reservations) that
# placeholder pods hold against every other pod. On simulated nodes, where no container runs,
# the operator always runs so.
#
# DEV_GANG_ENFORCEMENT=plugin holds the gang scheduler's room with spark-scheduler instead (the
# cluster's scheduler is then kube-scheduler with the SparkReservations plugin; a dev cluster
# started without it is restarted once with it), DEV_GANG_ENFORCEMENT=advisory runs without
# either (docs/gang-scheduling.md). The cluster serves the Workload API (hack/local-cluster.sh up
# --workload-api), for applications naming batchScheduler: kubernetes; a dev cluster started
# before it did is restarted once with it.
#
# DEV_NODES picks the cluster's nodes. By default (or DEV_NODES=real) one real node: a kubelet,
# containerd and runc on this machine (hack/local-cluster.sh up --real-node), the Spark image
# built here (hack/spark-image.sh), so spark-pi runs for real and a Spark Connect client's query
# is answered; where the machine cannot run containers, `make dev` says why and falls back.
# DEV_NODES=simulated gives four simulated nodes of 16 CPUs and 64 GiB instead (kwok), to try
# gang scheduling at sizes one machine cannot hold: there the example's driver pod "runs" for
# DEV_RUN_SECONDS (default 8) through kwok's kwok.sparkop.dev/run-seconds annotation. Switching
# between the two restarts the dev cluster.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
DEV=$CACHE/dev
KUBECTL=$CACHE/bin/kubectl
OPERATOR=$ROOT/bin/spark-operator
RUN_SECONDS=${DEV_RUN_SECONDS:-8}
ENFORCEMENT=${DEV_GANG_ENFORCEMENT:-placeholders}
NODES=${DEV_NODES:-}
ENFORCEMENT_SET=${DEV_GANG_ENFORCEMENT:+1}
MODE=${DEV_OPERATOR:-chart}
VALUES=${DEV_VALUES:-}
HELM=$CACHE/bin/helm
RELEASE=spark-operator
RELEASE_NS=spark-operator
# The kube-scheduler profile that `hack/local-cluster.sh coscheduling` runs Coscheduling under.
COSCHEDULING_NAME=kube-scheduler
# The webhook configurations of the local operator (DEV_OPERATOR=local): not the chart's names.
LOCAL_WEBHOOK=spark-operator-local-webhook
# A cluster of its own: the operator here watches every namespace, and must not act on the
# applications that tests create in the shared test cluster.
export LOCAL_CLUSTER_DIR=$CACHE/dev-cluster

log() { printf '[dev] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

operator_running() {
  local pid; pid=$(cat "$DEV/operator.pid" 2>/dev/null) || return 1
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$OPERATOR"
}

stop_operator() {
  operator_running || return 0
  local pid; pid=$(cat "$DEV/operator.pid")
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 15))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DEV/operator.pid"
}

# workload_api_served: the running dev cluster serves scheduling.k8s.io/v1beta1 workloads.
workload_api_served() {
  local resources
  resources=$("$KUBECTL" --kubeconfig "$LOCAL_CLUSTER_DIR/kubeconfig" get --raw /apis/scheduling.k8s.io/v1beta1 2>/dev/null) &&
    grep -q '"name":"workloads"' <<<"$resources"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_operator() {
  local kubeconfig=$1 sum
  # The flags that vary count as the binary does: a running operator with others is restarted.
  sum=$( (sha256sum "$OPERATOR"; echo "$ENFORCEMENT") | sha256sum | cut -c1-16)
  if operator_running && [ "$(cat "$DEV/operator.sum" 2>/dev/null)" = "$sum" ]; then
    log "reusing the running operator (pid $(cat "$DEV/operator.pid"))"
    return 0
  fi
  stop_operator
  mkdir -p "$DEV"
  local metrics health webhook
  metrics=$(free_port); health=$(free_port); webhook=$(free_port)
  log "starting the operator (log: $DEV/operator.log, metrics: http://127.0.0.1:$metrics/metrics)"
  # shellcheck disable=SC2016 # --ingress-url-format is a template the operator expands, not the shell
  setsid "$OPERATOR" --kubeconfig "$kubeconfig" --metrics-bind-address "127.0.0.1:$metrics" \
    --health-probe-bind-address "127.0.0.1:$health" -logtostderr -v=1 \
    --enable-gang-scheduler --default-batch-scheduler=gang --gang-enforcement="$ENFORCEMENT" --enable-kubernetes-scheduler \
    --enable-batch-scheduler --kube-scheduler-names "$COSCHEDULING_NAME" \
    --enable-webhook --webhook-url-host localhost --webhook-port "$webhook" \
    --webhook-secret-namespace default --webhook-cert-dir "$DEV/webhook-certs" --webhook-config-name "$LOCAL_WEBHOOK" \
    --enable-driver-pdb --enable-resource-quota-enforcement \
    --ingress-url-format '{{$appName}}.{{$appNamespace}}.spark.localhost' \
    </dev/null >"$DEV/operator.log" 2>&1 &
  echo $! > "$DEV/operator.pid"
  echo "$sum" > "$DEV/operator.sum"
  echo "127.0.0.1:$metrics" > "$DEV/metrics-address"
  local deadline=$((SECONDS + 30))
  until curl -sf "http://127.0.0.1:$health/readyz" >/dev/null; do
    operator_running || die "the operator exited; see $DEV/operator.log"
    [ $SECONDS -lt $deadline ] || die "the operator did not become ready; see $DEV/operator.log"
    sleep 0.2
  done
}

# helm_cmd ARGS...: the pinned helm (hack/local-cluster.sh build --with-helm) on the dev
# cluster, its own caches and settings in $DEV/helm.
helm_cmd() {
  HELM_CACHE_HOME=$DEV/helm/cache HELM_CONFIG_HOME=$DEV/helm/config HELM_DATA_HOME=$DEV/helm/data \
    "$HELM" --kubeconfig "$LOCAL_CLUSTER_DIR/kubeconfig" "$@"
}

release_installed() { [ -x "$HELM" ] && helm_cmd status "$RELEASE" --namespace "$RELEASE_NS" >/dev/null 2>&1; }

uninstall_release() {
  release_installed || return 0
  log "helm uninstall $RELEASE"
  helm_cmd uninstall "$RELEASE" --namespace "$RELEASE_NS" --wait >&2
  rm -f "$DEV/release.sum"
}

# import_operator_image: the operator's image (hack/operator-image.sh, built unless the store has
# it) imported into the real node; sets IMAGE_STAMP to its build's stamp.
import_operator_image() {
  local tar
  tar=$("$ROOT/hack/operator-image.sh" build)
  IMAGE_STAMP=$(basename "$tar" .tar)
  IMAGE_STAMP=${IMAGE_STAMP#operator-}
  "$ROOT/hack/local-cluster.sh" import-image "$tar" >&2
}

# release_args: helm's arguments for the release: the chart's defaults with the gang scheduler
# on and the default (as README's quick start, which also enables it), every other batch
# scheduler enabled too (Volcano, YuniKorn, and coscheduling under the profile name that
# `hack/local-cluster.sh coscheduling` runs), so that starting one of them on the dev cluster is
# all it takes to try it, the local image (whose tag is the chart's, so a new build rolls the
# pods through an annotation), DEV_VALUES.
release_args() {
  RELEASE_ARGS=(upgrade --install "$RELEASE" "$ROOT/charts/spark-operator" --namespace "$RELEASE_NS" --create-namespace
    --set image.pullPolicy=IfNotPresent
    --set controller.batchScheduler.gang.enable=true --set controller.batchScheduler.default=gang
    --set controller.batchScheduler.enable=true --set "controller.batchScheduler.kubeSchedulerNames={$COSCHEDULING_NAME}"
    --set-string "controller.podAnnotations.sparkop\.dev/image=$IMAGE_STAMP"
    --set-string "webhook.podAnnotations.sparkop\.dev/image=$IMAGE_STAMP")
  if [ -n "$VALUES" ]; then RELEASE_ARGS+=(-f "$VALUES"); fi
  if [ -n "$ENFORCEMENT_SET" ]; then RELEASE_ARGS+=(--set "controller.batchScheduler.gang.enforcement=$ENFORCEMENT"); fi
}

# release_sum: a fingerprint of the release's arguments, the chart's files and DEV_VALUES.
release_sum() {
  local files
  mapfile -t files < <(find "$ROOT/charts/spark-operator" -type f | LC_ALL=C sort)
  { printf '%s\n' "${RELEASE_ARGS[@]}" "${files[@]}"; cat "${files[@]}" ${VALUES:+"$VALUES"}; } | sha256sum | cut -c1-16
}

# install_release: the chart installed, or upgraded when the chart, the values or the image
# changed; then waits for its webhook.
install_release() {
  "$ROOT/hack/local-cluster.sh" build --with-helm >&2
  import_operator_image
  release_args
  local sum; sum=$(release_sum)
  if release_installed && [ "$(cat "$DEV/release.sum" 2>/dev/null)" = "$sum" ]; then
    log "the release $RELEASE is up to date (chart, values and image unchanged)"
  else
    log "helm upgrade --install $RELEASE charts/spark-operator (namespace $RELEASE_NS, image $("$ROOT/hack/operator-image.sh" ref))"
    mkdir -p "$DEV"
    helm_cmd "${RELEASE_ARGS[@]}" --wait --timeout 10m >&2 || { release_diagnostics; die "the release did not become ready"; }
    echo "$sum" > "$DEV/release.sum"
  fi
  wait_webhook
}

# wait_webhook: the API server reaches the webhook through its Service: a server-side dry run of
# the example passes its validating webhook (failure policy Fail: refused while unreachable).
wait_webhook() {
  local deadline=$((SECONDS + 120)) out
  until out=$("$KUBECTL" patch --local -f "$ROOT/examples/spark-pi.yaml" --type merge -o yaml -p '{"metadata":{"name":"dev-webhook-check"}}' |
    "$KUBECTL" create --dry-run=server -f - 2>&1); do
    if [ $SECONDS -ge $deadline ]; then
      log "$out"
      release_diagnostics
      die "the webhook did not answer through its Service within 120s"
    fi
    sleep 1
  done
  log "the release is ready: its webhook answers through its Service"
}

release_diagnostics() {
  "$KUBECTL" -n "$RELEASE_NS" get pods -o wide >&2 || true
  local d
  for d in controller webhook; do
    log "the end of the $d's log:"
    "$KUBECTL" -n "$RELEASE_NS" logs "deploy/$RELEASE-$d" --tail 20 >&2 || true
  done
}

# remove_local_webhooks: the webhook configurations a local operator registered by URL, which
# would refuse Spark's pods once it is gone: its own names, and the chart's where Helm does not
# manage them (a local operator before it had names of its own).
remove_local_webhooks() {
  local kind name managed
  for kind in mutatingwebhookconfiguration validatingwebhookconfiguration; do
    for name in "$LOCAL_WEBHOOK" "$RELEASE-webhook"; do
      managed=$("$KUBECTL" get "$kind" "$name" -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}' 2>/dev/null) || continue
      if [ "$managed" != Helm ]; then "$KUBECTL" delete "$kind" "$name" >&2; fi
    done
  done
}

# pick_operator: settles MODE as chart or local; simulated nodes run no container.
pick_operator() {
  case $MODE in
    chart | local) ;;
    *) die "DEV_OPERATOR is chart or local, not '$MODE'" ;;
  esac
  if [ "$NODES" = simulated ] && [ "$MODE" = chart ]; then
    log "simulated nodes run no container: the operator runs as a process here (DEV_OPERATOR=local)"
    MODE=local
  fi
}

# follow_app NAME: prints each state the application passes through until it ends.
follow_app() {
  local name=$1 last="" state shown="" deadline=$((SECONDS + 600))
  while [ $SECONDS -lt $deadline ]; do
    state=$("$KUBECTL" get sparkapplication "$name" -o jsonpath='{.status.applicationState.state}' 2>/dev/null || true)
    if [ "$state" != "$last" ]; then
      log "$name: ${state:-NEW}"
      last=$state
    fi
    case $state in
      RUNNING)
        if [ "$last" = RUNNING ] && [ -z "${shown:-}" ]; then
          shown=1
          # What a running driver gets besides its pods: UI and driver Services, Ingresses and
          # its disruption budget.
          "$KUBECTL" get service,ingress,poddisruptionbudget -l "sparkoperator.k8s.io/app-name=$name" >&2 || true
          # The room the gang scheduler admitted the run into (gone with the run).
          "$KUBECTL" get reservations.scheduling.sparkop.dev "$name" >&2 || true
        fi ;;
      COMPLETED) return 0 ;;
      FAILED|SUBMISSION_FAILED)
        "$KUBECTL" get sparkapplication "$name" -o jsonpath='{.status.applicationState.errorMessage}{"\n"}' >&2
        return 1 ;;
    esac
    sleep 0.5
  done
  die "$name did not finish within 600s"
}

# follow_connect NAME: prints each state the SparkConnect passes through until it is Ready.
follow_connect() {
  local name=$1 last="" state deadline=$((SECONDS + 600))
  while [ $SECONDS -lt $deadline ]; do
    state=$("$KUBECTL" get sparkconnect "$name" -o jsonpath='{.status.state}' 2>/dev/null || true)
    if [ "$state" != "$last" ]; then
      log "$name: ${state:-New}"
      last=$state
    fi
    case $state in
      Ready) return 0 ;;
      Failed)
        "$KUBECTL" get sparkconnect "$name" -o jsonpath='{.status.conditions[0].message}{"\n"}' >&2
        return 1 ;;
    esac
    sleep 0.5
  done
  die "$name did not become Ready within 600s"
}

# pick_nodes: settles NODES as real or simulated; by default real where the machine can run
# containers, saying why when it cannot.
pick_nodes() {
  local why
  case $NODES in
    simulated) return 0 ;;
    real)
      "$ROOT/hack/local-cluster.sh" can-run-containers || die "DEV_NODES=real, but this machine cannot run containers (above)"
      return 0 ;;
    "") ;;
    *) die "DEV_NODES is real or simulated, not '$NODES'" ;;
  esac
  if why=$("$ROOT/hack/local-cluster.sh" can-run-containers 2>&1); then
    NODES=real
  else
    NODES=simulated
    log "falling back to simulated nodes (kwok), since this machine cannot run containers: ${why:-no reason given}"
    log "on the simulated nodes no Spark runs: the driver pod only looks as if it ran"
  fi
}

# spark_role: what the chart gives its Spark service account, so that drivers make executors.
spark_role() {
  "$KUBECTL" get serviceaccount spark-operator-spark >/dev/null 2>&1 ||
    "$KUBECTL" create serviceaccount spark-operator-spark >/dev/null
  "$KUBECTL" apply -f - >/dev/null <<'EOF2'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: spark-operator-spark, namespace: default}
rules:
- apiGroups: [""]
  resources: [pods, services, configmaps, persistentvolumeclaims]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: spark-operator-spark, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: spark-operator-spark}
subjects:
- {kind: ServiceAccount, name: spark-operator-spark, namespace: default}
EOF2
}

# connect_query: a real Spark Connect client (hack/install-spark.sh connect-client) runs a
# query through the example's server, reached by a port-forward to its Service.
connect_query() {
  local python port pf ok=0
  python=$("$ROOT/hack/install-spark.sh" connect-client | tail -n 1)
  port=$(free_port)
  "$KUBECTL" port-forward svc/spark-connect-server "$port:15002" >"$DEV/port-forward.log" 2>&1 &
  pf=$!
  local deadline=$((SECONDS + 30))
  until grep -q "Forwarding from" "$DEV/port-forward.log"; do
    kill -0 "$pf" 2>/dev/null && [ $SECONDS -lt $deadline ] ||
      { kill "$pf" 2>/dev/null; cat "$DEV/port-forward.log" >&2; die "port-forward to spark-connect-server failed"; }
    sleep 0.2
  done
  log "a query through Spark Connect (hack/spark-connect-query.py sc://127.0.0.1:$port):"
  "$python" "$ROOT/hack/spark-connect-query.py" "sc://127.0.0.1:$port" >&2 || ok=1
  kill "$pf" 2>/dev/null || true
  [ $ok = 0 ] || die "the Spark Connect query failed"
}

cmd_up() {
  log "building"
  make -C "$ROOT" --no-print-directory build >&2
  pick_nodes
  pick_operator
  local kubeconfig
  # A dev cluster from before `make dev` asked for the Workload API lacks it, and the script
  # refuses to switch it on in a running cluster; this cluster is ours alone, so restart it.
  if "$ROOT/hack/local-cluster.sh" status 2>/dev/null && ! workload_api_served; then
    log "the dev cluster was started without the Workload API; restarting it with --workload-api"
    stop_operator
    "$ROOT/hack/local-cluster.sh" down
  fi
  local up=(--workload-api)
  # The cluster's nodes follow DEV_NODES: a running dev cluster of the other kind is restarted.
  local has=simulated
  [ -f "$LOCAL_CLUSTER_DIR/real-node" ] && has=real
  # A stopped one too: `up` would restart it as it was.
  if [ -d "$LOCAL_CLUSTER_DIR" ] && [ "$has" != "$NODES" ]; then
    log "the dev cluster's nodes are not $NODES; restarting it"
    stop_operator
    "$ROOT/hack/local-cluster.sh" down
  fi
  if [ "$NODES" = real ]; then up+=(--real-node); fi
  if [ "$ENFORCEMENT" = plugin ]; then
    up+=(--spark-scheduler)
    if "$ROOT/hack/local-cluster.sh" status 2>/dev/null && [ ! -f "$LOCAL_CLUSTER_DIR/spark-scheduler" ]; then
      log "the dev cluster runs the stock kube-scheduler; restarting it with spark-scheduler for DEV_GANG_ENFORCEMENT=plugin"
      stop_operator
      "$ROOT/hack/local-cluster.sh" down
    fi
  fi
  kubeconfig=$("$ROOT/hack/local-cluster.sh" up "${up[@]}" | tail -n 1)
  export KUBECONFIG=$kubeconfig
  # CRDs may have changed since the cluster started.
  "$KUBECTL" apply --server-side --force-conflicts -f "$ROOT/charts/spark-operator/crds/" >/dev/null
  if [ "$MODE" = chart ]; then
    stop_operator # a local one of an earlier run
    remove_local_webhooks
    install_release
  else
    uninstall_release
    start_operator "$kubeconfig"
    # The example runs as this service account, which the chart creates.
    spark_role
  fi

  "$KUBECTL" delete sparkapplication spark-pi --ignore-not-found --wait >/dev/null
  # shellcheck disable=SC2016 # {{$appName}} is the operator's template, not the shell's
  local patch='"driverPodDisruptionBudget":true,"driverIngressOptions":[{"servicePort":4045,"servicePortName":"extra","ingressURLFormat":"{{$appName}}-extra.spark.localhost"}]'
  if [ "$NODES" = simulated ]; then
    patch+=",\"driver\":{\"annotations\":{\"kwok.sparkop.dev/run-seconds\":\"$RUN_SECONDS\"}}"
  fi
  "$KUBECTL" patch --local -f "$ROOT/examples/spark-pi.yaml" --type merge -o yaml -p "{\"spec\":{$patch}}" |
    "$KUBECTL" create -f - >/dev/null
  log "created examples/spark-pi.yaml asking for a driver PodDisruptionBudget and an extra driver port$([ "$NODES" = simulated ] && echo " (its driver \"runs\" ${RUN_SECONDS}s on the simulated nodes)")"
  follow_app spark-pi
  "$KUBECTL" get sparkapplication spark-pi >&2
  if [ "$NODES" = real ]; then
    local answer driver_log
    # Read whole before grep: grep -m1 ending first would fail the pipe (SIGPIPE, pipefail).
    driver_log=$("$ROOT/bin/sparkctl" log spark-pi) || die "sparkctl log spark-pi failed"
    answer=$(grep -m1 "Pi is roughly" <<<"$driver_log") || die "spark-pi's driver log has no \"Pi is roughly\" (sparkctl log spark-pi)"
    log "sparkctl log spark-pi: $answer"
  fi

  # A Spark Connect session; its server runs until deleted.
  "$KUBECTL" apply -f "$ROOT/examples/spark-connect.yaml" >/dev/null
  log "applied examples/spark-connect.yaml"
  follow_connect spark-connect
  "$KUBECTL" get sparkconnect spark-connect >&2
  if [ "$NODES" = real ]; then connect_query; fi
  # The session's server holds its reservation while it runs.
  "$KUBECTL" get reservations.scheduling.sparkop.dev >&2 || true
  cat >&2 <<EOF

The cluster and the operator keep running; stop them with: make dev-down
Every batch scheduler is enabled: to try one, start it on this cluster with
  LOCAL_CLUSTER_DIR=$LOCAL_CLUSTER_DIR hack/local-cluster.sh volcano|yunikorn|coscheduling|kueue
$([ "$MODE" = chart ] && echo "The operator's logs: kubectl -n $RELEASE_NS logs deploy/$RELEASE-controller (and -webhook)")
Use them with kubectl or sparkctl:
EOF
  echo "export KUBECONFIG=$kubeconfig"
}

cmd_down() {
  stop_operator
  if "$ROOT/hack/local-cluster.sh" status >/dev/null 2>&1; then uninstall_release; fi
  "$ROOT/hack/local-cluster.sh" down
  rm -rf "$DEV"
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
