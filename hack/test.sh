#!/usr/bin/env bash
# What `make test` runs, step by step, each step's time printed as it ends and all of them in a
# summary at the end, with the slowest test packages (hack/testreport):
#
#   hack/test.sh          generated files current, lint, the binaries (built once per machine),
#                         the local control plane, then every test
#   hack/test.sh logs     the tails of the shared test cluster's component logs and of the
#                         background build's log: what .ci/run prints when a run fails
#
# Volcano and YuniKorn (from ../shared/third_party) build in the background while the tests
# before test/batchschedulers run; that package waits for them (a lock per build), and the run
# waits for the background build at the end: its failure fails the run.
# GO_TEST_FLAGS (from the Makefile) are go test's flags.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
GO_TEST_FLAGS=${GO_TEST_FLAGS:--count=1 -p 1 -timeout 40m}
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
    cat "$CACHE"/test-*.json | "$CACHE/bin/testreport" -summary-only -label "both modules" || true
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
# through the report, which keeps the stream in $CACHE/test-LABEL.json.
go_tests() {
  local dir=$1 label=$2 packages=$3; shift 3
  [ -n "$packages" ] || return 0
  # shellcheck disable=SC2086 # one argument per package
  (cd "$dir" && go test -json "$@" $packages) |
    "$CACHE/bin/testreport" -quiet -label "$label" -json-out "$CACHE/test-$label.json"
}

# Each module's packages fall in two sets: those whose tests need no local control plane
# (hack/lint.sh race-packages), run side by side with the race detector on; and the rest, run
# one package at a time against the cluster with GO_TEST_FLAGS (the Makefile says why -p 1).
unit_packages() { hack/lint.sh race-packages "$1"; }
cluster_packages() { comm -23 <(cd "$1" && go list ./... | sort) <(unit_packages "$1" | sort); }

# module_tests DIR LABEL: both sets of the module in DIR.
module_tests() {
  local dir=$1 label=$2 unit cluster
  unit=$(unit_packages "$dir")
  cluster=$(cluster_packages "$dir")
  # shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
  step "tests of $label without the cluster (-race, $(wc -l <<<"$unit") packages)" \
    go_tests "$dir" "$label-unit" "$unit" -race -count=1 -timeout 20m
  # shellcheck disable=SC2086
  step "tests of $label against the cluster ($(grep -c . <<<"$cluster") packages)" \
    go_tests "$dir" "$label-cluster" "$cluster" $GO_TEST_FLAGS
}

start_background_build() {
  mkdir -p "$CACHE"
  setsid hack/local-cluster.sh build-batch-schedulers >"$BACKGROUND_LOG" 2>&1 </dev/null &
  BACKGROUND=$!
  log "building Volcano and YuniKorn in the background (log: $BACKGROUND_LOG)"
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
  step "generated files current" make --no-print-directory verify-generated
  step "lint" make --no-print-directory lint
  step "binaries and the control plane" make --no-print-directory cluster-up
  step "spark-submit (pyspark)" hack/install-spark.sh >/dev/null
  # What test/realnode's and test/helm's clusters need: the real node's binaries, the Spark
  # image, the operator's image (test/helm installs the chart with it), and the Spark Connect
  # client test/realnode's query runs with.
  step "the real node's binaries" hack/local-cluster.sh build --with-real-node
  step "the Spark image" hack/spark-image.sh build >/dev/null
  step "the operator image" hack/operator-image.sh build >/dev/null
  step "Spark Connect client (pyspark-client)" hack/install-spark.sh connect-client >/dev/null
  start_background_build
  step "test report tool" go build -o "$CACHE/bin/testreport" ./hack/testreport
  module_tests . main
  module_tests cmd/spark-scheduler spark-scheduler
  step "background build of Volcano and YuniKorn" wait_background_build
}

# cmd_logs: the last lines of each log a failed run may need.
cmd_logs() {
  local f
  for f in "${LOCAL_CLUSTER_DIR:-$CACHE/local-cluster}"/logs/*.log "$BACKGROUND_LOG"; do
    [ -f "$f" ] || continue
    printf '\n===== %s (last 40 lines)\n' "$f"
    tail -n 40 "$f"
  done
}

case ${1:-all} in
  all) cmd_all ;;
  logs) cmd_logs ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
