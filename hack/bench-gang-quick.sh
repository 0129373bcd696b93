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
#
# BENCH_QUICK_BASELINE, the folder of another checkout with its bin/bench and bin/spark-operator
# built (git worktree add DIR REV; make -C DIR build; go build -o DIR/bin/bench ./test/bench),
# adds to each round a run of gang by that build, so that a change is compared with what it
# changed on the same cluster and hour: its lines go to .cache/bench-gang-quick-baseline.log and
# its spread is printed after the others'.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
APPS=${BENCH_QUICK_APPS:-30}
NODES=${BENCH_QUICK_NODES:-10}
RUNS=${BENCH_QUICK_RUNS:-3}
SCHEDULERS=${BENCH_QUICK_SCHEDULERS:-gang volcano yunikorn kube-scheduler kueue kueue-alone}
# A run that has not finished by then is cut short and reported as it stands (unfinished
# applications count against its scheduler).
RUN_TIMEOUT=${BENCH_QUICK_TIMEOUT:-6m}
export LOCAL_CLUSTER_DIR=$CACHE/bench-gang-quick-cluster
LOG=$CACHE/bench-gang-quick.log
BASELINE=${BENCH_QUICK_BASELINE:-}
BASELINE_LOG=$CACHE/bench-gang-quick-baseline.log
cd "$ROOT"

log() { printf '[bench-gang-quick] %s\n' "$*" >&2; }

# The hack/local-cluster.sh command that starts scheduler $1 on the cluster (none for gang).
starter() {
  case $1 in
    gang) ;;
    kube-scheduler) echo coscheduling ;;
    volcano | yunikorn | kueue) echo "$1" ;;
    kueue-alone) echo kueue ;;
    *) log "BENCH_QUICK_SCHEDULERS: unknown scheduler '$1' (gang, volcano, yunikorn, kube-scheduler, kueue or kueue-alone)"; exit 2 ;;
  esac
}

for s in $SCHEDULERS; do starter "$s" >/dev/null; done
[ -x bin/bench ] || { log "bin/bench is missing: run it through make bench-gang-quick"; exit 2; }
if [ -n "$BASELINE" ]; then
  BASELINE=$(cd "$BASELINE" && pwd)
  [ -x "$BASELINE/bin/bench" ] && [ -x "$BASELINE/bin/spark-operator" ] ||
    { log "BENCH_QUICK_BASELINE: no bin/bench and bin/spark-operator built in $BASELINE"; exit 2; }
fi

started=$SECONDS
kc=$(hack/local-cluster.sh up --nodes "$NODES" | tail -n 1)
trap 'hack/local-cluster.sh down >/dev/null 2>&1 || true' EXIT
for cmd in $(for s in $SCHEDULERS; do starter "$s"; done | sort -u); do
  hack/local-cluster.sh "$cmd"
done
log "cluster and schedulers ready in $((SECONDS - started)) s"

# One run of the gang scenario through scheduler $2, by the build in folder $1, its lines
# added to log $3.
status=0
run() {
  local t=$SECONDS
  if ! (cd "$1" && bin/bench --kubeconfig "$kc" --scenario gang --scheduler "$2" --apps "$APPS" --webhook \
    --timeout "$RUN_TIMEOUT") | tee -a "$3"; then
    log "round $round, $2 ($1): the run failed"
    status=1
  fi
  log "round $round, $2 ($1): $((SECONDS - t)) s"
}

: >"$LOG"
[ -z "$BASELINE" ] || : >"$BASELINE_LOG"
for round in $(seq 1 "$RUNS"); do
  for s in $SCHEDULERS; do
    log "round $round of $RUNS: $s"
    run "$ROOT" "$s" "$LOG"
  done
  if [ -n "$BASELINE" ]; then
    log "round $round of $RUNS: gang by the baseline"
    run "$BASELINE" gang "$BASELINE_LOG"
  fi
done
log "all rounds in $((SECONDS - started)) s ($RUNS rounds of $APPS applications on $NODES nodes)"
bin/bench --scenario spread "$LOG"
if [ -n "$BASELINE" ]; then
  echo
  echo "The baseline, $BASELINE ($(git -C "$BASELINE" rev-parse --short HEAD 2>/dev/null || echo '?')):"
  bin/bench --scenario spread "$BASELINE_LOG"
fi
exit $status
