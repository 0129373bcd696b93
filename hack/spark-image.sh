#!/usr/bin/env bash
# Builds the Spark image that the examples and Kubeflow's name, docker.io/apache/spark:4.0.4,
# from what the package registries serve, with no Docker engine and no image registry: a Debian
# bookworm root file system (debootstrap) with Java 17's JRE, Python 3, procps and tini from
# Debian; Spark's jars, scripts, PySpark and Python examples from the pyspark package on PyPI
# (hack/install-spark.sh); our entrypoint (hack/spark-image/entrypoint.sh, apache/spark's
# contract: driver, driver-py, executor; uid 185) and executor decommissioning hook (decom.sh);
# a stand-in for the SparkPi example (hack/spark-image/src), whose jar Maven Central does not
# have; and a class-data archive of Spark's classes (hack/spark-image/class-archive.sh).
# hack/tools/ociimage packs it as a docker-archive tarball for `ctr images import`.
#
#   hack/spark-image.sh build     build once (cached in the store by content: rebuilt only when
#                                 an input changes) and print the tarball's path
#   hack/spark-image.sh stamp     print the build's stamp, the fingerprint of all it is built from
#   hack/spark-image.sh check [TARBALL]
#                                 unpack the image (the build's by default) into a scratch folder
#                                 and try it in a chroot: java -version, the classes Spark on
#                                 Kubernetes and Spark Connect need, the entrypoint's command
#                                 lines, and SparkPi and pi.py in local mode as uid 185 and as a
#                                 uid with no passwd entry (about a minute)
#
# Needs root (debootstrap, chroot, mount), javac 17 and Go. The first build downloads ~100 MB of
# Debian packages (kept in $STORE/images/debs for later builds) and the pyspark package (~430 MB,
# once, shared with hack/install-spark.sh), and takes a few minutes. The store keeps a tarball
# per stamp (~590 MB, and its base layer's); `build` removes those of other stamps that went
# unused for PRUNE_DAYS (7) days.
#
# Environment: SPARKOP_STORE and SPARKOP_CACHE, as hack/local-cluster.sh (hack/store.sh);
# OCIIMAGE, an ociimage binary to use instead of building hack/tools/ociimage; DEBIAN_MIRROR, a
# Debian mirror for debootstrap instead of its default.
set -euo pipefail
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SPARKOP_CACHE:-$ROOT/.cache}
BIN=$CACHE/bin
SRC=$ROOT/hack/spark-image

# The pins: every one is part of the stamp. Keep SPARK_VERSION in step with examples/.
SPARK_VERSION=4.0.4
SCALA_BINARY_VERSION=2.13
IMAGE=docker.io/apache/spark:$SPARK_VERSION
DEBIAN_SUITE=bookworm
DEBIAN_PACKAGES=openjdk-17-jre-headless,python3,procps,tini,libnss-wrapper
SPARK_UID=185
JAVA_HOME_IN_IMAGE=/usr/lib/jvm/java-17-openjdk-amd64
IMAGE_ENV=(
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  "JAVA_HOME=$JAVA_HOME_IN_IMAGE"
  SPARK_HOME=/opt/spark
  LANG=C.UTF-8
)
WORKDIR=/opt/spark/work-dir

log() { printf '[spark-image] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=hack/store.sh
source "$ROOT/hack/store.sh"

IMAGES=$STORE/images

# stamp: the fingerprint of what the image is built from: this script, the image's sources, the
# pins above (PyPI never changes a version's files), javac's build, and the packing tool's module.
stamp() {
  local files f
  mapfile -t files < <(cd "$ROOT" && { echo hack/spark-image.sh; find hack/spark-image -type f; [ ! -d hack/tools/ociimage ] || find hack/tools/ociimage -maxdepth 1 -type f; } | LC_ALL=C sort)
  {
    for f in "${files[@]}"; do
      printf '%s %s\n' "$f" "$(stat -c %a "$ROOT/$f")"
      cat "$ROOT/$f"
    done
    printf '%s\n' "$SPARK_VERSION" "$DEBIAN_SUITE" "$DEBIAN_PACKAGES" "${DEBIAN_MIRROR:-}" "${IMAGE_ENV[@]}"
    # javac's build (its JDK's release file: cheaper than starting javac)
    cat "$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")/release" 2>/dev/null || true
  } | sha256sum | cut -c1-16
}

