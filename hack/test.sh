#!/usr/bin/env bash
# What `make test` runs, step by step, each step's time printed as it ends and all of them in a
# summary at the end, with the slowest test packages and tests (hack/testreport):
#
#   hack/test.sh          generated files current, lint, the binaries (built once per machine),
#                         the local control plane, then every test
#   hack/test.sh logs     the tails of the shared test cluster's component logs and of the
#                         background build's log: what .ci/run prints when a run fails
#
#   hack/test.sh down     stops every shared test cluster a run started
#
# The batch schedulers (scheduler-plugins and Kueue from the module proxy, Volcano and YuniKorn
# from ../shared/third_party) build in the background from the first step on, filling the CPU the
# other builds leave (links, downloads, the image's debootstrap); test/batchschedulers waits for
# them (a lock per build), and the run waits for the background build at the end: its failure
# fails the run.
#
# GO_TEST_FLAGS (from the Makefile) are go test's flags; TEST_PARALLEL is how many packages run
# against clusters at once, each shared-cluster package with a cluster of its own (test/cluster's
# SPARKOP_TEST_CLUSTERS).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
GO_TEST_FLAGS=${GO_TEST_FLAGS:--count=1 -timeout 40m}
TEST_PARALLEL=${TEST_PARALLEL:-2}
MODULE=github.com/sparkop/spark-operator
# Everything is built without cgo, as the operator's image is (hack/operator-image.sh), so that
# lint, the tests against the cluster and the image share one compilation of the modules and
# their dependencies; only the race detector, which needs cgo, builds its own.
export CGO_ENABLED=0
# The JVMs of spark-submit that the tests start on this machine (the operator's spark-submit
# mode, test/equivalence) compile with C1 only and collect with one thread: a submission takes
# about 6 CPU-seconds instead of 10, and makes the same pods. The drivers' and executors' JVMs
# take their options from the applications, not from this.
export SPARK_SUBMIT_OPTS=${SPARK_SUBMIT_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}
# Two packages run beside the others, each in two halves (go test processes side by side) whose
# tests start clusters of their own, as PACKAGE=REGEXP: the tests REGEXP names, and the rest.
# test/realnode, by far the longest package, each half with a real-node cluster of its own: what
# a real node does to a failing application and Spark Connect, and the rest. test/batchschedulers,
# mostly waits on simulated pods: Kueue and YuniKorn, and the rest (Volcano, coscheduling); a
# scheduler's tests stay in one half, so that no two of its instances run at once.
HALVES=(
  'test/realnode=^(TestRealFailures|TestExecutorLost|TestNodeLost|TestRuntimeRestart|TestDriverFailures|TestSparkConnect|TestSparkConnectDynamicAllocation)$'
  'test/batchschedulers=^(TestKueue|TestYuniKorn|TestShapesYuniKorn)$'
)
# The other packages against the cluster that take more than a few seconds, slowest first (from
# the run summary): started first, so the run ends on packages of seconds, not waiting for one
# of minutes alone.
SLOWEST=(test/helm test/gang test/equivalence test/workloadapi test/e2e webhook
  test/cluster controllers/sparkapplication test/hostile test/chart sparkctl test/sparkconnect)

BACKGROUND_LOG=$CACHE/batch-schedulers-build.log
cd "$ROOT"

log() { printf '[test] %s\n' "$*" >&2; }

STEPS=()
STARTED=$SECONDS
BACKGROUND=

# summary: every step's time and the whole run's, then the slowest test packages and the
# counts over both modules (the last line: "tests: N passed, N failed, N skipped").
summary() {
  local s
  log "steps:"
  for s in "${STEPS[@]}"; do log "  $s"; done
  log "total $((SECONDS - STARTED))s"
  if [ -x "$CACHE/bin/testreport" ] && compgen -G "$CACHE/test-*.json" >/dev/null; then
    cat "$CACHE"/test-*.json | "$CACHE/bin/testreport" -summary-only -slowest-tests 10 -label "both modules" || true
  fi
}

