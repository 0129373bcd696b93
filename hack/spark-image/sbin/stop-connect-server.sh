#!/usr/bin/env bash
# Stops the Spark Connect server started by start-connect-server.sh: through its pid file when it
# runs as a daemon, else (SPARK_NO_DAEMONIZE, the operator's server pods) by sending its JVM
# SIGTERM, on which Spark stops its sessions and executors. The server pods' preStop hook runs it.
set -euo pipefail
export SPARK_HOME=${SPARK_HOME:-/opt/spark}
class=org.apache.spark.sql.connect.service.SparkConnectServer
if [ -z "${SPARK_NO_DAEMONIZE+set}" ]; then
  exec "$SPARK_HOME/sbin/spark-daemon.sh" stop "$class" 1
fi
pkill -TERM -f -- "$class" || echo "no Spark Connect server to stop"
