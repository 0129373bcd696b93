#!/usr/bin/env bash
# What `make bench-gang-quick` runs: the cross-scheduler comparison of `make bench-gang` made
# small enough for three rounds in under an hour on 2 cores. A cluster of its own
# (.cache/bench-gang-quick-cluster, stopped after) with BENCH_QUICK_NODES kwok nodes of 16 CPU
# and every batch scheduler the comparison needs started on it (hack/local-cluster.sh volcano,
# yunikorn, coscheduling, kueue); then BENCH_QUICK_RUNS rounds, each one run of the gang
# scenario per scheduler of BENCH_QUICK_SCHEDULERS in turn (the same mixed applications,
# BENCH_QUICK_APPS of them, created at once), so that a slower hour of the machine falls on every
# scheduler alike. Every RESULT line goes to .cache/bench-gang-quick.log and to the output; the
# end is their spread as a Markdown table (bin/bench --scenario spread). A run that fails is
# reported and the rounds go on; the script then exits non-zero.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
APPS=${BENCH_QUICK_APPS:-30}
NODES=${BENCH_QUICK_NODES:-10}
RUNS=${BENCH_QUICK_RUNS:-3}
SCHEDULERS=${BENCH_QUICK_SCHEDULERS:-gang volcano yunikorn kube-scheduler kueue}
# A run that has not finished by then is cut short and reported as it stands (unfinished
# applications count against its scheduler).
RUN_TIMEOUT=${BENCH_QUICK_TIMEOUT:-6m}
export LOCAL_CLUSTER_DIR=$CACHE/bench-gang-quick-cluster
LOG=$CACHE/bench-gang-quick.log
cd "$ROOT"

log() { printf '[bench-gang-quick] %s\n' "$*" >&2; }

# The hack/local-cluster.sh command that starts scheduler $1 on the cluster (none for gang).
starter() {
  case $1 in
    gang) ;;
    kube-scheduler) echo coscheduling ;;
    volcano | yunikorn | kueue) echo "$1" ;;
    *) log "BENCH_QUICK_SCHEDULERS: unknown scheduler '$1' (gang, volcano, yunikorn, kube-scheduler or kueue)"; exit 2 ;;
  esac
}

for s in $SCHEDULERS; do starter "$s" >/dev/null; done
[ -x bin/bench ] || { log "bin/bench is missing: run it through make bench-gang-quick"; exit 2; }

started=$SECONDS
kc=$(hack/local-cluster.sh up --nodes "$NODES" | tail -n 1)
trap 'hack/local-cluster.sh down >/dev/null 2>&1 || true' EXIT
for s in $SCHEDULERS; do
  cmd=$(starter "$s")
  [ -z "$cmd" ] || hack/local-cluster.sh "$cmd"
done
log "cluster and schedulers ready in $((SECONDS - started)) s"

: >"$LOG"
status=0
for round in $(seq 1 "$RUNS"); do
  for s in $SCHEDULERS; do
    log "round $round of $RUNS: $s"
    t=$SECONDS
    if ! bin/bench --kubeconfig "$kc" --scenario gang --scheduler "$s" --apps "$APPS" --webhook \
      --timeout "$RUN_TIMEOUT" | tee -a "$LOG"; then
      log "round $round, $s: the run failed"
      status=1
    fi
    log "round $round, $s: $((SECONDS - t)) s"
  done
done
log "all rounds in $((SECONDS - started)) s ($RUNS rounds of $APPS applications on $NODES nodes)"
bin/bench --scenario spread "$LOG"
exit $status
