#!/bin/sh
# seed 001 Fig. 1: (a) and (b) mean packet latency against offered load, uniform traffic,
# 32-byte payloads, 32 and 64 switches (topology seed 1); (c) link utilization at 0.021
# flits/cycle/switch with 256-byte payloads, 32 switches (docs/seed001.md).
# Usage: configs/seed001/run_fig1.sh [OUT]   (default out/seed001)
set -eu
here=$(dirname "$0")
out=${1:-out/seed001}
jobs=${JOBS:-2}
loads=0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,0.1,0.12,0.14,0.16,0.18,0.2
ibvp sweep "$here/uniform32.yaml" --vary routing=updn,dfs,smart --vary traffic.load=$loads \
  --jobs "$jobs" --out "$out/fig1a"
ibvp plot "$out/fig1a" --kind latency-vs-load --x traffic.load --title "Fig. 1(a): 32 switches, 32 B"
ibvp sweep "$here/uniform64.yaml" --vary routing=updn,dfs --vary traffic.load=$loads \
  --jobs "$jobs" --out "$out/fig1b"
ibvp plot "$out/fig1b" --kind latency-vs-load --x traffic.load --title "Fig. 1(b): 64 switches, 32 B"
ibvp sweep "$here/fig1c.yaml" --vary routing=updn,dfs,smart --jobs "$jobs" --out "$out/fig1c"
python3 -m ibvp.link_balance "$out/fig1c" --switch-ports 4 --title "Fig. 1(c): 32 switches, 256 B, 0.021 flits/cycle/switch"