# finish: on any exit, stop a background build still running (a failed run leaves nothing
# behind) and print the summary.
finish() {
  local status=$?
  if [ -n "$BACKGROUND" ] && kill -0 "$BACKGROUND" 2>/dev/null; then
    log "stopping the background build of the batch schedulers"
    kill -- "-$BACKGROUND" 2>/dev/null || true
  fi
  summary
  [ $status = 0 ] || log "FAILED (exit $status); hack/test.sh logs prints the cluster's component logs"
  exit $status
}

# step NAME COMMAND...: runs COMMAND, then prints and records how long it took.
step() {
  local name=$1 started=$SECONDS status=0; shift
  log "$name ..."
  "$@" || status=$?
  STEPS+=("$(printf '%5ds  %s%s' $((SECONDS - started)) "$name" "$([ $status = 0 ] || echo " (FAILED, exit $status)")")")
  log "$name: $((SECONDS - started))s$([ $status = 0 ] || echo ", FAILED (exit $status)")"
  return $status
}

# go_tests DIR LABEL PACKAGES FLAGS...: go test on PACKAGES (one a line) of the module in DIR,
# through the report, which keeps the stream in $CACHE/test-LABEL.json. The test binaries are
# linked without DWARF (-w; stack traces do not need it): a fifth less CPU a link, ~75 links.
go_tests() {
  local dir=$1 label=$2 packages=$3; shift 3
  [ -n "$packages" ] || return 0
  # shellcheck disable=SC2086 # one argument per package
  (cd "$dir" && go test -json -ldflags=-w "$@" $packages) |
    "$CACHE/bin/testreport" -quiet -label "$label" -json-out "$CACHE/test-$label.json"
}

# Each module's packages fall in two sets: those whose tests need no local control plane
# (hack/lint.sh race-packages), run side by side with the race detector on; and the rest, run
# TEST_PARALLEL at a time against clusters with GO_TEST_FLAGS, the slowest first (HALVES'
# packages beside them). A package
# that uses the shared cluster takes one of TEST_PARALLEL shared clusters for itself while it
# runs (the Makefile says why); the others start clusters of their own.
unit_packages() { hack/lint.sh race-packages "$1"; }
cluster_packages() {
  local all p
  all=$(comm -23 <(cd "$1" && go list ./... | sort) <(unit_packages "$1" | sort))
  for p in "${SLOWEST[@]}"; do grep -x "$MODULE/$p" <<<"$all" || true; done
  grep -vxF -f <(printf "$MODULE/%s\n" "${SLOWEST[@]}") <<<"$all" || true
}

# module_tests DIR LABEL: both sets of the module in DIR.
module_tests() {
  local dir=$1 label=$2 unit cluster
  unit=$(unit_packages "$dir")
  cluster=$(cluster_packages "$dir")
  # Each of these packages takes seconds: a hang fails within 5 minutes, not 20 of CI's 90.
  # shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
  CGO_ENABLED=1 step "tests of $label without the cluster (-race, $(wc -l <<<"$unit") packages)" \
    go_tests "$dir" "$label-unit" "$unit" -race -count=1 -timeout 5m
  export SPARKOP_TEST_CLUSTERS=$TEST_PARALLEL
  step "tests of $label against the cluster ($(grep -c . <<<"$cluster") packages, $TEST_PARALLEL at a time)" \
    cluster_tests "$dir" "$label" "$cluster"
}

