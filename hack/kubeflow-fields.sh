#!/usr/bin/env bash
# Regenerates test/compat/testdata/kubeflow-v1beta2-fields.txt and kubeflow-v1alpha1-fields.txt,
# the field paths and types of the Kubeflow Spark operator's v1beta2 CRDs and of its v1alpha1
# SparkConnect CRD that test/compat holds our CRDs to, from the
# reference CRDs kept beside the repository (../shared/reference, or $SPARKOP_SHARED/reference).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${SPARKOP_SHARED:-$ROOT/../shared}
[ -d "$SHARED/reference/crds" ] || { echo "no reference CRDs at $SHARED/reference/crds" >&2; exit 1; }
generate() { # OUT [VERSION PLURAL...]
  local out=$1; shift
  mkdir -p "$(dirname "$out")"
  (cd "$ROOT" && go run ./hack/kubeflowfields "$SHARED/reference/crds" "$@") > "$out.tmp"
  mv "$out.tmp" "$out"
  echo "wrote $out ($(grep -vc '^#' "$out") paths)"
}
generate "$ROOT/test/compat/testdata/kubeflow-v1beta2-fields.txt"
generate "$ROOT/test/compat/testdata/kubeflow-v1alpha1-fields.txt" v1alpha1 sparkconnects
