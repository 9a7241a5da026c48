#!/usr/bin/env bash
# Installs every build, test and run dependency of Sightline from Debian packages.
# The one place the dependency list lives; the README commands and CI call it.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config python3
  libsimdjson-dev libdeflate-dev zlib1g-dev libzstd-dev libcli11-dev doctest-dev libsqlite3-dev
  libimgui-dev libglfw3-dev python3-glad libstb-dev
  libcairo2-dev libre2-dev fonts-dejavu-core
  clang-14 libclang-rt-14-dev
  xvfb xauth libgl1-mesa-dri mesa-utils
  poppler-utils librsvg2-bin
  pybind11-dev python3-dev python3-numpy python3-pandas python3-pytest python3-matplotlib
  dpkg-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
