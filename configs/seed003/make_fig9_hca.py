#!/usr/bin/env python3
"""Writes configs/seed003/fig9_hca.yaml: seed 003's Fig. 9 question (which NIC, and flit- or
message-level multiplexing in it) asked of IBA hosts instead of the flit router's edges
(docs/seed003.md, "Fig. 9 on HCA hosts"). The NIC is the HCA's default firmware: the QoS NIC
is `sched=vc` (VirtualClock over the QPs' reserved rates) with video in a higher doorbell
class, the traditional NIC `sched=fcfs` (WQEs in fetch order); `mux=packet|message` chooses
the multiplexing. Run from anywhere: python3 make_fig9_hca.py."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_fig4 import RATE, streams_of  # noqa: E402  (the flit study's streams, the same plan)

HOSTS = [f"h{i}" for i in range(1, 9)]
LINK_BPS = 2_000_000_000            # 1X SDR: 2.5 Gb/s signalling, 8b/10b
LOAD = 0.6                          # Fig. 9(a)'s; Fig. 9(b)'s 0.8 is --set mix.total_load=0.8
STREAMS = round(0.8 * 0.8 * LINK_BPS / RATE)  # enough for 80 % of a load of 0.8: 64
# Best effort's VirtualClock charge per host, as the flit study's `unreserved: rate` (1 Gb/s
# per host), split over its seven flows: VirtualClock serves the smallest stamp, so a flow
# charged at the switch's unreserved_rate (1 Gb/s) each would outrank the streams sevenfold.
BE_CHARGE = 1_000_000_000

HEADER = f"""# Seed 003 Fig. 9 on HCA hosts (docs/seed003.md, "Fig. 9 on HCA hosts"), written by
# make_fig9_hca.py. The paper's question, which NIC and which multiplexing, asked of IBA hosts:
# 8 HCA hosts on one IBA switch (VirtualClock at its crossbar inputs, docs/qos.md), 1X SDR
# links (2 Gb/s of data, the nearest IBA rate to the paper's 1.6 Gb/s), load {LOAD} of every
# host's link in the five phases of real time to best effort 20:80 ... 80:20 (mix).
# Each host has {STREAMS} synthetic MPEG-2 streams of {RATE // 1_000_000} Mb/s to the other hosts in turn
# (one RC QP each, a stream reserves its mean rate, doorbell class 1, SL 1), and a Poisson
# best-effort flow to each other host (doorbell class 0, SL 0) of 4 KiB messages: four
# 1 KiB packets, so that message-level multiplexing has messages to hold the port with.
# A host's best effort is charged 1 Gb/s in all (1/7 per flow), as in the flit study.
# A video message is one packet of 592 payload bytes (the flit study's 40-flit message).
# The NIC is the default firmware's QP scheduler:
#   QoS NIC (this file):  hca.firmware_args "sched=vc,mux=packet"
#   message-level:        --set hca.firmware_args=sched=vc,mux=message
#   traditional NIC:      --set hca.firmware_image=../../build/firmware/libibvp_fw_fcfs_doorbells.so
#                         --set hca.firmware_args=sched=fcfs,mux=packet
#   Fig. 9(b)'s load:     --set mix.total_load=0.8
# scripts/seed003_figures.sh fig9_hca runs the four designs and draws phase DMP.
name: fig9_hca
seed: 3
duration: 500ms
warmup: 0ms
topology:
  generator: single_switch
  hosts: 8
  link: {{width: 1X, speed: SDR}}
switch:
  data_vls: 2
  scheduling: virtual_clock
endpoint: {{data_vls: 2}}
endpoint_model: hca
hca:
  firmware_args: sched=vc,mux=packet
  flow_mtu: 1024
control: {{payload_bytes: 286}}
mix:
  total_load: {LOAD}
  phases: [[20, 80], [30, 70], [50, 50], [70, 30], [80, 20]]
flows:
"""


def main() -> None:
    lines = [HEADER]
    n = len(HOSTS)
    for stream, src, dst, start in streams_of(HOSTS, STREAMS):
        lines.append(f"  - {{name: {stream}, src: {src}, dst: {dst}, generator: video, "
                     f"video_bit_rate: {RATE}, payload_bytes: 592, sl: 1, doorbell_class: 1, start: {start}us}}\n")
    for i, src in enumerate(HOSTS):
        for j, dst in enumerate(HOSTS):
            if dst != src:
                lines.append(f"  - {{name: be{i + 1}_{j + 1}, src: {src}, dst: {dst}, generator: poisson, "
                             f"payload_bytes: 4096, sl: 0, doorbell_class: 0, reserved_rate: {BE_CHARGE // (n - 1)}}}\n")
    lines.append("outputs:\n  packets_csv: false\n")
    (Path(__file__).parent / "fig9_hca.yaml").write_text("".join(lines))


if __name__ == "__main__":
    main()
