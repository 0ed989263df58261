#!/usr/bin/env python3
"""Writes seed 003's router studies on the flit router (switch.model flit_wormhole;
docs/seed003.md): configs/seed003/fig4_{traditional,non_preemptive,preemptive}.yaml (Figs. 4
and 5, one 8-port router), fig8_{non_preemptive,preemptive}.yaml (Fig. 8, the 2x2 mesh of
5-port routers), fig5a.yaml (Fig. 5(a), swept over the variant), fig9.yaml (Fig. 9(a): the routers with
the traditional and the QoS NIC at load 0.6) and fig9b.yaml (Fig. 9(b): load 0.8, the QoS
NIC's flit- and message-level multiplexing). Run from anywhere: python3 make_fig4.py."""
from pathlib import Path

STREAMS, RATE = 52, 20_000_000  # streams per host of RATE b/s (80 % of 0.8 x 1.6 Gb/s is 51.2)
PERIOD_US = 33333.333
GOP = 12

HEADER = """# Seed 003 {figure} on the flit router (docs/seed003.md), written by make_fig4.py:
# {fabric}, variant {variant}; 16 VCs per physical channel, 40-flit buffers,
# 128-bit flits, 1.6 Gb/s links (Sec. 4.1). VC 0 for control, and the other 15 split 20:80
# between real time and best effort (3 and 12), the split of the first phase (Sec. 4.2). The
# input load is {load} of every host's link, in five phases of real time to best effort 20:80,
# 30:70, 50:50, 70:30, 80:20 (the mix key; summary.json's mix block gives DMP, DMT and
# best-effort latency per phase). Video on SL 1 (class 1), best effort on SL 0 (class 2),
# control on VL15 (class 0), one 20-flit message per host every 33.3 ms. Each host has
# {streams} synthetic MPEG-2 streams of {mbps} Mb/s to the other hosts in turn, started over a
# GOP; a stream reserves its mean rate, best effort is charged at switch.unreserved_rate (1
# Gb/s). A message is one IBA packet of 592 payload bytes (626 wire bytes: 40 flits). The NIC
# is the flit fabric's edge (switch.flit.nic_scheduler {nic}).{note}
name: {name}
seed: 3
duration: {duration_ms}ms
warmup: 0ms
{topology}switch:
  data_vls: 2
  model: flit_wormhole
  flit: {{variant: {variant}, vcs_per_channel: 16, vc_buffer_flits: 40, class_vcs: [1, 3, 12], vl_classes: [2, 1]{flit_extra}}}
endpoint: {{data_vls: 2}}
control: {{payload_bytes: 286}}
mix:
  total_load: {load}
  phases: [[20, 80], [30, 70], [50, 50], [70, 30], [80, 20]]
flows:
"""

SINGLE = """topology:
  generator: single_switch
  hosts: 8
"""
# The mesh generator's 5-port switches (4 directions and one host); up*/down* routes, free of
# deadlock with any VC allocation (minimal routes on the 4-router ring are not).
MESH = """topology:
  generator: mesh
  x: 2
  y: 2
  hosts_per_switch: 1
routing: updn
"""


def streams_of(hosts: list, streams: int):
    """Each host's streams as (name, source, destination, start in us): to the other hosts
    in turn, their starts spread over a GOP and staggered between hosts."""
    n = len(hosts)
    for i, src in enumerate(hosts):
        for k in range(streams):
            dst = hosts[(i + 1 + k % (n - 1)) % n]
            start = int(k * GOP * PERIOD_US / streams + i * PERIOD_US / n) % int(GOP * PERIOD_US)
            yield f"v{i + 1}_{k + 1}", src, dst, start


