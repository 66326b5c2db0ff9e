# shellcheck shell=bash
# Downloads of scripts/services.sh (sourced by it): the Java servers (kafka, artemis, sqs,
# pulsar) come from Maven Central, and the CBS responder's python-qpid-proton (when the
# Python peer venv has none) from PyPI, downloaded once into a cache directory
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/<service>-<key> shared by every run directory
# and reused while the key (what is downloaded) is unchanged.
cache_root=${BABELQUEUE_CACHE_DIR:-$HOME/.cache/babelqueue}
download_timeout=${BABELQUEUE_DOWNLOAD_TIMEOUT:-${BABELQUEUE_KAFKA_DOWNLOAD_TIMEOUT:-1200}}

# cache_fill CACHE NEEDS LABEL TOOL FETCH [ARGS...]: makes sure the cache directory CACHE
# holds NEEDS (a path in it): unless the stamp file CACHE/complete and NEEDS exist, runs
# `FETCH ARGS` in CACHE, under CACHE/.lock (a second run directory waits for the first one's
# download instead of starting its own). FETCH prints a one-line summary, written into the
# stamp only after FETCH succeeded, so an interrupted download is redone. TOOL (mvn for
# Maven downloads) must be installed.
cache_fill() {
  local cache=$1 needs=$2 label=$3 tool=$4 rc=0
  shift 4
  [[ -f $cache/complete && -e $cache/$needs ]] && return 0
  if ! command -v "$tool" >/dev/null; then
    [[ $tool == mvn ]] && die "mvn not installed (scripts/apt-packages.txt: maven)"
    die "$tool not installed"
  fi
  mkdir -p "$cache"
  (
    flock -w "$download_timeout" 8 || die "another download holds $cache/.lock"
    [[ -f $cache/complete && -e $cache/$needs ]] && exit 0  # done by the holder of the lock
    rm -f "$cache/complete"
    say "$label: downloading into $cache (once)"
    t=$SECONDS
    cd "$cache"
    summary=$("$@") || exit 1
    [[ -e $needs ]] || die "$label: the download made no $cache/$needs"
    echo "$summary" >complete
    say "$label: downloaded in $((SECONDS - t)) s ($summary)"
  ) 8>"$cache/.lock" 9>&- || rc=$?
  return "$rc"
}

# mvn_quiet ARGS...: `mvn -B -q ARGS` in the current directory, bounded by the download
# timeout; its output goes to mvn.log, whose tail is printed when it fails.
mvn_quiet() {
  if ! timeout --foreground "$download_timeout" mvn -B -q "$@" >mvn.log 2>&1 </dev/null; then
    echo "services: ERROR: the Maven download failed; last lines of $PWD/mvn.log:" >&2
    tail -n 30 mvn.log >&2
    return 1
  fi
}

# mvn_libs POM JAR: the runtime jars of POM (scripts/<service>/pom.xml) into ./libs, for a
# cache_fill FETCH; JAR, a glob in libs/, must match afterwards. Prints the one-line summary.
mvn_libs() {
  rm -rf libs
  cp "$1" pom.xml
  mvn_quiet dependency:copy-dependencies -DoutputDirectory=libs -DincludeScope=runtime || return 1
  compgen -G "libs/$2" >/dev/null || die "no $2 in $PWD/libs"
  echo "$(ls libs | wc -l) jars, $(du -sh libs | cut -f1)"
}

# pom_jars NAME POM JAR: the jar directory of a server run straight from the Maven Central
# jars of POM (kafka, sqs, pulsar), downloaded once into <cache>/NAME-<hash of the
# pom>/libs (JAR: a glob that must match there); sets jars_dir to it.
jars_dir=
pom_jars() {
  local cache
  cache=$cache_root/$1-$(sha256sum "$2" | cut -c1-16)
  jars_dir=$cache/libs
  cache_fill "$cache" libs "$1" mvn mvn_libs "$2" "$3"
}

# jars_of DIR LABEL NAME: the jar directory a start recorded in DIR/libs, still complete.
jars_of() {
  local libs
  libs=$(cat "$1/libs")
  [[ -f $libs/../complete ]] || die "the $2 jars in $libs are gone (start $3 anew)"
  echo "$libs"
}
