"""End to end: ibvp-sim writes a capture of a small fabric run; tshark's InfiniBand
dissector (an implementation independent of ours) reads every packet back as the
simulation's own packet records say it was sent."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))


def run_sim(config: Path, out: Path) -> None:
    sim = BUILD / "ibvp-sim"
    assert sim.exists(), f"{sim} missing: run `make` first"
    subprocess.run([str(sim), str(config), "--out", str(out), "--quiet"], check=True)


def tshark_fields(capture: Path, fields: list[str]) -> list[list[str]]:
    tshark = shutil.which("tshark")
    assert tshark, "tshark is not installed: run `make deps`"
    args = [tshark, "-r", str(capture), "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
    for f in fields:
        args += ["-e", f]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines()]


def test_capture_of_a_run_dissects_as_the_packets_were_sent(tmp_path: Path) -> None:
    run_sim(ROOT / "configs/examples/pcap.yaml", tmp_path)
    capture = tmp_path / "h3.pcap"
    assert capture.exists()
    fields = ["infiniband.lrh.slid", "infiniband.lrh.dlid", "infiniband.lrh.sl", "infiniband.lrh.vl",
              "infiniband.bth.opcode", "infiniband.bth.psn", "_ws.malformed", "_ws.expert.severity"]
    rows = [[v if i >= 6 else str(int(v, 0)) for i, v in enumerate(r)] for r in tshark_fields(capture, fields)]
    assert len(rows) > 20
    for r in rows:
        assert r[6] == "" and r[7] == "", f"tshark reports a malformed packet or expert error: {r}"
        assert int(r[4]) == 0x64, "UD SEND Only"

    with open(tmp_path / "packets.csv", newline="") as f:
        sent = [p for p in csv.DictReader(f) if p["dst"] == "h3"]
    assert all(p["status"] == "delivered" for p in sent), "the run drains before it ends"
    seen = Counter((int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in rows)
    want = Counter((int(p["slid"]), int(p["dlid"]), int(p["sl"]), int(p["vl"])) for p in sent)
    assert seen == want

    # PSNs of each source count up from 0 in capture order: nothing lost, reordered or doubled.
    psns: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        psns[int(r[0])].append(int(r[5]))
    for slid, seq in psns.items():
        assert seq == list(range(len(seq))), f"source LID {slid}: PSNs {seq[:10]}..."