def write(name: str, variant: str, hosts: list, topology: str, figure: str, fabric: str, duration_ms: int,
          load: float = 0.8, streams: int = STREAMS, note: str = "", flit_extra: str = "",
          nic: str = "priority") -> None:
    flit_extra = f", nic_scheduler: {nic}" + flit_extra
    lines = [HEADER.format(name=name, figure=figure, fabric=fabric, variant=variant, topology=topology,
                           streams=streams, mbps=RATE // 1_000_000, duration_ms=duration_ms, load=load,
                           note=note, flit_extra=flit_extra, nic=nic)]
    for stream, src, dst, start in streams_of(hosts, streams):
        lines.append(f"  - {{name: {stream}, src: {src}, dst: {dst}, generator: video, "
                     f"video_bit_rate: {RATE}, payload_bytes: 592, sl: 1, start: {start}us}}\n")
    for i, src in enumerate(hosts):
        lines.append(f"  - {{name: be{i + 1}, src: {src}, pattern: uniform, generator: poisson, payload_bytes: 592, sl: 0}}\n")
    lines.append("outputs:\n  packets_csv: false\n")
    (Path(__file__).parent / f"{name}.yaml").write_text("".join(lines))


def main() -> None:
    single_hosts = [f"h{i}" for i in range(1, 9)]
    for v in ("traditional", "non_preemptive", "preemptive"):
        write(f"fig4_{v}", v, single_hosts, SINGLE, "Figs. 4 and 5", "one 8-port router and 8 hosts", 2000)
    mesh_hosts = [f"h{i}_{j}_1" for i in range(2) for j in range(2)]
    for v in ("non_preemptive", "preemptive"):
        write(f"fig8_{v}", v, mesh_hosts, MESH, "Fig. 8", "a 2x2 mesh of 5-port routers, one host each", 2000)
    # Fig. 5(a): the control messages' latency, queueing and network, per phase and router
    # (summary.json's mix phases, phases.csv); one config swept over the variant, 1 s runs.
    write("fig5a", "preemptive", single_hosts, SINGLE, "Fig. 5(a)", "one 8-port router and 8 hosts", 1000,
          note="\n# Fig. 5(a): ibvp sweep configs/seed003/fig5a.yaml --vary\n"
               "# switch.flit.variant=traditional,non_preemptive,preemptive --out out/seed003/fig5a, then\n"
               "# ibvp plot out/seed003/fig5a --kind control-split.")
    # Fig. 9 (Sec. 5.3): the NICs. Fig. 9(a) at load 0.6 (39 streams per host: 80 % of 0.6 x 1.6
    # Gb/s is 38.4 streams): each router with the traditional NIC (fcfs) and the QoS NIC
    # (virtual_clock), flit-level multiplexing (Sec. 5: "All the results are reported for
    # flit-level multiplexing"). Fig. 9(b) at 0.8: P and NP with the QoS NIC, and P with the QoS
    # NIC's message-level multiplexing ("the VirtualClock scheduler selects and injects one message
    # at a time").
    write("fig9", "preemptive", single_hosts, SINGLE, "Fig. 9(a)", "one 8-port router and 8 hosts", 1000, load=0.6,
          streams=39, nic="virtual_clock", flit_extra=", nic_multiplexing: flit",
          note="\n# Fig. 9(a): ibvp sweep configs/seed003/fig9.yaml --vary\n"
               "# switch.flit.variant=traditional,non_preemptive,preemptive --vary\n"
               "# switch.flit.nic_scheduler=fcfs,virtual_clock --out out/seed003/fig9, then\n"
               "# ibvp plot out/seed003/fig9 --kind phase-dmp (scripts/seed003_figures.sh fig9).")
    write("fig9b", "preemptive", single_hosts, SINGLE, "Fig. 9(b)", "one 8-port router and 8 hosts", 1000,
          nic="virtual_clock", flit_extra=", nic_multiplexing: flit",
          note="\n# Fig. 9(b): QoS NIC + P (this file), QoS NIC + NP (--set switch.flit.variant=non_preemptive)\n"
               "# and QoS NIC + P/msg (--set switch.flit.nic_multiplexing=message); scripts/seed003_figures.sh fig9b.")


if __name__ == "__main__":
    main()
