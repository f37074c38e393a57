#!/usr/bin/env bash
# Installs the Debian packages clustersim needs, only those missing. Quick when none are.
set -euo pipefail

packages=(
  cmake ninja-build g++ make
  libboost-graph-dev libeigen3-dev libtbb-dev nlohmann-json3-dev pybind11-dev catch2
  libcli11-dev libvalijson-dev
  python3-dev python3-numpy python3-pandas python3-pytest python3-matplotlib
  python3-pytest-xdist jupyter-nbconvert python3-nbclient python3-ipykernel python3-networkx python3-tqdm
  python3-distributed
  clang libclang-rt-14-dev
  libsimgrid-dev python3-simgrid
)

# One dpkg-query for all: a line "<name> install ok installed" per installed package.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null \
            | awk '$NF == "installed" {print $1}' || true)
missing=()
for p in "${packages[@]}"; do
  grep -qx "$p" <<<"$installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
