#!/usr/bin/env bash
# Builds a vendored third-party library (a release source archive in <shared>/vendor that
# Debian does not package) into a prefix, once, and reuses it while the archive and this
# recipe are unchanged:
#
#   bash scripts/vendor.sh pulsar     the Apache Pulsar C++ client (libpulsar.so + headers)
#   bash scripts/vendor.sh otel       opentelemetry-cpp: API, SDK, in-memory/ostream and OTLP
#                                     HTTP/protobuf exporters (static libraries + headers)
#
# The last line printed is `BABELQUEUE_<NAME>_PREFIX=<prefix>`; pass the prefix to CMake as
# -DCMAKE_PREFIX_PATH=<prefix> (scripts/test.sh does). The prefix lives in
# ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/<name>-<version>-<key>, where key hashes the
# archive and the recipe below, so a changed archive or recipe builds a new prefix. A build
# that fails or is interrupted leaves no `complete` marker and is redone next time; two
# runs at once wait on a lock instead of building twice.
#
# Needs the Debian packages listed under "Pulsar" and "OpenTelemetry" in
# scripts/apt-packages.txt (protobuf, Boost headers, zstd, snappy, zlib, libcurl, OpenSSL,
# nlohmann-json). Never downloads anything.
#
# Environment: BABELQUEUE_SHARED_DIR (default <repo>/../shared), BABELQUEUE_CACHE_DIR,
# BABELQUEUE_JOBS (default nproc).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=${BABELQUEUE_SHARED_DIR:-$repo/../shared}
cache_root=${BABELQUEUE_CACHE_DIR:-$HOME/.cache/babelqueue}
jobs=${BABELQUEUE_JOBS:-$(nproc)}

die() {
  echo "vendor.sh: $*" >&2
  exit 1
}

# build_prefix NAME ARCHIVE RECIPE-FUNCTION [EXTRA-ARCHIVE...]: runs the recipe in a scratch
# directory (the archive unpacked in src/, each extra archive in extra<N>/) unless the
# prefix is complete; prints the prefix. The key covers every archive and the recipe.
build_prefix() {
  local name=$1 archive=$2 recipe=$3 key prefix rc=0 extra
  shift 3
  local extras=("$@")
  for extra in "$archive" "${extras[@]}"; do
    [[ -f $extra ]] || die "$extra not found (set BABELQUEUE_SHARED_DIR)"
  done
  key=$( { cat "$archive" "${extras[@]}" | sha256sum; declare -f "$recipe"; } | sha256sum |
    cut -c1-16)
  prefix=$cache_root/$name-$key
  if [[ ! -f $prefix/complete ]]; then
    mkdir -p "$prefix"
    (
      flock -w 3600 8 || die "another build holds $prefix/.lock"
      [[ -f $prefix/complete ]] && exit 0  # built by the holder of the lock
      echo "vendor.sh: building $name into $prefix (once; a few minutes)" >&2
      local scratch=$prefix/.build started=$SECONDS
      rm -rf "$scratch" && mkdir -p "$scratch/src"
      tar -xzf "$archive" -C "$scratch/src" --strip-components=1
      local i
      for i in "${!extras[@]}"; do
        mkdir -p "$scratch/extra$i"
        tar -xzf "${extras[$i]}" -C "$scratch/extra$i" --strip-components=1
      done
      (cd "$scratch" && "$recipe" "$prefix") >"$prefix/build.log" 2>&1 ||
        { tail -n 30 "$prefix/build.log" >&2; die "$name build failed (log: $prefix/build.log)"; }
      rm -rf "$scratch"
      echo "vendor.sh: $name built in $((SECONDS - started)) s" >&2
      touch "$prefix/complete"
    ) 8>"$prefix/.lock" || rc=$?
    ((rc == 0)) || exit "$rc"
  fi
  echo "$prefix"
}

# The Pulsar C++ client: only the shared library and its headers (no tests, perf tools,
# static library or examples). Release = -O3 without debug info: the fastest build, and
# the library's own -Werror stays on (it builds warning-free with bookworm's GCC 12).
pulsar_recipe() {
  local prefix=$1
  cmake -S src -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DBUILD_TESTS=OFF -DBUILD_PERF_TOOLS=OFF -DBUILD_STATIC_LIB=OFF -DBUILD_DYNAMIC_LIB=ON
  nice -n 5 cmake --build build -j "$jobs" --target pulsarShared
  cmake --install build
}

# opentelemetry-cpp (API + SDK + exporters) as static, position-independent libraries; the
# OTLP HTTP exporter uses Debian's protobuf and libcurl, with the vendored
# opentelemetry-proto (extra0/) as OTELCPP_PROTO_PATH so nothing is fetched. Debian has no
# utf8_range: the exporter then skips its UTF-8 check (a configure warning, harmless).
# The SDK (1.28) sets the W3C "random trace-id" flag: a sampled traceparent ends in -03.
otel_recipe() {
  local prefix=$1
  cmake -S src -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_TESTING=OFF -DWITH_BENCHMARK=OFF \
    -DWITH_EXAMPLES=OFF -DWITH_FUNC_TESTS=OFF -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DWITH_OTLP_HTTP=ON -DOTELCPP_PROTO_PATH="$PWD/extra0"
  nice -n 5 cmake --build build -j "$jobs"
  cmake --install build
}

case ${1:-} in
  pulsar)
    prefix=$(build_prefix pulsar-client-cpp-4.0.1 "$shared/vendor/pulsar-client-cpp-4.0.1.tar.gz" \
      pulsar_recipe)
    [[ -f $prefix/lib/libpulsar.so && -f $prefix/include/pulsar/Client.h ]] ||
      die "$prefix has no libpulsar.so or pulsar/Client.h"
    echo "BABELQUEUE_PULSAR_PREFIX=$prefix"
    ;;
  otel)
    prefix=$(build_prefix opentelemetry-cpp-1.28.0 "$shared/vendor/opentelemetry-cpp-1.28.0.tar.gz" \
      otel_recipe "$shared/vendor/opentelemetry-proto-1.10.0.tar.gz")
    [[ -f $prefix/lib/cmake/opentelemetry-cpp/opentelemetry-cpp-config.cmake ]] ||
      die "$prefix has no opentelemetry-cpp CMake package"
    echo "BABELQUEUE_OTEL_PREFIX=$prefix"
    ;;
  *)
    echo "usage: $0 pulsar|otel" >&2
    exit 2
    ;;
esac
