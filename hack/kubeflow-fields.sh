#!/usr/bin/env bash
# Regenerates test/compat/testdata/kubeflow-v1beta2-fields.txt, the field paths and types of
# the Kubeflow Spark operator's v1beta2 CRDs that test/compat holds our CRDs to, from the
# reference CRDs kept beside the repository (../shared/reference, or $SPARKOP_SHARED/reference).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${SPARKOP_SHARED:-$ROOT/../shared}
[ -d "$SHARED/reference/crds" ] || { echo "no reference CRDs at $SHARED/reference/crds" >&2; exit 1; }
OUT=$ROOT/test/compat/testdata/kubeflow-v1beta2-fields.txt
mkdir -p "$(dirname "$OUT")"
(cd "$ROOT" && go run ./hack/kubeflowfields "$SHARED/reference/crds") > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT ($(grep -vc '^#' "$OUT") paths)"
