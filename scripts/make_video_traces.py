#!/usr/bin/env python3
"""Writes the seven synthetic MPEG-2 frame-size traces of configs/traces/video/.

Seed 000 Sec. 4 and seed 003 Sec. 4.2 drive their real-time VBR traffic from seven MPEG-2
traces of different bit rates at 30 frames/s. Those measured traces are not shipped with
the papers, so these files come from a model: the same one as the C++
ibvp::workload::Mpeg2FrameGenerator (platform/workload/video_frames.{h,cpp}), run with the
same random stream (xoshiro256** seeded as ibvp::sim::Rng), so the C++ generator given
seed SEED and component "video/<file stem>" yields the sizes of each file. The model:
GOP "IBBPBBPBBPBB", lognormal sizes per frame type with I:P:B mean ratio 5:2:1 and
coefficients of variation 0.2, 0.35, 0.35, scaled so a GOP's mean bit rate is the target.
See docs/video.md. Standard library only; the output is the same bytes on every run.

Usage: python3 scripts/make_video_traces.py [output_dir]   (default configs/traces/video)
"""
import math
import os
import sys

SEED = 2026
FRAMES = 900  # 30 s at 30 frames/s; each file stays near 11 KB
FPS = 30.0
GOP = "IBBPBBPBBPBB"
RELATIVE_MEAN = {"I": 5.0, "P": 2.0, "B": 1.0}
CV = {"I": 0.2, "P": 0.35, "B": 0.35}
# Seven rates spaced evenly on a log scale over a decade, 1.5 * 10^(k/6) Mb/s rounded to
# 0.1 Mb/s: from the MPEG-1-like low end (1.5 Mb/s) to the ceiling of MPEG-2 Main Profile
# at Main Level (15 Mb/s), so the seven streams differ in rate as the seeds' traces do.
RATES_MBPS = [1.5, 2.2, 3.2, 4.7, 7.0, 10.2, 15.0]
MASK = (1 << 64) - 1


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Rng:
    """ibvp::sim::Rng (models/sim/rng.h), bit for bit."""

    def __init__(self, seed, component):
        h = 0xCBF29CE484222325
        for c in component.encode():
            h = ((h ^ c) * 0x100000001B3) & MASK
        x = (seed ^ h) & MASK
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & MASK
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            self.s.append(z ^ (z >> 31))

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53


def frames(rate_bps, component):
    """The generator's frames, in the same operation order as video_frames.cpp."""
    rng = Rng(SEED, component)
    relative = 0.0
    for c in GOP:
        relative += RELATIVE_MEAN[c]
    unit = rate_bps / 8.0 / FPS * len(GOP) / relative
    out = []
    for n in range(FRAMES):
        t = GOP[n % len(GOP)]
        sigma2 = math.log1p(CV[t] * CV[t])
        mu = math.log(RELATIVE_MEAN[t] * unit) - sigma2 / 2.0
        u1 = rng.uniform()
        u2 = rng.uniform()
        z = math.sqrt(-2.0 * math.log1p(-u1)) * math.cos(2.0 * 3.141592653589793 * u2)
        size = math.floor(math.exp(mu + math.sqrt(sigma2) * z) + 0.5)
        out.append((n, t, min(max(int(size), 1), 16 << 20)))
    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "configs", "traces", "video")
    os.makedirs(out_dir, exist_ok=True)
    for mbps in RATES_MBPS:
        stem = "mpeg2_%04dkbps" % round(mbps * 1000)
        rate = mbps * 1e6
        fr = frames(rate, "video/" + stem)
        total = sum(f[2] for f in fr)
        mean = 8.0 * total * FPS / len(fr)
        lines = [
            "# Synthetic MPEG-2 frame sizes (a model, not a measured trace): written by",
            "# scripts/make_video_traces.py; see docs/video.md.",
            "# gop: %s  frames: %d  frames_per_second: %d  seed: %d  component: video/%s"
            % (GOP, FRAMES, FPS, SEED, stem),
            "# target_bit_rate_bps: %d" % round(rate),
            "# mean_bit_rate_bps: %d" % round(mean),
            "# frame_number type size_bytes",
        ]
        lines += ["%d %s %d" % f for f in fr]
        with open(os.path.join(out_dir, stem + ".txt"), "w", newline="\n") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