cmd_stamp() { stamp; }

# cmd_build: the image's tarball $IMAGES/spark-VERSION-STAMP.tar, built unless the store has it.
# Its two layers: Debian's root file system (the base, cached by its own stamp, so that a change
# to Spark's part alone does not run debootstrap again) and /opt.
cmd_build() {
  local out
  out=$IMAGES/spark-$SPARK_VERSION-$(stamp).tar
  BASE=$IMAGES/base-$DEBIAN_SUITE-$(base_stamp).tar
  if [ -f "$out" ]; then
    # Its mtime tells prune_images when it was last used.
    touch "$out" 2>/dev/null || true
  else
    preflight
    stored_file "$BASE" build_base
    stored_file "$out" build_image
  fi
  prune_images "$out" "$BASE"
  echo "$out"
}

# stored_file FILE BUILDER: makes sure the store holds FILE. Unless it is there, `BUILDER TMP`
# makes TMP/out in the scratch folder TMP (FILE.tmp), under a lock per file (another clone may
# be building the same); FILE appears whole or not at all.
stored_file() {
  local file=$1 builder=$2
  if [ -f "$file" ]; then
    touch "$file" 2>/dev/null || true # its last use, for prune_images
    return 0
  fi
  mkdir -p "$(dirname "$file")"
  (
    flock 7
    [ -f "$file" ] && exit 0
    tmp=$file.tmp started=$SECONDS
    remove_tree "$tmp"
    mkdir -p "$tmp"
    trap 'remove_tree "$tmp"' EXIT
    "$builder" "$tmp"
    mv "$tmp/out" "$file"
    log "built $file in $((SECONDS - started))s ($(du -m "$file" | cut -f1) MB)"
  ) 7>"$file.lock"
  [ -f "$file" ] || die "the build left no $file"
}

# Tarballs of other stamps than the build's go once unused for this many days (prune_images).
PRUNE_DAYS=7

