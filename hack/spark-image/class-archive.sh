# shellcheck shell=bash
# The Spark image's class-data archive, /opt/class-archive.sh (hack/spark-image.sh builds it in),
# sourced by the entrypoint and by sbin/start-connect-server.sh.
#
# The image's build runs pi.py in local mode once and keeps the classes its JVM loaded in a
# class-data archive, $SPARK_HOME/cds/spark.jsa: a JVM given it maps those classes instead of
# reading, parsing and verifying them from the jars, about a third of a short job's CPU. The JVM
# uses the archive only when its class path starts with the jars in the order they were archived
# in ($SPARK_HOME/cds/classpath); otherwise it loads every class from the jars as it would
# without the archive, and says nothing. SPARK_CLASS_ARCHIVE=off leaves it out.

cds_opts=()
cds_classpath=
# shellcheck disable=SC2034 # read by the scripts that source this file
cds_conf=()
if [ "${SPARK_CLASS_ARCHIVE:-on}" != off ] && [ -r "$SPARK_HOME/cds/spark.jsa" ] && [ -r "$SPARK_HOME/cds/classpath" ]; then
  cds_opts=("-XX:SharedArchiveFile=$SPARK_HOME/cds/spark.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off)
  cds_classpath=$(<"$SPARK_HOME/cds/classpath")
fi

# class_archive_submit ARGS...: for a JVM that spark-submit starts in client mode with ARGS (its
# arguments): puts the archive in SPARK_SUBMIT_OPTS, and sets cds_conf to the arguments that
# start its class path with the archived jars (spark.driver.defaultExtraClassPath, which Spark's
# launcher puts first on the class path, after spark.driver.extraClassPath), unless ARGS, their
# properties file or spark-defaults.conf set that property already.
class_archive_submit() {
  # shellcheck disable=SC2034 # read by the scripts that source this file
  cds_conf=()
  [ -n "$cds_classpath" ] || return 0
  SPARK_SUBMIT_OPTS="${cds_opts[*]}${SPARK_SUBMIT_OPTS:+ $SPARK_SUBMIT_OPTS}"
  export SPARK_SUBMIT_OPTS
  local key=spark.driver.defaultExtraClassPath a prev='' files=("${SPARK_CONF_DIR:-$SPARK_HOME/conf}/spark-defaults.conf")
  for a in "$@"; do
    case $prev in --properties-file) files+=("$a") ;; --conf | -c) [[ $a != "$key="* ]] || return 0 ;; esac
    case $a in --properties-file=*) files+=("${a#*=}") ;; --conf="$key="*) return 0 ;; esac
    prev=$a
  done
  for a in "${files[@]}"; do
    if [ -r "$a" ] && grep -Eq "^[[:space:]]*${key//./\\.}[[:space:]=:]" "$a"; then return 0; fi
  done
  # shellcheck disable=SC2034 # read by the scripts that source this file
  cds_conf=(--conf "$key=$cds_classpath")
}
