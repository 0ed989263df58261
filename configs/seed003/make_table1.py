#!/usr/bin/env python3
"""Writes configs/seed003/table1_virtual_clock.yaml and table1_fair_queueing.yaml (seed 003
Table 1 on the IBA switch; docs/seed003.md). Run from anywhere: python3 make_table1.py."""
from pathlib import Path

HOSTS, STREAMS, RATE = 8, 64, 20_000_000  # streams per host of RATE b/s (the mix runs 48, 56 or 64)
PERIOD_US = 33333.333
GOP = 12  # frames per group of pictures of the built-in generator (IBBPBBPBBPBB)

HEADER = """# Seed 003 Table 1 on the packet-level IBA switch (docs/seed003.md), written by
# make_table1.py: inter-frame delivery time (mean and SD) of MPEG-2 streams through one
# 8-port switch whose outputs schedule with {sched} (table1_{other}.yaml is the same run
# with {other}). Real time to best effort 80:20 at a total input load of 0.8 of every
# host's link; for 0.6 and 0.7:
#   ibvp-sim configs/seed003/table1_{sched}.yaml --set mix.total_load=0.6 --set switch.unreserved_rate=240000000
#   ibvp-sim configs/seed003/table1_{sched}.yaml --set mix.total_load=0.7 --set switch.unreserved_rate=280000000
# summary.json's video block gives the inter-frame mean and SD over all streams.
#
# Not the paper's router: IBA links (1X SDR, 2 Gb/s of data, not 1.6 Gb/s), virtual
# cut-through packets of 640 payload bytes (the paper's 40 flits of 128 bits) instead of
# wormhole flits, two VLs (video on SL 1 / VL 1, best effort on SL 0 / VL 0) scheduled
# together at each output (scheduling_scope across_vls, as the paper's scheduler serves all
# VCs of a port), and fabric-only endpoints (no NIC model: a host's port serves its
# streams' packets in turn). Each host has {streams} synthetic MPEG-2 streams of {mbps} Mb/s
# to the other hosts in turn (so every output gets the same load), and the mix key runs the
# first 48, 56 or 64 of them (80 % of a load of 0.6, 0.7, 0.8). The streams start spread
# over the first GOP (12 frame periods, 400 ms; the warm-up), as independent sources would,
# rather than all sending their I frames in the same period. A stream reserves its mean
# rate; each host's Poisson best-effort
# flow is charged at switch.unreserved_rate, set to its offered rate (20 % of the load).
name: table1_{sched}
seed: 3
duration: 1400ms
warmup: 400ms
topology:
  generator: single_switch
  hosts: {hosts}
  link: {{width: 1X, speed: SDR}}
switch:
  data_vls: 2
  scheduling: {sched}
  scheduling_scope: across_vls
  unreserved_rate: 320000000
endpoint: {{data_vls: 2}}
mix:
  total_load: 0.8
  phases: [[80, 20]]
flows:
"""


def write(sched: str, other: str) -> None:
    lines = [HEADER.format(sched=sched, other=other, hosts=HOSTS, streams=STREAMS, mbps=RATE // 1_000_000)]
    for i in range(1, HOSTS + 1):
        for k in range(STREAMS):
            dst = (i + k % (HOSTS - 1)) % HOSTS + 1
            # Spread over one GOP (12 frame periods), so the streams' I frames fall in different
            # periods, as independent sources' would.
            start = int(k * GOP * PERIOD_US / STREAMS + (i - 1) * PERIOD_US / HOSTS)
            lines.append(f"  - {{name: v{i}_{k + 1}, src: h{i}, dst: h{dst}, generator: video, "
                         f"video_bit_rate: {RATE}, payload_bytes: 640, sl: 1, start: {start}us}}\n")
    for i in range(1, HOSTS + 1):
        lines.append(f"  - {{name: be{i}, src: h{i}, pattern: uniform, generator: poisson, payload_bytes: 640, sl: 0}}\n")
    lines.append("outputs:\n  packets_csv: false\n")
    (Path(__file__).parent / f"table1_{sched}.yaml").write_text("".join(lines))


write("virtual_clock", "fair_queueing")
write("fair_queueing", "virtual_clock")
