#!/usr/bin/env bash
# Installs Apache Spark's spark-submit from the pyspark package on PyPI into the per-machine
# store ($SPARKOP_STORE, default ${XDG_CACHE_HOME:-~/.cache}/sparkop, shared by every clone),
# once, and prints SPARK_HOME as its last line. spark-submit needs Java 17 on the PATH.
#
#   hack/install-spark.sh                 install if missing; print SPARK_HOME
#   hack/install-spark.sh connect-client  install PyPI's pyspark-client (the Spark Connect client
#                                         alone, with pandas, pyarrow and grpcio) into a venv of
#                                         its own, once; print that venv's python
set -euo pipefail

STORE=${SPARKOP_STORE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkop}
# Keep in step with the sparkVersion of examples/ and with submission/native, which builds
# what this version of spark-submit builds.
SPARK_VERSION=${SPARK_VERSION:-4.0.4}
VENV=$STORE/spark-$SPARK_VERSION

log() { printf '[install-spark] %s\n' "$*" >&2; }

# connect_client: the Spark Connect client needs no Java and no Spark jars.
connect_client() {
  local venv=$STORE/spark-connect-client-$SPARK_VERSION
  mkdir -p "$STORE"
  exec 8>"$venv.lock"
  flock 8
  if [ ! -f "$venv/.complete" ]; then
    log "installing pyspark-client==$SPARK_VERSION into $venv (a ~100 MB download the first time)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "pyspark-client==$SPARK_VERSION" >&2
    "$venv/bin/python" -c 'from pyspark.sql import SparkSession' || { log "error: pyspark-client installed into $venv but does not import"; exit 1; }
    touch "$venv/.complete"
  fi
  echo "$venv/bin/python"
}

case ${1:-} in
  "") ;;
  connect-client) connect_client; exit 0 ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac

if ! command -v java >/dev/null 2>&1; then
  log "error: java not found; spark-submit needs Java 17 (Debian: apt-get install openjdk-17-jre-headless)"
  exit 1
fi

spark_home() { "$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'; }

installed() { [ -x "$VENV/bin/python" ] && home=$(spark_home 2>/dev/null) && [ -x "$home/bin/spark-submit" ] && [ -f "$VENV/.complete" ]; }

# One install at a time per machine: clones and test packages share the store.
mkdir -p "$STORE"
exec 8>"$VENV.lock"
flock 8
if ! installed; then
  log "installing pyspark==$SPARK_VERSION into $VENV (a ~430 MB download the first time)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "pyspark==$SPARK_VERSION" >&2
  touch "$VENV/.complete"
  installed || { log "error: pyspark installed into $VENV but spark-submit is not there"; exit 1; }
fi
echo "$home"
