#!/usr/bin/env python3
"""Writes configs/seed000/: the scenarios, and in variants/ the named schemes (variant files) of seed 000's Figs. 7-10
(docs/seed000.md). The files are committed; run this only to change them:

    python3 scripts/make_seed000_configs.py

Every choice the paper leaves open (Table 1 is not in our copy of the text) is a constant
here with its reason; docs/seed000.md lists them. The stream destinations are drawn from
random.Random(SEED) so the files come out the same on every run.
"""
from __future__ import annotations

import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "configs" / "seed000"
SEED = 2004  # the destinations of the video streams

# Seven MPEG-2 traces (Sec. 4), in rising rate; a host's streams cycle through them so the
# mix key can meet any real-time share with a fine step.
TRACES = ["1500", "2200", "3200", "4700", "7000", "10200", "15000"]
# The 15-node fabric: 15 five-port switches, one host each, nine cycles (Sec. 5.1);
# topology seed 3 is the first seed (from 1) whose fabric leaves no switch with a single
# switch cable, so every switch has a second way out (docs/seed000.md).
FABRIC15 = {"switches": 15, "seed": 3, "cycles": 9}
# The 30-node fabric: the paper gives no cycle count; 18 keeps the 15-node one's ratio of
# cycles to switches (9/15 = 18/30); seed 18 is the first without a single-cable switch.
FABRIC30 = {"switches": 30, "seed": 18, "cycles": 18}
UPDN_ROOT = {15: "sw0", 30: "sw0"}  # replaced below by the chosen best root (docs/seed000.md)
HOQ_LIFE_DROP = 7  # 4.096 us x 2^7 = 524 us at the head of an output VL (Sec. 3.5's HLL)


def topology(f: dict) -> str:
    return (f"topology:\n  generator: random_irregular\n  switches: {f['switches']}\n  switch_ports: 4\n"
            f"  host_ports: 1\n  cycles: {f['cycles']}\n  seed: {f['seed']}\n"
            f"  link: {{width: 1X, speed: SDR}}\n")


def hosts(n: int) -> list[str]:
    return [f"h{i}_1" for i in range(n)]


def video_flows(n: int, per_host: int, rng: random.Random, skip: set[str] = frozenset()) -> list[str]:
    lines = []
    hs = hosts(n)
    for h in hs:
        if h in skip:
            continue
        for k in range(per_host):
            dst = rng.choice([d for d in hs if d != h])
            t = TRACES[k % len(TRACES)]
            # Streams start at random phases of the frame period: all frames at one instant
            # would be a burst no real set of independent streams makes.
            start = rng.randrange(33333)
            lines.append(f"  - {{name: v{h[1:-2]}_{k}, src: {h}, dst: {dst}, generator: video, "
                         f"video_trace: ../traces/video/mpeg2_{t}kbps.txt, payload_bytes: 2048, sl: 1, "
                         f"start: {start}us}}")
    return lines


def be_flows(n: int, with_load: float | None = None) -> list[str]:
    # Sec. 5.1: best effort is reliable and unreliable datagrams; one Poisson flow of each per
    # host, uniform destinations. UD flows first (indices 0..n-1), RD flows n..2n-1, so the
    # multipath schemes can give the RD flows `multipath: random` by index.
    load = f", load: {with_load}" if with_load is not None else ""
    lines = []
    for kind in ("ud", "rd"):
        for h in hosts(n):
            lines.append(f"  - {{name: be_{kind}{h[1:-2]}, src: {h}, pattern: uniform, generator: poisson, "
                         f"payload_bytes: 2048, sl: 0{load}}}")
    return lines


# Buffers: 256 KiB per port and data VL (128 packets of 2 KiB). With less, min-hop routes
# (whose channel dependencies have cycles on this fabric) deadlock VL1 under the video
# bursts: 8448 bytes (the project's default) at 40 % load, 64 KiB at 40 % too (docs/seed000.md).
# PRIORITY: real time (VL1) in the high-priority table, best effort (VL0) low (Sec. 5.1: best
# effort "has the lowest priority"; control on VL15 goes first anyway), LimitOfHighPriority 255:
# strict priority. No committed figure uses it now (COMMON_WRR replaces it); it is the first
# figures' setting, kept for docs/seed000.md's "Sensitivity".
PRIORITY = "vlarb: {high: [{vl: 1, weight: 255}], low: [{vl: 0, weight: 255}], high_limit: 255}"
COMMON = f"""\
switch: {{data_vls: 2, vl_buffer_bytes: 262144, {PRIORITY}}}
endpoint: {{data_vls: 2, vl_buffer_bytes: 262144, {PRIORITY}}}
control: {{period: 33333333333ps, payload_bytes: 256}}
outputs: {{packets_csv: false}}
"""
# Figs. 7-10: both data VLs in the low-priority table with equal weights, high table empty,
# so the last stage is plain WRR (Sec. 2.2: VL arbitration "using WRR, as specified in the IBA
# specification"; Sec. 2.3: the HCA's port has "a WRR scheduling" among its VLs; IBA 7.6.9).
# Weight 32 (x 64 bytes) is one 2 KiB packet per turn. With strict priority best effort never
# delays real time and no frame missed its deadline; with WRR real time shares each link with
# best effort, as the paper's DMP and DMT curves need (docs/seed000.md, "Sensitivity").
WRR = "vlarb: {high: [], low: [{vl: 0, weight: 32}, {vl: 1, weight: 32}], high_limit: 0}"
COMMON_WRR = COMMON.replace(PRIORITY, WRR)
# Fig. 10f: multicast_bandwidth writes the VLArb tables itself (docs/multicast.md) and refuses a
# written vlarb, so its base sets none; the Shared scheme writes WRR (variants/bandwidth.yaml).
COMMON_RR = """\
switch: {data_vls: 2, vl_buffer_bytes: 262144}
endpoint: {data_vls: 2, vl_buffer_bytes: 262144}
control: {period: 33333333333ps, payload_bytes: 256}
outputs: {packets_csv: false}
"""


