#!/usr/bin/env bash
# Builds the operator's image, the one the Helm chart runs, with no Docker engine and no image
# registry: static Go binaries (CGO_ENABLED=0; the operator embeds time zones, time/tzdata) on
# an empty base, as the Dockerfile at the repository's root makes it:
#   /usr/local/bin/spark-operator   the controller and the webhook (the chart's two Deployments)
#   /usr/local/bin/sparkctl
#   /usr/local/bin/spark-scheduler  kube-scheduler with the SparkReservations plugin (sparkScheduler.enable)
# running as 65532:65532 with spark-operator as its entrypoint. It is named as the chart's
# defaults name it (image.registry/image.repository, tag the chart's appVersion), so that a
# `helm install` with default values runs it (pullPolicy IfNotPresent: nothing is pulled).
# This image submits natively (controller.submissionMode native, the chart's default). With
# --spark-submit, the image of the spark-submit mode instead: the same binaries on the Spark
# image (hack/spark-image.sh: Debian, Java 17, Spark, SPARK_HOME=/opt/spark), running as its
# spark user (185), tagged <tag>-spark-submit, the tag the chart gives the controller in that
# mode. hack/tools/ociimage packs either as a docker-archive tarball for `ctr images import`.
#
#   hack/operator-image.sh build [--spark-submit]   build once (cached in the store by content)
#                                                   and print the tarball's path
#   hack/operator-image.sh stamp [--spark-submit]   print the build's stamp, the fingerprint of
#                                                   all it is built from
#   hack/operator-image.sh ref [--spark-submit]     print the image's reference (from the chart)
#   hack/operator-image.sh import [--spark-submit]  build, and import it into the real node of
#                                                   the cluster in LOCAL_CLUSTER_DIR
#                                                   (hack/local-cluster.sh import-image)
#
# The binaries are built into the store ($STORE/bin, hack/store.sh) and the tarball kept in
# $STORE/images/operator-STAMP.tar (operator-spark-submit-STAMP.tar); tarballs of other stamps
# unused for 7 days are removed. The spark-submit image needs what hack/spark-image.sh needs (root).
# A first build compiles everything without cgo (a few minutes); later ones only what changed.
#
# Environment: SPARKOP_STORE and SPARKOP_CACHE, as hack/local-cluster.sh (hack/store.sh).
set -euo pipefail
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
BIN=$CACHE/bin
CHART=$ROOT/charts/spark-operator
# The image's user: distroless' nonroot, which the chart's runAsNonRoot accepts.
IMAGE_USER=65532:65532
# The spark-submit image's user: the Spark image's spark user (hack/spark-image.sh SPARK_UID),
# whose home Spark's JVM finds in /etc/passwd.
SPARK_SUBMIT_USER=185:185
# The spark-submit image's tag is the image's with this suffix (the chart's
# spark-operator.controller.image names it so).
SPARK_SUBMIT_SUFFIX=-spark-submit
PRUNE_DAYS=7