# cluster_tests DIR LABEL PACKAGES: PACKAGES TEST_PARALLEL at a time, and the two halves of
# each of HALVES' packages beside them (when PACKAGES has it).
cluster_tests() {
  local dir=$1 label=$2 cluster=$3 pids=() status=0 pid half pkg run name
  for half in "${HALVES[@]}"; do
    pkg=${half%%=*} run=${half#*=} name=$(basename "${half%%=*}")
    grep -qx "$MODULE/$pkg" <<<"$cluster" || continue
    cluster=$(grep -vx "$MODULE/$pkg" <<<"$cluster")
    # shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
    go_tests "$dir" "$label-$name-1" "$MODULE/$pkg" $GO_TEST_FLAGS -run "$run" &
    pids+=($!)
    # shellcheck disable=SC2086
    go_tests "$dir" "$label-$name-2" "$MODULE/$pkg" $GO_TEST_FLAGS -skip "$run" &
    pids+=($!)
  done
  # shellcheck disable=SC2086
  go_tests "$dir" "$label-cluster" "$cluster" $GO_TEST_FLAGS -p "$TEST_PARALLEL" || status=$?
  for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" || status=$?; done
  return $status
}

start_background_build() {
  mkdir -p "$CACHE"
  setsid hack/local-cluster.sh build-batch-schedulers >"$BACKGROUND_LOG" 2>&1 </dev/null &
  BACKGROUND=$!
  log "building the batch schedulers in the background (log: $BACKGROUND_LOG)"
}

wait_background_build() {
  local status=0
  wait "$BACKGROUND" || status=$?
  BACKGROUND=
  if [ $status != 0 ]; then
    tail -n 30 "$BACKGROUND_LOG" >&2
    return $status
  fi
}

cmd_all() {
  rm -f "$CACHE"/test-*.json
  trap finish EXIT
  start_background_build
  step "generated files current" make --no-print-directory verify-generated
  step "lint" make --no-print-directory lint
  # The batch schedulers build in the background (above).
  step "binaries and the control plane" hack/local-cluster.sh build --with-helm --with-cert-manager --with-spark-scheduler
  step "the shared test cluster" hack/local-cluster.sh up
  step "spark-submit (pyspark)" hack/install-spark.sh >/dev/null
  # What test/realnode's and test/helm's clusters need: the real node's binaries, the Spark
  # image, the operator's images (test/helm installs the chart with them: the spark-submit
  # mode's too), and the Spark Connect client test/realnode's query runs with.
  step "the real node's binaries" hack/local-cluster.sh build --with-real-node
  step "the Spark image" hack/spark-image.sh build >/dev/null
  step "the operator image" hack/operator-image.sh build >/dev/null
  step "the operator image for spark-submit" hack/operator-image.sh build --spark-submit >/dev/null
  step "Spark Connect client (pyspark-client)" hack/install-spark.sh connect-client >/dev/null
  step "test report tool" go build -o "$CACHE/bin/testreport" ./hack/testreport
  # The operator and sparkctl that the tests run as processes, linked once for every test
  # process of the run (test/cluster's BinariesEnv), not once by each.
  step "the operator and sparkctl for the tests" go build -ldflags=-w -o "$CACHE/test-bin/" ./cmd/spark-operator ./cmd/sparkctl
  export SPARKOP_TEST_BINARIES=$CACHE/test-bin
  module_tests . main
  module_tests cmd/spark-scheduler spark-scheduler
  step "background build of the batch schedulers" wait_background_build
}

# shared_states: the state folders of the shared test clusters (test/cluster's slots).
shared_states() {
  local base=${LOCAL_CLUSTER_DIR:-$CACHE/local-cluster} d
  for d in "$base" "$base"-[0-9]*; do [ -d "$d" ] && echo "$d"; done
  return 0
}

# cmd_down: stops every shared test cluster.
cmd_down() {
  local d
  for d in $(shared_states); do LOCAL_CLUSTER_DIR=$d hack/local-cluster.sh down; done
}

# cmd_logs: the last lines of each log a failed run may need.
cmd_logs() {
  local d f
  for f in $(for d in $(shared_states); do echo "$d"/logs/*.log; done) "$BACKGROUND_LOG"; do
    [ -f "$f" ] || continue
    printf '\n===== %s (last 40 lines)\n' "$f"
    tail -n 40 "$f"
  done
}

case ${1:-all} in
  all) cmd_all ;;
  logs) cmd_logs ;;
  down) cmd_down ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
