# shellcheck shell=bash
# The optional components of the local control plane that start on demand on a running cluster,
# sourced by hack/local-cluster.sh:
#
#   hack/local-cluster.sh cert-manager   cert-manager's CRDs and cert-manager-lite (its SelfSigned
#                                        and CA issuers' controllers and its cainjector; no webhook)
#   hack/local-cluster.sh coscheduling   scheduler-plugins' PodGroup and ElasticQuota CRDs, its
#                                        kube-scheduler (Coscheduling) as a second scheduler, and
#                                        its PodGroup controller
#   hack/local-cluster.sh kueue          Kueue's CRDs and its manager (SparkApplication integration
#                                        on), its webhooks registered by URL
#
# Each is built from its module under hack/tools/ into the store once (`build --with-cert-manager`,
# `--with-coscheduling`, `--with-kueue` build them ahead); `down` stops what they start (EXTRAS).
# Volcano and YuniKorn, which are built from release tarballs, are hack/batch-schedulers.sh's.

# What the on-demand commands start; `down` stops them before the components.
EXTRAS=(cert-manager-lite kueue kube-scheduler-plugins scheduler-plugins-controller)

# stop_cluster_extras: stops whichever of them runs (`down`).
stop_cluster_extras() {
  local extra
  for extra in "${EXTRAS[@]}"; do stop "$extra"; done
}

# ---------------------------------------------------------------------------------------------
# Build

# cert-manager-lite is our own main (hack/tools/cert-manager/main.go) around the controllers and
# cainjector of the pinned cert-manager module: its cmd/ modules are not published.
build_cert_manager() { build_module cert-manager cert-manager-lite=.; }

# scheduler-plugins' kube-scheduler (the stock one with its plugins compiled in) and controller.
build_coscheduling() {
  build_module scheduler-plugins kube-scheduler-plugins=sigs.k8s.io/scheduler-plugins/cmd/scheduler \
    scheduler-plugins-controller=sigs.k8s.io/scheduler-plugins/cmd/controller
}

build_kueue() { build_module kueue kueue=sigs.k8s.io/kueue/cmd/kueue; }

# ---------------------------------------------------------------------------------------------
# cert-manager (optional)

