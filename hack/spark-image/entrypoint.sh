#!/bin/bash
# The Spark image's entrypoint, /opt/entrypoint.sh (hack/spark-image.sh builds it in). It keeps
# the contract of apache/spark's image, which Spark on Kubernetes and the operator rely on:
#
#   driver ARGS...      spark-submit --deploy-mode client ARGS..., the driver bound to
#                       $SPARK_DRIVER_BIND_ADDRESS (the pod's IP)
#   driver-py ARGS...   the same (Spark 2.4's name for a Python driver), with $PYSPARK_PRIMARY
#                       and $PYSPARK_ARGS after ARGS when they are set
#   executor            Spark's KubernetesExecutorBackend, configured by the SPARK_EXECUTOR_*,
#                       SPARK_DRIVER_URL, SPARK_APPLICATION_ID, SPARK_RESOURCE_PROFILE_ID and
#                       SPARK_JAVA_OPT_<n> variables that the driver sets on executor pods
#   anything else       run as given
#
# Spark's processes run under tini, as the spark user (uid 185) when started as root. A uid
# without a passwd entry (OpenShift's random ones) is given one through libnss_wrapper, since
# Hadoop's login asks the system for the user's name. The executor's classpath is SPARK_CONF_DIR
# (or $SPARK_HOME/conf), HADOOP_CONF_DIR, SPARK_CLASSPATH, $SPARK_HOME/jars/*, SPARK_EXTRA_CLASSPATH
# and the working directory; SPARK_DIST_CLASSPATH (or `$HADOOP_HOME/bin/hadoop classpath`) ends it.
# Drivers and executors use the image's class-data archive (/opt/class-archive.sh): without a
# SPARK_CLASSPATH, an executor's class path starts with the archived jars, and the conf folders
# follow them.
#
# SPARK_ENTRYPOINT_DRY_RUN=1 prints the command, one word a line, instead of running it (after
# SPARK_SUBMIT_OPTS=..., when that is set).
set -eo pipefail

export SPARK_HOME=${SPARK_HOME:-/opt/spark}
if [ -z "$JAVA_HOME" ]; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
fi
export JAVA_HOME
# shellcheck source=hack/spark-image/class-archive.sh
source /opt/class-archive.sh

# run CMD...: runs CMD under tini, as spark if root; or prints it in a dry run.
run() {
  local as=()
  if [ "$(id -u)" = 0 ]; then
    as=(setpriv --reuid=spark --regid=spark --init-groups env "HOME=$(getent passwd spark | cut -d: -f6)")
  else
    give_uid_a_name
  fi
  if [ "${SPARK_ENTRYPOINT_DRY_RUN:-}" = 1 ]; then
    printf '%s\n' ${SPARK_SUBMIT_OPTS:+"SPARK_SUBMIT_OPTS=$SPARK_SUBMIT_OPTS"} "${as[@]}" "$@"
    exit 0
  fi
  exec "${as[@]}" /usr/bin/tini -s -- "$@"
}

# give_uid_a_name: a passwd entry for a uid that has none, through libnss_wrapper.
give_uid_a_name() {
  local uid gid lib
  uid=$(id -u) gid=$(id -g)
  getent passwd "$uid" >/dev/null 2>&1 && return 0
  for lib in /usr/lib/*/libnss_wrapper.so /usr/lib/libnss_wrapper.so /lib/*/libnss_wrapper.so; do
    [ -s "$lib" ] || continue
    NSS_WRAPPER_PASSWD=$(mktemp) NSS_WRAPPER_GROUP=$(mktemp)
    { cat /etc/passwd; printf 'spark:x:%s:%s:%s:%s:/bin/false\n' "$uid" "$gid" "${SPARK_USER_NAME:-anonymous uid}" "$SPARK_HOME"; } >"$NSS_WRAPPER_PASSWD"
    { cat /etc/group; getent group "$gid" >/dev/null 2>&1 || printf 'spark:x:%s:\n' "$gid"; } >"$NSS_WRAPPER_GROUP"
    export LD_PRELOAD=$lib NSS_WRAPPER_PASSWD NSS_WRAPPER_GROUP
    return 0
  done
}

# classpath: the executor's classpath.
classpath() {
  local cp conf=${SPARK_CONF_DIR:-$SPARK_HOME/conf}${HADOOP_CONF_DIR+:$HADOOP_CONF_DIR}
  if [ -n "$cds_classpath" ] && [ -z "$SPARK_CLASSPATH" ]; then
    cp=$cds_classpath:$conf
  else
    cp="$conf:${SPARK_CLASSPATH:+$SPARK_CLASSPATH:}$SPARK_HOME/jars/*"
  fi
  if [ -n "$SPARK_EXTRA_CLASSPATH" ]; then cp=$cp:$SPARK_EXTRA_CLASSPATH; fi
  cp=$cp:$PWD
  if [ -n "$HADOOP_HOME" ] && [ -z "$SPARK_DIST_CLASSPATH" ]; then
    SPARK_DIST_CLASSPATH=$("$HADOOP_HOME/bin/hadoop" classpath)
  fi
  printf '%s\n' "$cp${SPARK_DIST_CLASSPATH:+:$SPARK_DIST_CLASSPATH}"
}

# Spark reads these when the driver starts Python.
if [ -n "${PYSPARK_PYTHON+x}" ]; then export PYSPARK_PYTHON; fi
if [ -n "${PYSPARK_DRIVER_PYTHON+x}" ]; then export PYSPARK_DRIVER_PYTHON; fi

case "$1" in
  driver | driver-py)
    kind=$1
    shift
    class_archive_submit "$@"
    cmd=(
      "$SPARK_HOME/bin/spark-submit"
      --conf "spark.driver.bindAddress=$SPARK_DRIVER_BIND_ADDRESS"
      --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=$SPARK_DRIVER_BIND_ADDRESS"
      "${cds_conf[@]}"
      --deploy-mode client
      "$@"
    )
    if [ "$kind" = driver-py ] && [ -n "$PYSPARK_PRIMARY" ]; then
      read -ra args <<<"$PYSPARK_ARGS"
      cmd+=("$PYSPARK_PRIMARY" "${args[@]}")
    fi
    run "${cmd[@]}"
    ;;
  executor)
    # SPARK_JAVA_OPT_0, _1, … in the order of their numbers.
    opts=("${cds_opts[@]}")
    while IFS= read -r name; do
      opts+=("${!name}")
    done < <(compgen -v SPARK_JAVA_OPT_ | sort -t_ -k4,4n)
    if [ -n "$SPARK_EXECUTOR_MEMORY" ]; then
      opts+=("-Xms$SPARK_EXECUTOR_MEMORY" "-Xmx$SPARK_EXECUTOR_MEMORY")
    fi
    run "$JAVA_HOME/bin/java" "${opts[@]}" -cp "$(classpath)" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "$SPARK_DRIVER_URL" \
      --executor-id "$SPARK_EXECUTOR_ID" \
      --cores "$SPARK_EXECUTOR_CORES" \
      --app-id "$SPARK_APPLICATION_ID" \
      --hostname "$SPARK_EXECUTOR_POD_IP" \
      --resourceProfileId "$SPARK_RESOURCE_PROFILE_ID" \
      --podName "$SPARK_EXECUTOR_POD_NAME"
    ;;
  "")
    echo "usage: $0 driver|driver-py|executor [ARGS...], or a command to run" >&2
    exit 2
    ;;
  *)
    exec "$@"
    ;;
esac