# prune_images KEEP...: removes from $IMAGES the image and base tarballs (spark-*-*.tar,
# base-*.tar) other than the KEEP ones that went unused for PRUNE_DAYS days, with their .lock,
# .log and .tmp; and the scratch folder (.tmp) of any build, KEEP's too, that stopped a day ago.
# Every build that finds a tarball touches it, so its mtime is its last use (a file's atime,
# e.g. an import's read, counts too; a folder's does not: listing it is no use). Whatever a build holds the lock of (stored_file's) is skipped: the lock is taken without
# waiting. Best effort: it never fails the build.
prune_images() {
  local p name k keep
  local -A names=()
  for p in "$IMAGES"/spark-*-*.tar* "$IMAGES"/base-*.tar*; do
    name=${p%.lock}; name=${name%.log}; name=${name%.tmp}
    if [[ $name == *.tar && -e $p ]]; then names[$name]=1; fi
  done
  for name in "${!names[@]}"; do
    keep=0
    for k in "$@"; do
      if [ "$k" = "$name" ]; then keep=1; fi
    done
    [ -n "$(prunable "$name" "$keep")" ] || continue
    (
      flock -n 8 || { log "not pruning $name: a build holds its lock"; exit 0; }
      local paths removed=()
      mapfile -t paths < <(prunable "$name" "$keep") # again, under the lock
      for p in "${paths[@]}"; do
        if [ -e "$p" ] && remove_tree "$p"; then removed+=("${p##*/}"); fi
      done
      [ ${#removed[@]} = 0 ] || log "pruned ${removed[*]} from $IMAGES"
    ) 8<>"$name.lock" || log "warning: could not prune $name"
  done
}

# prunable NAME KEEP: prints what prune_images removes of the tarball NAME and its files, if
# anything: all of them (the lock last) when KEEP is 0 and none was used for PRUNE_DAYS days, else
# its scratch folder if that is a day old.
prunable() {
  local name=$1 keep=$2
  if [ "$keep" = 0 ] && [ -z "$(find "$name" "$name.log" "$name.tmp" "$name.lock" -maxdepth 0 \
    \( -mtime "-$PRUNE_DAYS" -o -type f -atime "-$PRUNE_DAYS" \) -print -quit 2>/dev/null)" ]; then
    printf '%s\n' "$name" "$name.log" "$name.tmp" "$name.lock"
  elif [ -n "$(find "$name.tmp" -maxdepth 0 -type d -mtime +0 2>/dev/null)" ]; then
    printf '%s\n' "$name.tmp"
  fi
}

# preflight: what a build needs, installing debootstrap with apt-get if it is missing.
preflight() {
  [ "$(id -u)" = 0 ] || die "building the image needs root (debootstrap, chroot); run it as root"
  command -v javac >/dev/null || die "javac not found; the SparkPi stand-in needs Java 17's JDK (Debian: apt-get install openjdk-17-jdk-headless)"
  command -v jar >/dev/null || die "jar not found (Debian: apt-get install openjdk-17-jdk-headless)"
  javac -version 2>&1 | grep -q '^javac 17\.' || die "javac is $(javac -version 2>&1), want 17: the image runs Java 17"
  if ! command -v debootstrap >/dev/null; then
    log "debootstrap is missing: installing it with apt-get"
    apt_install "${TMPDIR:-/tmp}/sparkop-apt-get.log" debootstrap ||
      die "apt-get could not install debootstrap (log: ${TMPDIR:-/tmp}/sparkop-apt-get.log)"
  fi
  if [ -z "${OCIIMAGE:-}" ]; then
    declare -F build_ociimage >/dev/null || die "hack/store.sh has no build_ociimage (hack/tools/ociimage); set OCIIMAGE to an ociimage binary"
    build_ociimage
  fi
}

# remove_tree DIR: removes a scratch tree, unmounting first whatever is still mounted in it (an
# interrupted debootstrap or check leaves proc and dev there), never crossing into a mount.
remove_tree() {
  local dir=$1 m
  [ -e "$dir" ] || return 0
  while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done < <(awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
  rm -rf --one-file-system "$dir"
}

# base_stamp: the fingerprint of the base layer: the Debian pins and the code that builds it.
base_stamp() {
  { printf '%s\n' "$DEBIAN_SUITE" "$DEBIAN_PACKAGES" "${DEBIAN_MIRROR:-}" "$SPARK_UID"; declare -f build_base; } | sha256sum | cut -c1-16
}

# build_base TMP: the base layer TMP/out: Debian bookworm, minbase and DEBIAN_PACKAGES, with
# the spark user and without apt's lists and caches, documentation (but copyrights), locales
# and logs.
build_base() {
  local tmp=$1 rootfs=$1/rootfs debootstrap_log=${1%.tmp}.log
  log "debootstrap $DEBIAN_SUITE (minbase + $DEBIAN_PACKAGES; its log: $debootstrap_log)"
  mkdir -p "$IMAGES/debs"
  # One debootstrap at a time: they share the package cache.
  if ! flock "$IMAGES/debs.lock" debootstrap --variant=minbase --include="$DEBIAN_PACKAGES" \
    --cache-dir="$IMAGES/debs" "$DEBIAN_SUITE" "$rootfs" ${DEBIAN_MIRROR:+"$DEBIAN_MIRROR"} >"$debootstrap_log" 2>&1; then
    tail -n 20 "$debootstrap_log" >&2
    die "debootstrap failed (the log's end is above, the whole in $debootstrap_log)"
  fi
  [ -x "$rootfs$JAVA_HOME_IN_IMAGE/bin/java" ] || die "debootstrap installed no $JAVA_HOME_IN_IMAGE/bin/java"
  chroot "$rootfs" groupadd --system --gid "$SPARK_UID" spark
  chroot "$rootfs" useradd --system --uid "$SPARK_UID" --gid spark --home-dir /home/spark --create-home --shell /bin/bash spark
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/cache/debconf/*-old \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
    "$rootfs"/var/log/* "$rootfs"/tmp/* "$rootfs"/root/.??*
  find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  # The container runtime provides these; debootstrap copied the build machine's.
  rm -f "$rootfs/etc/hostname" "$rootfs/etc/resolv.conf"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
  tar --numeric-owner --sort=name --xattrs -C "$rootfs" -cf "$tmp/out" \
    --exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' --exclude='./opt/*' .
}

# build_image TMP: the image's tarball TMP/out: the base layer ($BASE) and /opt: Spark from the
# pyspark package, the SparkPi stand-in and the entrypoint.
build_image() {
  local tmp=$1 rootfs=$1/rootfs spark_home jar sources
  spark_home=$(SPARK_VERSION=$SPARK_VERSION "$ROOT/hack/install-spark.sh" | tail -1)
  [ -d "$spark_home/jars" ] || die "hack/install-spark.sh gave $spark_home, which has no jars/"
  log "/opt/spark from pyspark $SPARK_VERSION, the SparkPi stand-in, the entrypoint"
  local opt=$rootfs/opt/spark
  mkdir -p "$opt/python/lib" "$opt/examples/jars" "$opt/examples/src/main" "$rootfs$WORKDIR"
  cp -a "$spark_home/jars" "$spark_home/bin" "$spark_home/sbin" "$spark_home/data" "$spark_home/licenses" "$opt/"
  rm -f "$opt"/bin/*.cmd
  cp -a "$spark_home"/python/lib/*.zip "$opt/python/lib/"
  cp -a "$spark_home/examples/src/main/python" "$opt/examples/src/main/"
  find "$opt" -name __pycache__ -prune -exec rm -rf {} +
  echo "Spark $SPARK_VERSION (Scala $SCALA_BINARY_VERSION), from the pyspark package; SparkPi is a stand-in" >"$opt/RELEASE"
  install -m 0755 "$SRC/entrypoint.sh" "$rootfs/opt/entrypoint.sh"
  install -m 0755 "$SRC/decom.sh" "$rootfs/opt/decom.sh"
  install -m 0644 "$SRC/class-archive.sh" "$rootfs/opt/class-archive.sh"
  # Spark Connect's sbin scripts, which the pyspark package lacks.
  install -m 0755 "$SRC"/sbin/*.sh "$opt/sbin/"
  chown "$SPARK_UID:$SPARK_UID" "$rootfs$WORKDIR"
  chmod 0775 "$rootfs$WORKDIR"

  jar=spark-examples_$SCALA_BINARY_VERSION-$SPARK_VERSION.jar
  mapfile -t sources < <(find "$SRC/src" -name '*.java' | sort)
  mkdir -p "$tmp/classes"
  javac --release 17 -nowarn -cp "$opt/jars/*" -d "$tmp/classes" "${sources[@]}"
  jar --create --file "$opt/examples/jars/$jar" -C "$tmp/classes" .
  ln -s "$jar" "$opt/examples/jars/spark-examples.jar"
  archive_classes "$rootfs"

  log "packing the image"
  tar --numeric-owner --sort=name -C "$rootfs" -cf "$tmp/opt.tar" ./opt
  local env=() e
  for e in "${IMAGE_ENV[@]}"; do env+=(-env "$e"); done
  "${OCIIMAGE:-$BIN/ociimage}" -name "$IMAGE" -o "$tmp/out" -layer "$BASE" -layer "$tmp/opt.tar" \
    -entrypoint /opt/entrypoint.sh -user "$SPARK_UID" -workdir "$WORKDIR" "${env[@]}"
}

# archive_classes ROOTFS: ROOTFS/opt/spark/cds (hack/spark-image/class-archive.sh): the jars'
# class path in a fixed order, and the class-data archive of what pi.py loads in local mode with
# it, dumped by the image's own JVM in a chroot of ROOTFS (the base layer unpacked there too; only
# /opt is packed).
archive_classes() {
  local rootfs=$1 cds=$1/opt/spark/cds started=$SECONDS
  log "the class-data archive (pi.py in local mode, in a chroot)"
  mkdir -p "$cds"
  (cd "$rootfs" && printf '/%s\n' opt/spark/jars/*.jar) | LC_ALL=C sort | paste -sd: >"$cds/classpath"
  tar --numeric-owner -xf "$BASE" -C "$rootfs"
  mount -t proc proc "$rootfs/proc"
  mount --bind /dev "$rootfs/dev"
  # shellcheck disable=SC2016 # the inner shell expands them
  if ! chroot "$rootfs" /usr/bin/env -i "${IMAGE_ENV[@]}" HOME=/root SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_HOSTNAME=localhost \
    /bin/sh -c 'cd "$0" && exec java -XX:ArchiveClassesAtExit=/opt/spark/cds/spark.jsa -cp "$(cat /opt/spark/cds/classpath)" \
      org.apache.spark.deploy.SparkSubmit --master "local[2]" --conf spark.ui.port=0 /opt/spark/examples/src/main/python/pi.py 4' \
    /tmp >"$cds.log" 2>&1 || ! grep -q '^Pi is roughly 3\.1' "$cds.log"; then
    tail -n 20 "$cds.log" >&2
    die "pi.py did not run to dump the class-data archive"
  fi
  umount "$rootfs/proc" "$rootfs/dev"
  [ -s "$cds/spark.jsa" ] || die "the JVM dumped no $cds/spark.jsa"
  chmod 0444 "$cds/spark.jsa"
  rm -f "$cds.log"
  log "archived $(du -m "$cds/spark.jsa" | cut -f1) MB of classes in $((SECONDS - started))s"
}

# cmd_check [TARBALL]: the image, unpacked into a scratch folder, tried in a chroot.
cmd_check() {
  [ "$(id -u)" = 0 ] || die "the check needs root (chroot, mount)"
  local img=${1:-} rootfs layer fails=0 out
  [ -n "$img" ] || img=$(cmd_build)
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/spark-image-check.XXXXXX")
  rootfs=$scratch/rootfs
  trap 'remove_tree "$scratch"' EXIT
  mkdir -p "$rootfs"
  for layer in $(tar -xOf "$img" manifest.json | grep -o '"Layers":\[[^]]*\]' | grep -o '[^",[]*\.tar\.gz'); do
    tar -xOf "$img" "$layer" | tar --numeric-owner -xz -C "$rootfs"
  done
  [ -x "$rootfs/opt/entrypoint.sh" ] || die "$img unpacked without /opt/entrypoint.sh"
  # What a container has: proc, dev, and a hosts file naming this host.
  mount -t proc proc "$rootfs/proc"
  mount --bind /dev "$rootfs/dev"
  printf '127.0.0.1\tlocalhost %s\n' "$(hostname)" >"$rootfs/etc/hosts"

  # in_image USER:GROUP CMD...: CMD in the image's environment and working directory.
  in_image() {
    local user=$1; shift
    # shellcheck disable=SC2016 # the inner shell expands them
    chroot --userspec="$user" "$rootfs" /usr/bin/env -i "${IMAGE_ENV[@]}" HOME=/home/spark \
      /bin/sh -c 'cd "$0" && exec "$@"' "$WORKDIR" "$@"
  }
  pass() { log "ok: $*"; }
  fail() { log "FAILED: $*"; fails=$((fails + 1)); }

  out=$(in_image "$SPARK_UID:$SPARK_UID" java -version 2>&1) || true
  if grep -q 'version "17\.' <<<"$out"; then pass "java: $(head -1 <<<"$out")"; else fail "java -version: $out"; fi

  local class found j
  for class in org.apache.spark.deploy.k8s.submit.KubernetesClientApplication \
    org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
    org.apache.spark.scheduler.cluster.k8s.KubernetesClusterManager \
    io.fabric8.kubernetes.client.KubernetesClientBuilder \
    org.apache.spark.sql.connect.service.SparkConnectServer \
    org.apache.spark.examples.SparkPi; do
    found=
    for j in "$rootfs"/opt/spark/jars/*.jar "$rootfs"/opt/spark/examples/jars/spark-examples.jar; do
      if unzip -Z1 "$j" "${class//.//}.class" >/dev/null 2>&1; then found=${j#"$rootfs"}; break; fi
    done
    if [ -n "$found" ]; then pass "$class in $found"; else fail "$class is in no jar"; fi
  done

  # The command lines: the class-data archive's options first, its jars first on the class path.
  local cds_cp cds_opts="-XX:SharedArchiveFile=/opt/spark/cds/spark.jsa -Xlog:cds=off -Xlog:cds+dynamic=off"
  cds_cp=$(<"$rootfs/opt/spark/cds/classpath")
  [[ $cds_cp == /opt/spark/jars/*.jar:*.jar ]] && [ -s "$rootfs/opt/spark/cds/spark.jsa" ] ||
    fail "no class-data archive in /opt/spark/cds (class path: ${cds_cp:0:80}...)"
  # expect WHAT WANT USER ENV... -- ARGS...: the entrypoint's dry run of ARGS as USER with ENV prints WANT.
  expect() {
    local what=$1 want=$2 user=$3 env=(); shift 3
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    out=$(in_image "$user" env SPARK_ENTRYPOINT_DRY_RUN=1 "${env[@]}" /opt/entrypoint.sh "$@" 2>&1 | paste -sd' ')
    if [ "$out" = "$want" ]; then pass "$what: ${out:0:160}..."; else fail "$what: $out"; fi
  }
  local executor=(SPARK_EXECUTOR_MEMORY=1g SPARK_DRIVER_URL=spark://CoarseGrainedScheduler@driver:7078
    SPARK_EXECUTOR_ID=3 SPARK_EXECUTOR_CORES=1 SPARK_APPLICATION_ID=spark-app SPARK_EXECUTOR_POD_IP=10.0.0.3
    SPARK_RESOURCE_PROFILE_ID=0 SPARK_EXECUTOR_POD_NAME=pi-exec-3 SPARK_JAVA_OPT_10=-Dten SPARK_JAVA_OPT_2=-Dtwo
    SPARK_CONF_DIR=/opt/spark/conf SPARK_EXTRA_CLASSPATH=/extra/*)
  local backend="org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend --driver-url spark://CoarseGrainedScheduler@driver:7078 --executor-id 3 --cores 1 --app-id spark-app --hostname 10.0.0.3 --resourceProfileId 0 --podName pi-exec-3"
  local launch="setpriv --reuid=spark --regid=spark --init-groups env HOME=/home/spark $JAVA_HOME_IN_IMAGE/bin/java"
  local java="$launch $cds_opts -Dtwo -Dten -Xms1g -Xmx1g" plain="$launch -Dtwo -Dten -Xms1g -Xmx1g"
  expect "executor's command line (as root)" "$java -cp $cds_cp:/opt/spark/conf:/extra/*:$WORKDIR $backend" 0:0 "${executor[@]}" -- executor
  expect "executor's command line with a SPARK_CLASSPATH (as root)" "$java -cp /opt/spark/conf:/user/*:/opt/spark/jars/*:/extra/*:$WORKDIR $backend" \
    0:0 "${executor[@]}" SPARK_CLASSPATH=/user/* -- executor
  local driver="/opt/spark/bin/spark-submit --conf spark.driver.bindAddress=10.0.0.2 --conf spark.executorEnv.SPARK_DRIVER_POD_IP=10.0.0.2"
  expect "driver's command line (as $SPARK_UID)" \
    "SPARK_SUBMIT_OPTS=$cds_opts $driver --conf spark.driver.defaultExtraClassPath=$cds_cp --deploy-mode client --properties-file /opt/spark/conf/spark.properties --class C local:///app.jar 1" \
    "$SPARK_UID:$SPARK_UID" SPARK_DRIVER_BIND_ADDRESS=10.0.0.2 -- driver --properties-file /opt/spark/conf/spark.properties --class C local:///app.jar 1
  printf 'spark.driver.defaultExtraClassPath /mine/*\n' >"$rootfs/tmp/mine.properties"
  expect "driver's command line with the user's spark.driver.defaultExtraClassPath (as $SPARK_UID)" \
    "SPARK_SUBMIT_OPTS=$cds_opts -Dx $driver --deploy-mode client --properties-file /tmp/mine.properties --class C local:///app.jar 1" \
    "$SPARK_UID:$SPARK_UID" SPARK_DRIVER_BIND_ADDRESS=10.0.0.2 SPARK_SUBMIT_OPTS=-Dx -- driver --properties-file /tmp/mine.properties --class C local:///app.jar 1
  expect "executor's command line with SPARK_CLASS_ARCHIVE=off (as root)" \
    "$plain -cp /opt/spark/conf:/opt/spark/jars/*:/extra/*:$WORKDIR $backend" 0:0 "${executor[@]}" SPARK_CLASS_ARCHIVE=off -- executor

  # shellcheck disable=SC2016 # the inner shell expands them
  out=$(in_image "$SPARK_UID:$SPARK_UID" bash -c '(exec -a "java -cp x org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend" sleep 60) &
    sleep 0.5; timeout 10 /opt/decom.sh; wait $!; echo "exit $?"' 2>&1 | paste -sd' ')
  if grep -q 'the executor has exited.* exit 158$' <<<"$out"; then pass "decom.sh: $out"; else fail "decom.sh: $out"; fi

  # try_pi USER WHAT ARGS...: the entrypoint's driver runs ARGS in local mode as USER.
  try_pi() {
    local user=$1 what=$2; shift 2
    out=$(in_image "$user" env SPARK_DRIVER_BIND_ADDRESS=127.0.0.1 /opt/entrypoint.sh driver --master 'local[2]' "$@" 2>"$scratch/stderr") || true
    if grep -q '^Pi is roughly 3\.1' <<<"$out"; then
      pass "$what as $user: $out"
    else
      fail "$what as $user printed '$out'; its standard error's end:"
      tail -n 15 "$scratch/stderr" >&2
    fi
  }
  # -Xshare:on: a JVM that cannot map the class-data archive stops instead of loading from the jars.
  try_pi "$SPARK_UID:$SPARK_UID" "SparkPi (with the class-data archive)" --driver-java-options -Xshare:on \
    --class org.apache.spark.examples.SparkPi local:///opt/spark/examples/jars/spark-examples.jar 10
  try_pi 0:0 "pi.py (root, which the entrypoint makes spark; with the class-data archive)" --driver-java-options -Xshare:on \
    local:///opt/spark/examples/src/main/python/pi.py 10
  try_pi 100000:0 "SparkPi (a uid with no passwd entry)" --class org.apache.spark.examples.SparkPi local:///opt/spark/examples/jars/spark-examples.jar 4
  # A job whose own class path comes first does without the archive, and the JVM says nothing of it.
  try_pi "$SPARK_UID:$SPARK_UID" "SparkPi with spark.driver.extraClassPath (without the archive)" \
    --driver-class-path /opt/spark/examples/jars/spark-examples.jar \
    --class org.apache.spark.examples.SparkPi local:///opt/spark/examples/jars/spark-examples.jar 4
  local said
  said=$({ printf '%s\n' "$out"; cat "$scratch/stderr"; } | grep -i '\[cds\|shared archive\|shared class' | head -3 || true)
  if [ -n "$said" ]; then fail "the JVM spoke of the archive it could not use: $said"; else pass "nothing said of the archive"; fi

  [ "$fails" = 0 ] || die "$fails of the image's checks failed ($img)"
  log "all checks passed ($img)"
}

case "${1:-}" in
  build) cmd_build ;;
  stamp) cmd_stamp ;;
  check) shift; cmd_check "$@" ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
