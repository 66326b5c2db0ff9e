#!/usr/bin/env bash
# Installs the Debian (bookworm) packages needed to build, test and demo babelqueue-cpp:
# a base list plus every line of scripts/apt-packages.txt (components append theirs there).
# Does nothing, and needs no network, when everything is already installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

base=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev nlohmann-json3-dev libcli11-dev libssl-dev libsqlite3-dev
  libhiredis-dev libbenchmark-dev libsimdjson-dev
  clang-14 libclang-rt-14-dev clang-tidy clang-format
  redis-server redis-tools python3-venv openssl
)
extra=()
if [[ -f "$here/apt-packages.txt" ]]; then
  # One package per line; blank lines and `#` comments are ignored.
  while IFS= read -r line || [[ -n "$line" ]]; do
    line=${line%%#*}
    line=$(echo "$line" | tr -d '[:space:]')
    [[ -n "$line" ]] && extra+=("$line")
  done <"$here/apt-packages.txt"
fi
packages=("${base[@]}" "${extra[@]}")

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