def routing_fig(name: str, n: int, rt: int, be: int, comment: str, duration: str, warmup: str,
                common: str = COMMON) -> str:
    rng = random.Random(SEED + n)
    # Enough streams per host for the largest real-time share the sweep asks for: 60 % load x
    # rt % of a 1X SDR link (250 MB/s) in streams of 1.5-15 Mb/s (mean 6.2 Mb/s).
    target_mbps = 0.6 * rt / 100 * 2000
    per_host, total = 0, 0.0
    rates = [1.52, 2.18, 3.18, 4.73, 6.98, 10.13, 14.79]
    while total < target_mbps * 1.05:
        total += rates[per_host % 7]
        per_host += 1
    text = comment + f"name: {name}\nseed: 1\nduration: {duration}\nwarmup: {warmup}\n" + topology(
        FABRIC15 if n == 15 else FABRIC30)
    text += "routing: minhop\n" + common
    text += f"mix:\n  total_load: 0.3\n  phases: [[{rt}, {be}]]\n"
    text += "flows:\n" + "\n".join(be_flows(n) + video_flows(n, per_host, rng)) + "\n"
    return text


def bundle(name: str, settings: list[tuple[str, str]]) -> str:
    # Block style: a key such as flows[15].multipath cannot stand in a YAML flow mapping.
    return f"{name}:\n" + "".join(f"  {k}: {v}\n" for k, v in settings)


def schemes(n: int, root: str) -> str:
    mp = [("routing", "multipath_adaptive")] + [(f"flows[{i}].multipath", "random") for i in range(n, 2 * n)]
    drop = [("switch.hoq_life", str(HOQ_LIFE_DROP)), ("switch.drop_policy", "selective")]
    return (
        "# Seed 000 Sec. 5.1's seven routing schemes (Figs. 7, 8; Fig. 9 uses SPF and the LFU pair).\n"
        "# A name and the scenario keys it sets; `ibvp sweep --vary scheme=@FILE` runs each.\n"
        "# Real-time (video) packets take the first (shortest) alternative, the RD flows\n"
        "# (be_rd*, multipath: random) pick a random path per packet at the source, the UD flows\n"
        "# adapt at each switch (switch.path_selection). Drop: HOQ lifetime code "
        f"{HOQ_LIFE_DROP} (4.096 us x 2^{HOQ_LIFE_DROP}),\n"
        "# selective (never VL15, I frames, or the first and last packet of a P or B frame).\n"
        + bundle("UpDown", [("routing", "updn"), ("routing_options.roots", f"[{root}]")])
        + bundle("SPF", [("routing", "minhop")])
        + bundle("SPF+Drop", [("routing", "minhop")] + drop)
        + bundle("MP+LFU", mp + [("switch.path_selection", "lfu")])
        + bundle("MP+LFU+Drop", mp + [("switch.path_selection", "lfu")] + drop)
        + bundle("MP+Credit", mp + [("switch.path_selection", "max_credit")])
        + bundle("MP+Credit+Drop", mp + [("switch.path_selection", "max_credit")] + drop))


# Fig. 10: three multicast groups (Sec. 5.2: "three groups each with two or four multicast
# members"), each sent by one host; their traffic is 20 % of the real-time traffic.
GROUPS = [("g1", "h0_1", 4), ("g2", "h5_1", 2), ("g3", "h10_1", 4)]
RT10 = 0.1  # real-time share of every host's link in Fig. 10 (video + multicast)


