# shellcheck shell=bash
# The per-machine store of what the scripts build, sourced by hack/local-cluster.sh and
# hack/lint.sh (which define log and die, and BIN, the clone's folder of links).
#
# SPARKOP_STORE (default ${XDG_CACHE_HOME:-~/.cache}/sparkop) is shared by every clone on the
# machine, CI's fresh one included; the cluster state stays in each clone.
STORE=${SPARKOP_STORE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkop}

# Every build lands in the store, in a folder named by the build's stamp (a fingerprint of
# what it is built from): $STORE/bin/NAME-STAMP. A clone's $BIN holds links to the builds its
# own pins name, so clones at other pins keep their builds, and a fresh clone on a machine that
# built the same pins before (CI's, for one) links instead of building.

# link_stored NAME STAMP BINARY...: links each $BIN/BINARY to the stored build NAME-STAMP and
# succeeds, if that build is complete.
link_stored() {
  local dir=$STORE/bin/$1-$2 b; shift 2
  [ -f "$dir/.complete" ] || return 1
  for b in "$@"; do [ -x "$dir/$b" ] || return 1; done
  mkdir -p "$BIN"
  for b in "$@"; do ln -sfn "$dir/$b" "$BIN/$b"; done
}

# stored_build NAME STAMP BUILDER ENTRY...: makes sure the store holds the build NAME-STAMP of
# every ENTRY (BINARY=PACKAGE) and links $BIN to it. Unless it is there, `BUILDER OUT ENTRY...`
# builds the entries into the folder OUT, under a lock per build (another clone may be building
# the same); the build appears in the store whole or not at all.
stored_build() {
  local name=$1 want=$2 builder=$3; shift 3
  local binaries=("${@%%=*}") dir=$STORE/bin/$name-$want
  link_stored "$name" "$want" "${binaries[@]}" && return 0
  mkdir -p "$STORE/bin"
  (
    flock 7
    link_stored "$name" "$want" "${binaries[@]}" && exit 0
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" || exit
    local started=$SECONDS
    "$builder" "$dir.tmp" "$@" || exit
    touch "$dir.tmp/.complete" && rm -rf "$dir" && mv "$dir.tmp" "$dir" || exit
    log "built $name in $((SECONDS - started))s (${binaries[*]})"
  ) 7>"$dir.lock"
  link_stored "$name" "$want" "${binaries[@]}" || die "the build of $name left no complete $dir"
}

# apt_install LOG PACKAGE...: installs the Debian packages not installed yet, output to LOG,
# under one lock per machine: clusters started side by side (the tests start several) would
# otherwise run apt-get at once, and all but one fail on dpkg's lock. dpkg's lock held by
# anything else is waited for too.
apt_install() {
  local logfile=$1; shift
  mkdir -p "$STORE"
  (
    flock 8
    local pkg missing=()
    for pkg in "$@"; do
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} = 0 ] && exit 0
    local wait=(-o DPkg::Lock::Timeout=600)
    { apt-get "${wait[@]}" update && DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y "${missing[@]}"; } >"$logfile" 2>&1
  ) 8>"$STORE/apt.lock"
}

# go_build_entries MODULE_DIR LDFLAGS OUT ENTRY...: one `go build` for every ENTRY
# (BINARY=PACKAGE) of the module in MODULE_DIR, the binaries named BINARY in OUT.
go_build_entries() {
  local dir=$1 ldflags=$2 out=$3 entry pkg built; shift 3
  if [ $# = 1 ]; then
    (cd "$dir" && go build -ldflags "$ldflags" -o "$out/${1%%=*}" "${1#*=}")
    return
  fi
  (cd "$dir" && go build -ldflags "$ldflags" -o "$out/" "${@#*=}") || return
  # go build names each binary after its package's last path element that is not a major
  # version (…/server/v3 builds "server").
  for entry in "$@"; do
    pkg=${entry#*=}; built=${pkg##*/}
    if [[ $built =~ ^v[0-9]+$ ]]; then built=${pkg%/*}; built=${built##*/}; fi
    [ "$built" = "${entry%%=*}" ] || mv "$out/$built" "$out/${entry%%=*}"
  done
}

# tools_stamp MODULE_DIR: a fingerprint of a tools module's pins and of its own Go files, if any
# (hack/tools/cert-manager has a main); a binary built from other pins or sources is stale.
tools_stamp() {
  local files
  mapfile -t files < <(find "$1" -maxdepth 1 -name '*.go' | sort)
  cat "$1/go.mod" "$1/go.sum" "${files[@]}" | sha256sum | cut -c1-16
}

# build_ociimage: hack/tools/ociimage, which packs the real node's images, built into the store
# and linked as $BIN/ociimage (the sourcing script defines ROOT, the repository).
build_ociimage() {
  stored_build ociimage "$(tools_stamp "$ROOT/hack/tools/ociimage")" build_ociimage_into ociimage=.
}
build_ociimage_into() { go_build_entries "$ROOT/hack/tools/ociimage" "-s -w" "$@"; }
