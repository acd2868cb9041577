#!/usr/bin/env bash
# Installs the Debian packages epsim needs, only those missing (idempotent).
# Needs root (apt-get); says so clearly otherwise.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libsimgrid-dev libboost-graph-dev libtomlplusplus-dev catch2
  libcli11-dev libfmt-dev nlohmann-json3-dev libbenchmark-dev
  python3 python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "epsim: missing Debian packages: ${missing[*]}" >&2
  echo "epsim: run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "epsim: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
