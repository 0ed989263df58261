#!/usr/bin/env bash
# Installs the Debian packages ibvp builds and tests with. Runs apt-get only when something
# is missing, so `make` on a prepared machine costs nothing here.
set -euo pipefail
packages=(build-essential cmake ninja-build ccache pkg-config
          libsystemc-dev libgtest-dev libyaml-cpp-dev nlohmann-json3-dev
          python3 python3-venv python3-dev python3-yaml tshark  # python3-yaml: tests/fuzz
          # issue 16: real management software against ibvp-sim --serve-umad (tests/python/test_umad_tools.py)
          ibsim-utils libumad2sim0 infiniband-diags opensm
          # issue 17: runs split across processes (mpirun -n N ibvp-sim; docs/parallel.md)
          libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "ibvp: installing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "ibvp: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; the answer does not matter here.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
