#!/usr/bin/env bash
# Starts the Spark Connect server through spark-submit, in the foreground when SPARK_NO_DAEMONIZE
# is set (as the operator's SparkConnect server pods run it), else as a daemon with a pid file:
# what a Spark distribution's sbin/start-connect-server.sh does. The pyspark package, which the
# image's Spark comes from, does not ship it. Arguments are spark-submit's (--conf k=v ...). The
# server's JVM uses the image's class-data archive (/opt/class-archive.sh).
set -euo pipefail
export SPARK_HOME=${SPARK_HOME:-/opt/spark}
# shellcheck source=hack/spark-image/class-archive.sh
source /opt/class-archive.sh
class_archive_submit "$@"
exec "$SPARK_HOME/sbin/spark-daemon.sh" submit org.apache.spark.sql.connect.service.SparkConnectServer 1 \
  --name "Spark Connect server" "${cds_conf[@]}" "$@"