# cmd_cert_manager: installs the CRDs of the pinned cert-manager and starts cert-manager-lite
# against the running cluster, logging to logs/cert-manager-lite.log; nothing when it runs.
# The CRDs are the plain ones of the module's deploy/crds, without the conversion webhook.
cmd_cert_manager() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up\` first"
  if running cert-manager-lite; then
    log "cert-manager-lite is already running in $STATE"
    echo "$STATE/kubeconfig"
    return 0
  fi
  build_cert_manager
  log "installing cert-manager's CRDs"
  local cmdir; cmdir=$(cd "$TOOLS/cert-manager" && go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
  kctl apply --server-side -f "$cmdir/deploy/crds/" >/dev/null
  kctl wait --for condition=Established crd --all --timeout 60s >/dev/null
  start cert-manager-lite --kubeconfig "$STATE/kubeconfig" --v=2
  # It has no health endpoint: it waits for the CRDs, then starts its controllers; a wrong flag
  # or kubeconfig makes it exit at once.
  sleep 1
  running cert-manager-lite || die "cert-manager-lite exited during start-up (log: $STATE/logs/cert-manager-lite.log)"
  log "cert-manager-lite is running (log: $STATE/logs/cert-manager-lite.log)"
  echo "$STATE/kubeconfig"
}

# ---------------------------------------------------------------------------------------------
# Coscheduling (optional): scheduler-plugins as a second scheduler

# The kube-scheduler profile name of the Coscheduling scheduler: what the Kubeflow operator's
# example names in spec.batchScheduler, and the operator's --kube-scheduler-names.
COSCHEDULING_NAME=kube-scheduler

# cmd_coscheduling: installs the PodGroup and ElasticQuota CRDs of the pinned scheduler-plugins
# (from its module's manifests; its controller watches both) and starts its kube-scheduler with
# one profile running Coscheduling, beside the stock scheduler, and its controller, which keeps
# PodGroup status; nothing when they run.
cmd_coscheduling() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up\` first"
  if running kube-scheduler-plugins && running scheduler-plugins-controller; then
    log "coscheduling is already running in $STATE"
    echo "$STATE/kubeconfig"
    return 0
  fi
  stop kube-scheduler-plugins
  stop scheduler-plugins-controller
  build_coscheduling
  log "installing scheduler-plugins' PodGroup and ElasticQuota CRDs"
  local spdir; spdir=$(cd "$TOOLS/scheduler-plugins" && go list -m -f '{{.Dir}}' sigs.k8s.io/scheduler-plugins)
  kctl apply --server-side -f "$spdir/manifests/coscheduling/crd.yaml" -f "$spdir/manifests/capacityscheduling/crd.yaml" >/dev/null
  # Retried: `kubectl wait` fails at once on a CRD whose status has no conditions yet.
  wait_for 60 "scheduler-plugins' CRDs" kctl wait --for condition=Established crd/podgroups.scheduling.x-k8s.io \
    crd/elasticquotas.scheduling.x-k8s.io --timeout 10s
  local kc=$STATE/kubeconfig port probe
  read -r port probe <<<"$(free_ports 2)"
  # Coscheduling sorts the queue by pod group and holds pods at Permit until their group's
  # minMember are there; its PreFilter lets a group's first pod through only when the cluster's
  # free capacity covers the group's minResources.
  cat > "$STATE/coscheduling.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $kc
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
profiles:
- schedulerName: $COSCHEDULING_NAME
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
EOF
  start kube-scheduler-plugins --config "$STATE/coscheduling.yaml" --authentication-kubeconfig "$kc" \
    --authorization-kubeconfig "$kc" --bind-address 127.0.0.1 --secure-port "$port"
  start scheduler-plugins-controller --kubeconfig "$kc" --metricsAddr 0 --probeAddr "127.0.0.1:$probe" --qps 100 --burst 200
  wait_for 60 "scheduler-plugins' kube-scheduler" curl -skf "https://127.0.0.1:$port/healthz"
  wait_for 60 "scheduler-plugins' controller" curl -sf "http://127.0.0.1:$probe/readyz"
  running kube-scheduler-plugins || die "kube-scheduler-plugins exited during start-up (log: $STATE/logs/kube-scheduler-plugins.log)"
  log "coscheduling is running: schedulerName $COSCHEDULING_NAME (logs: $STATE/logs/kube-scheduler-plugins.log, scheduler-plugins-controller.log)"
  echo "$STATE/kubeconfig"
}

# ---------------------------------------------------------------------------------------------
# Kueue (optional)

# cmd_kueue: installs the CRDs of the pinned Kueue (its module's config/components/crd/bases)
# and runs its manager against the cluster with the SparkApplication integration alone. It runs
# outside the cluster, so its webhooks are registered by URL (https://127.0.0.1:PORT) with a
# serving certificate from the cluster's CA, made here; Kueue's internal certificate management
# (which names an in-cluster Service) is off. Only the webhooks of Kueue's own kinds and of
# SparkApplications are registered: the integrations that are off serve none.
cmd_kueue() {
  healthy || die "no healthy cluster in $STATE; run \`$0 up\` first"
  if running kueue; then
    log "kueue is already running in $STATE"
    echo "$STATE/kubeconfig"
    return 0
  fi
  build_kueue
  log "installing Kueue's CRDs"
  local kdir; kdir=$(cd "$TOOLS/kueue" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
  kctl apply --server-side -f "$kdir/config/components/crd/bases/" >/dev/null
  wait_for 60 "Kueue's CRDs" kctl wait --for condition=Established crd/clusterqueues.kueue.x-k8s.io \
    crd/localqueues.kueue.x-k8s.io crd/workloads.kueue.x-k8s.io crd/resourceflavors.kueue.x-k8s.io --timeout 10s
  kctl get namespace kueue-system >/dev/null 2>&1 || kctl create namespace kueue-system >/dev/null

  local d=$STATE/kueue kc=$STATE/kubeconfig pki=$STATE/pki port probe metrics
  mkdir -p "$d/certs"
  read -r port probe metrics <<<"$(free_ports 3)"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kueue-webhook" -keyout "$d/certs/tls.key" -out "$d/certs/tls.csr" 2>/dev/null
  openssl x509 -req -in "$d/certs/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 3650 \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n') -out "$d/certs/tls.crt" 2>/dev/null
  cat > "$d/config.yaml" <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$probe
metrics:
  bindAddress: 127.0.0.1:$metrics
webhook:
  host: 127.0.0.1
  port: $port
  certDir: $d/certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
clientConnection:
  qps: 100
  burst: 200
integrations:
  frameworks:
  - sparkoperator.k8s.io/sparkapplication
EOF
  python3 - "$kdir/config/components/webhook/manifests.yaml" "$port" "$pki/ca.crt" > "$d/webhooks.yaml" <<'PY'
import base64, sys, yaml
manifests, port, ca = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
out = []
for doc in yaml.safe_load_all(open(manifests)):
    if not doc:
        continue
    kept = []
    for wh in doc.get("webhooks", []):
        rules = wh.get("rules", [])
        if not any("kueue.x-k8s.io" in r.get("apiGroups", []) or "sparkapplications" in r.get("resources", []) for r in rules):
            continue
        path = wh["clientConfig"]["service"]["path"]
        wh["clientConfig"] = {"url": "https://127.0.0.1:%s%s" % (port, path), "caBundle": base64.b64encode(ca).decode()}
        kept.append(wh)
    doc["metadata"]["name"] = "kueue-" + doc["metadata"]["name"]
    doc["webhooks"] = kept
    out.append(doc)
yaml.safe_dump_all(out, sys.stdout)
PY
  # With its internal certificate management off, Kueue reads its metrics server's certificate
  # from a fixed path, /etc/kueue/metrics/certs: it runs in a mount namespace of its own where that
  # path is this cluster's certificate folder. Only the empty mount point is left in /etc.
  mkdir -p /etc/kueue/metrics/certs || die "cannot make the mount point /etc/kueue/metrics/certs (needs root, as CI has)"
  log "starting kueue"
  # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
  setsid unshare --mount -- sh -c 'mount --bind "$0" /etc/kueue/metrics/certs && exec "$@"' "$d/certs" \
    "$BIN/kueue" --config "$d/config.yaml" --kubeconfig "$kc" --visibility-server-port 0 \
    --feature-gates SparkApplicationIntegration=true,VisibilityOnDemand=false --zap-log-level 2 \
    </dev/null >"$STATE/logs/kueue.log" 2>&1 9>&- &
  echo $! > "$(pidfile kueue)"
  wait_for 90 "Kueue to be ready" curl -sf "http://127.0.0.1:$probe/readyz"
  # Registered once Kueue serves them: with failurePolicy Fail they would refuse every
  # SparkApplication until then.
  wait_for 60 "Kueue's webhook server" curl -sk -o /dev/null "https://127.0.0.1:$port/"
  kctl apply --server-side --force-conflicts -f "$d/webhooks.yaml" >/dev/null
  running kueue || die "kueue exited during start-up (log: $STATE/logs/kueue.log)"
  log "kueue is running (log: $STATE/logs/kueue.log)"
  echo "$STATE/kubeconfig"
}
