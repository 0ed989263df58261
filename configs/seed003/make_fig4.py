#!/usr/bin/env python3
"""Writes configs/seed003/fig4_{traditional,non_preemptive,preemptive}.yaml: seed 003 Figs. 4
and 5 on the flit router (switch.model flit_wormhole; docs/seed003.md). Run from anywhere:
python3 make_fig4.py."""
from pathlib import Path

HOSTS, STREAMS, RATE = 8, 52, 20_000_000  # streams per host of RATE b/s (80 % of 0.8 x 1.6 Gb/s is 51.2)
PERIOD_US = 33333.333
GOP = 12

HEADER = """# Seed 003 Figs. 4 and 5 on the flit router (docs/seed003.md), written by make_fig4.py:
# one 8-port router, variant {variant}; 16 VCs per physical channel, 40-flit buffers, 128-bit
# flits, 1.6 Gb/s links (Sec. 4.1). VC 0 for control, and the other 15 split 20:80 between
# real time and best effort (3 and 12), the split of the first phase (Sec. 4.2). The input
# load is 0.8 of every host's link, in five phases of real time to best effort 20:80, 30:70,
# 50:50, 70:30, 80:20 (the mix key; summary.json's mix block gives DMP, DMT and best-effort
# latency per phase). Video on SL 1 (class 1), best effort on SL 0 (class 2), control on
# VL15 (class 0), one 20-flit message per host every 33.3 ms. Each host has {streams} synthetic
# MPEG-2 streams of {mbps} Mb/s to the other hosts in turn; a message is one IBA packet of
# 592 payload bytes (626 wire bytes: 40 flits). Not the paper's NIC: fabric-only endpoints.
name: fig4_{variant}
seed: 3
duration: {duration_ms}ms
warmup: 0ms
topology:
  generator: single_switch
  hosts: {hosts}
switch:
  data_vls: 2
  model: flit_wormhole
  flit: {{variant: {variant}, vcs_per_channel: 16, vc_buffer_flits: 40, class_vcs: [1, 3, 12], vl_classes: [2, 1]}}
endpoint: {{data_vls: 2}}
control: {{payload_bytes: 286}}
mix:
  total_load: 0.8
  phases: [[20, 80], [30, 70], [50, 50], [70, 30], [80, 20]]
flows:
"""


def write(variant: str, duration_ms: int) -> None:
    lines = [HEADER.format(variant=variant, hosts=HOSTS, streams=STREAMS, mbps=RATE // 1_000_000,
                           duration_ms=duration_ms)]
    for i in range(1, HOSTS + 1):
        for k in range(STREAMS):
            dst = (i + k % (HOSTS - 1)) % HOSTS + 1
            start = int(k * GOP * PERIOD_US / STREAMS + (i - 1) * PERIOD_US / HOSTS) % int(GOP * PERIOD_US)
            lines.append(f"  - {{name: v{i}_{k + 1}, src: h{i}, dst: h{dst}, generator: video, "
                         f"video_bit_rate: {RATE}, payload_bytes: 592, sl: 1, start: {start}us}}\n")
    for i in range(1, HOSTS + 1):
        lines.append(f"  - {{name: be{i}, src: h{i}, pattern: uniform, generator: poisson, payload_bytes: 592, sl: 0}}\n")
    lines.append("outputs:\n  packets_csv: false\n")
    (Path(__file__).parent / f"fig4_{variant}.yaml").write_text("".join(lines))


for v in ("traditional", "non_preemptive", "preemptive"):
    write(v, 2000)