def multicast_fig(name: str, comment: str, duration: str, warmup: str, common: str) -> str:
    """Fig. 10: a fixed real-time load (RT10 of each link: video streams, and multicast for 20 %
    of the fabric's real-time bytes), best effort from the traffic section (x = traffic.load)."""
    n = 15
    rng = random.Random(SEED + 100)
    hs = hosts(n)
    link_mbps = 2000
    total_rt = RT10 * link_mbps * n
    mc_each = 0.2 * total_rt / len(GROUPS)  # Mb/s per group
    video_per_host = 0.8 * total_rt / n
    rates = [1.52, 2.18, 3.18, 4.73, 6.98, 10.13, 14.79]
    per_host, total = 0, 0.0
    while total + rates[per_host % 7] <= video_per_host:
        total += rates[per_host % 7]
        per_host += 1
    text = comment + f"name: {name}\nseed: 1\nduration: {duration}\nwarmup: {warmup}\n" + topology(FABRIC15)
    # Up/Down from the best root of Fig. 7 (docs/seed000.md): min-hop deadlocks here at 40 % load.
    text += f"routing: updn\nrouting_options: {{roots: [{UPDN_ROOT[15]}]}}\n" + common
    text += "traffic: {generator: poisson, pattern: uniform, load: 0.2, payload_bytes: 2048, sl: 0}\n"
    text += "multicast:\n"
    for g, src, members in GROUPS:
        others = [h for h in hs if h != src]
        chosen = rng.sample(others, members)
        text += (f"  - {{name: {g}, source: {src}, members: [{', '.join(chosen)}], tree: source_based, "
                 f"delivery: replicate}}\n")
    text += "flows:\n"
    for g, src, members in GROUPS:
        text += (f"  - {{name: mc_{g}, src: {src}, dst: {g}, generator: poisson, load: {mc_each / link_mbps:.4f}, "
                 f"payload_bytes: 2048, sl: 1}}\n")
    text += "\n".join(video_flows(n, per_host, rng)) + "\n"
    return text


def replication() -> str:
    return ("# Seed 000 Sec. 5.2's four multicast schemes (Fig. 10a-e).\n"
            + bundle("ReplicatedUnicast", [(f"multicast[{i}].delivery", "replicated_unicast") for i in range(len(GROUPS))]) +
            "Synchronous: {switch.multicast_replication: synchronous, switch.multicast_order: fcfs}\n"
            "Asynchronous: {switch.multicast_replication: asynchronous}\n"
            "CentralBuffer: {switch.multicast_replication: central_buffer, switch.multicast_buffer_bytes: 16896}\n")


def bandwidth() -> str:
    # Sec. 5.2, Fig. 10f: asynchronous replication; multicast on SL 2 (a VL of its own) for
    # schemes 2-4, unicast VLs at weight 32 (docs/multicast.md). Shared (scheme 1) writes the WRR of
    # Figs. 7-10 (weight 32 for each data VL), so every scheme gives a unicast VL one packet a turn.
    # Shared's multicast copies go ahead of unicast at their output VL: "For the replication
    # scheme 1, we give multicast traffic higher priority over unicast traffic in reserving the
    # output VLs" (Sec. 5.2). In schemes 2-4 the multicast VL carries nothing else.
    own = [("switch.data_vls", "3"), ("endpoint.data_vls", "3")] + [(f"flows[{i}].sl", "2") for i in range(len(GROUPS))]
    return ("# Seed 000 Sec. 5.2's bandwidth allocations (Fig. 10f), with asynchronous replication.\n"
            + bundle("Shared", [("switch.multicast_replication", "asynchronous"), ("switch.multicast_priority", "true"),
                                ("switch.vlarb", f"{{{WRR[len('vlarb: {'):]}"), ("endpoint.vlarb", f"{{{WRR[len('vlarb: {'):]}")])
            + "".join(bundle(name, own + [("multicast_bandwidth", f"{{allocation: {a}, sl: 2, unicast_weight: 32}}")])
                      for name, a in (("Equal", "equal"), ("Linear", "linear"), ("Log", "logarithmic"))))


def main() -> None:
    (OUT / "variants").mkdir(parents=True, exist_ok=True)
    head = ("# Generated by scripts/make_seed000_configs.py; docs/seed000.md explains every choice.\n")
    for name, rt, be in (("fig7", 50, 50), ("fig8", 30, 70)):
        (OUT / f"{name}.yaml").write_text(routing_fig(
            name, 15, rt, be, head + f"# Seed 000 Fig. {name[3:]}: 15-node fabric, RT:BE {rt}:{be}, x = mix.total_load.\n",
            "150ms", "30ms", COMMON_WRR))
    (OUT / "fig9.yaml").write_text(routing_fig(
        "fig9", 30, 50, 50, head + "# Seed 000 Fig. 9: 30-node fabric, RT:BE 50:50, x = mix.total_load.\n",
        "150ms", "30ms", COMMON_WRR))
    (OUT / "fig10.yaml").write_text(multicast_fig(
        "fig10", head + "# Seed 000 Fig. 10: 15-node fabric, multicast, x = traffic.load (best effort).\n",
        "150ms", "30ms", COMMON_WRR))
    (OUT / "fig10f.yaml").write_text(multicast_fig(
        "fig10f", head + "# Seed 000 Fig. 10f: fig10.yaml without a written vlarb (multicast_bandwidth writes the\n"
        "# tables; Shared writes fig10.yaml's WRR), x = traffic.load (best effort).\n", "150ms", "30ms", COMMON_RR))
    (OUT / "variants" / "replication.yaml").write_text(replication())
    (OUT / "variants" / "bandwidth.yaml").write_text(bandwidth())
    (OUT / "variants" / "schemes15.yaml").write_text(schemes(15, UPDN_ROOT[15]))
    (OUT / "variants" / "schemes30.yaml").write_text(schemes(30, UPDN_ROOT[30]))


if __name__ == "__main__":
    main()