log() { printf '[operator-image] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=hack/store.sh
source "$ROOT/hack/store.sh"

IMAGES=$STORE/images

# chart_value KEY: the chart's default image.KEY (values.yaml), unquoted.
chart_value() {
  awk -v key="$1:" '/^image:/ { in_image = 1; next } in_image && /^[^ #]/ { in_image = 0 }
    in_image && $1 == key { v = $2; gsub(/"/, "", v); print v; exit }' "$CHART/values.yaml"
}

# image_ref: the reference a default install of the chart runs: registry/repository:tag, the
# tag the chart's appVersion unless values.yaml sets one.
image_ref() {
  local registry repository tag
  registry=$(chart_value registry)
  repository=$(chart_value repository)
  tag=$(chart_value tag)
  [ -n "$tag" ] || tag=$(awk '$1 == "appVersion:" { v = $2; gsub(/"/, "", v); print v }' "$CHART/Chart.yaml")
  [ -n "$repository" ] && [ -n "$tag" ] || die "could not read image.repository and the tag from $CHART"
  echo "${registry:+$registry/}$repository:$tag"
}

# go_static OUT ENTRY...: each ENTRY (BINARY=PACKAGE, the package relative to the module of the
# working directory) built static into OUT/BINARY.
go_static() {
  local out=$1 entry; shift
  for entry in "$@"; do
    CGO_ENABLED=0 go build -ldflags "-s -w ${KUBE_LDFLAGS:-}" -o "$out/${entry%%=*}" "${entry#*=}"
  done
}

# go_stamp MODULE_DIR FILE...: a fingerprint of a module's go.mod and go.sum, FILES (relative
# to the repository's root), Go's version and go_static.
go_stamp() {
  local dir=$1; shift
  { cat "$dir/go.mod" "$dir/go.sum"; (cd "$ROOT" && cat "$@"); go env GOVERSION; declare -f go_static; } | sha256sum | cut -c1-16
}

# The operator's module: every Go file but the tests, the scripts' tools and spark-scheduler's.
operator_stamp() {
  local files
  mapfile -t files < <(cd "$ROOT" && find . \( -path ./.cache -o -path ./test -o -path ./hack -o -path ./cmd/spark-scheduler \) -prune \
    -o -name '*.go' ! -name '*_test.go' -print | LC_ALL=C sort)
  go_stamp "$ROOT" "${files[@]}"
}

# spark-scheduler's module takes from this repository the packages hack/local-cluster.sh's
# stamp of it names.
scheduler_stamp() {
  local files
  mapfile -t files < <(cd "$ROOT" && find cmd/spark-scheduler scheduler/reservation apis -name '*.go' ! -name '*_test.go' | LC_ALL=C sort)
  go_stamp "$ROOT/cmd/spark-scheduler" go.mod "${files[@]}" # the replaced module's requirements count
}

build_operator_into() { (cd "$ROOT" && go_static "$@"); }
build_scheduler_into() {
  local v
  v=$(cd "$ROOT/cmd/spark-scheduler" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
  (cd "$ROOT/cmd/spark-scheduler" && KUBE_LDFLAGS="-X k8s.io/component-base/version.gitVersion=$v" go_static "$@")
}

# build_binaries: the three binaries, built into the store unless it has them; sets DIRS to
# their folders there.
build_binaries() {
  local op sched BIN=$CACHE/bin/static # not $CACHE/bin, whose spark-scheduler is the cluster's
  op=$(operator_stamp)
  sched=$(scheduler_stamp)
  stored_build operator-static "$op" build_operator_into spark-operator=./cmd/spark-operator sparkctl=./cmd/sparkctl
  stored_build spark-scheduler-static "$sched" build_scheduler_into spark-scheduler=.
  DIRS=("$STORE/bin/operator-static-$op" "$STORE/bin/spark-scheduler-static-$sched")
}

# stamp: the image's fingerprint: its binaries', its reference, this script and the packer's.
stamp() {
  {
    operator_stamp
    scheduler_stamp
    image_ref
    echo "$IMAGE_USER"
    cat "$ROOT/hack/operator-image.sh" "$ROOT/hack/tools/ociimage/go.mod" "$ROOT/hack/tools/ociimage/go.sum" "$ROOT/hack/tools/ociimage/main.go"
  } | sha256sum | cut -c1-16
}

# pack OUT [BASE]: the image's tarball OUT, its one layer /usr/local/bin with the three
# binaries; with BASE (the Spark image's tarball), that layer on BASE's, as the spark-submit image.
pack() {
  local out=$1 base=${2:-} tmp d
  tmp=$(mktemp -d "$out.XXXXXX")
  mkdir -p "$tmp/root/usr/local/bin" "$tmp/root/tmp"
  chmod 1777 "$tmp/root/tmp"
  for d in "${DIRS[@]}"; do
    find "$d" -maxdepth 1 -type f ! -name '.*' -exec cp {} "$tmp/root/usr/local/bin/" \;
  done
  tar --numeric-owner --owner 0 --group 0 --sort=name --mtime=@0 -C "$tmp/root" -cf "$tmp/layer.tar" .
  build_ociimage
  local image=(-name "$(image_ref)" -user "$IMAGE_USER")
  [ -z "$base" ] || image=(-name "$(image_ref)$SPARK_SUBMIT_SUFFIX" -user "$SPARK_SUBMIT_USER" -base "$base")
  "$CACHE/bin/ociimage" "${image[@]}" -o "$tmp/image.tar" -layer "$tmp/layer.tar" \
    -entrypoint /usr/local/bin/spark-operator && mv "$tmp/image.tar" "$out"
  rm -rf "$tmp"
  [ -f "$out" ] || die "could not pack $out"
}

cmd_build() {
  local out
  out=$IMAGES/operator-$(stamp).tar
  if [ -f "$out" ]; then
    touch "$out"
  else
    build_binaries
    mkdir -p "$IMAGES"
    pack "$out"
    log "built $out ($(du -m "$out" | cut -f1) MB, $(image_ref))"
  fi
  # Tarballs of other builds that went unused for PRUNE_DAYS days.
  find "$IMAGES" -maxdepth 1 -name 'operator-*.tar' ! -path "$out" -mtime "+$PRUNE_DAYS" -delete 2>/dev/null || true
  echo "$out"
}

# spark_tarball: the Spark image's tarball, built unless the store has it.
spark_tarball() { "$ROOT/hack/spark-image.sh" build; }

# spark_submit_stamp SPARK_TARBALL: the spark-submit image's fingerprint: the image's and the
# Spark image's (its tarball's name holds its stamp).
spark_submit_stamp() { { stamp; basename "$1"; echo "$SPARK_SUBMIT_USER$SPARK_SUBMIT_SUFFIX"; } | sha256sum | cut -c1-16; }

cmd_build_spark_submit() {
  local spark out
  spark=$(spark_tarball)
  out=$IMAGES/operator-spark-submit-$(spark_submit_stamp "$spark").tar
  if [ -f "$out" ]; then
    touch "$out"
  else
    build_binaries
    mkdir -p "$IMAGES"
    pack "$out" "$spark"
    log "built $out ($(du -m "$out" | cut -f1) MB, $(image_ref)$SPARK_SUBMIT_SUFFIX)"
  fi
  echo "$out"
}

# cmd_import [--spark-submit]
cmd_import() {
  local tar
  tar=$(build "$@")
  "$ROOT/hack/local-cluster.sh" import-image "$tar" >&2
  log "imported $(ref "$@") into the real node"
}

# build, ref and stamp [--spark-submit]: the image's or, with the flag, the spark-submit image's.
build() { if [ "${1:-}" = --spark-submit ]; then cmd_build_spark_submit; else cmd_build; fi; }
ref() { echo "$(image_ref)${1:+$SPARK_SUBMIT_SUFFIX}"; }
stamp_of() { if [ "${1:-}" = --spark-submit ]; then spark_submit_stamp "$(spark_tarball)"; else stamp; fi; }

cmd=${1:-}
[ $# = 0 ] || shift
case "$*" in
  "" | --spark-submit) ;;
  *) die "unknown arguments: $* (the only flag is --spark-submit)" ;;
esac
case "$cmd" in
  build) build "$@" ;;
  stamp) stamp_of "$@" ;;
  ref) ref "$@" ;;
  import) cmd_import "$@" ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
