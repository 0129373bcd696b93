#!/bin/bash
# /opt/decom.sh, the preStop hook Spark puts on executor pods when spark.decommission.enabled is
# set (spark.kubernetes.executor.decommissionScript): signals the executor's JVM with SIGPWR,
# which starts its graceful decommissioning, and waits for it to exit.
set -o pipefail
pid=$(pgrep -f -n 'java .*org\.apache\.spark\.scheduler\.cluster\.k8s\.KubernetesExecutorBackend')
if [ -z "$pid" ]; then
  echo "decom.sh: no executor running" >&2
  exit 0
fi
echo "decom.sh: decommissioning the executor (pid $pid)" >&2
kill -s PWR "$pid" || exit 0
while kill -0 "$pid" 2>/dev/null; do sleep 1; done
echo "decom.sh: the executor has exited" >&2
