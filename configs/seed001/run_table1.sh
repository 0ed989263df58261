#!/bin/sh
# seed 001 Table 1: saturation throughput factors between up*/down* (updn), DFS and smart
# routing, 10 random fabrics per row, found by bisection (ibvp saturate, docs/seed001.md).
# Each row writes OUT/<row>/{saturation,points,factors}.{csv,parquet}.
# Usage: configs/seed001/run_table1.sh [OUT] [TOPOLOGIES]   (default out/seed001, 10)
set -eu
here=$(dirname "$0")
out=${1:-out/seed001}
n=${2:-10}
jobs=${JOBS:-2}
cmp="--compare smart/updn --compare smart/dfs --compare dfs/updn"
common="--topology-seeds $n --hi 0.5 --jobs $jobs"
for size in 16 32 64; do
  ibvp saturate "$here/uniform$size.yaml" --vary routing=updn,dfs,smart $common $cmp --out "$out/uniform$size"
done
# One hot spot with 5, 10 and 20 % of the traffic; 2, 4 and 8 hot spots sharing 10 %.
ibvp saturate "$here/hotspot32.yaml" --vary routing=updn,dfs,smart --vary hotspots=1 \
  --vary traffic.hotspot_fraction=0.05,0.1,0.2 $common $cmp --out "$out/hotspot32_1"
ibvp saturate "$here/hotspot32.yaml" --vary routing=updn,dfs,smart --vary hotspots=2,4,8 \
  --set traffic.hotspot_fraction=0.1 $common $cmp --out "$out/hotspot32_n"
