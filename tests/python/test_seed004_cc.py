"""Seed 004's congestion control, end to end on HCA hosts: the qualitative results the paper
states for Figs. 2(b), 3, 4 and 7, from the configs in configs/seed004/, shortened (the
victim runs from 20 to 35 ms of a 40 ms run instead of 40 to 60 of 100; rates are read
over 22..33 ms). docs/seed004.md has the full-length numbers beside the paper's.

Every flow is an RC QP whose source firmware keeps at most one packet unacknowledged
(cc_window=1), with the next packet fetched ahead and held (cc_prefetch=1). Our HCA still
needs time per packet that the paper's ideal sources do not (the ACK's trip through both
firmwares), so a lone flow with a window of one gets only part of its link: "the victim's
available bandwidth" below is measured, not assumed."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seed004_runs import mean_rates, run  # noqa: E402

SHORT = ("duration=40ms",)
WINDOW = (0.022, 0.033)


def short(victim_index: int) -> tuple[str, ...]:
    return (*SHORT, f"flows[{victim_index}].start=20ms", f"flows[{victim_index}].stop=35ms")


@pytest.fixture(scope="module")
def lone_victim(tmp_path_factory: pytest.TempPathFactory) -> float:
    """The victim's rate alone on the fabric with a window of one packet (fraction of link)."""
    out = run("fig2b", tmp_path_factory.mktemp("lone"), "duration=5ms",
              "flows=[{name: victim, src: A_V, dst: B_V}]")
    with open(out / "flows.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    return float(row["throughput_fraction"])


@pytest.fixture(scope="module")
def fig4(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, float]]:
    """Figs. 4(a)-(c): L = 10, R = 10, LIPD, naive / input-triggered / threshold 4; and
    "none": Fig. 4(b) without marking, so without control."""
    rates = {tag: mean_rates(run(f"fig4{tag}", tmp_path_factory.mktemp(f"fig4{tag}"), *short(20)), *WINDOW)
             for tag in "abc"}
    rates["none"] = mean_rates(run("fig4b", tmp_path_factory.mktemp("fig4none"), *short(20),
                                   "switch.ecn={policy: none}"), *WINDOW)
    return rates


def test_lone_window_of_one_flow_is_limited_by_its_round_trip(tmp_path: Path, lone_victim: float) -> None:
    # One 2074-byte packet per round trip: below the link, well above half of it ...
    assert 0.65 < lone_victim < 0.85
    # ... and lower still when the next packet is fetched only once the window opens.
    out = run("fig2b", tmp_path, "duration=5ms", "flows=[{name: victim, src: A_V, dst: B_V}]",
              "hca.firmware_args=cc_window=1,cc_prefetch=0")
    with open(out / "flows.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert float(row["throughput_fraction"]) < lone_victim - 0.1


def test_fig2b_window_of_one_keeps_the_inter_switch_link_unblocked(tmp_path: Path, lone_victim: float) -> None:
    windowed = mean_rates(run("fig2b", tmp_path / "w", *short(6)), *WINDOW)
    uncontrolled = mean_rates(run("fig2b", tmp_path / "n", *short(6), "hca.firmware_args=cc_window=0"), *WINDOW)
    # Without control the victim is starved behind the blocked inter-switch link (Fig. 2(a)) ...
    assert uncontrolled["victim"] < 0.3
    assert uncontrolled["A/1"] < 0.5
    # ... with a window of one it gets what it gets alone, and the remote flow its 1/6.
    assert windowed["victim"] > 0.9 * lone_victim
    assert windowed["remote"] == pytest.approx(1 / 6, abs=0.04)
    assert windowed["B/7"] > 0.97


def test_fig3_rates_set_to_the_fair_share_beat_a_window_of_one(tmp_path: Path, lone_victim: float) -> None:
    window = mean_rates(run("fig3a", tmp_path / "a", *short(10)), *WINDOW)
    rate = mean_rates(run("fig3b", tmp_path / "b", *short(10)), *WINDOW)
    # Ten flows, four buffer slots: a window of one no longer protects the victim (Fig. 3(a)).
    assert window["victim"] < 0.5 * lone_victim
    # IPD 9 (R_max/10 each): every flow its ideal share, the victim its own bandwidth (Fig. 3(b)).
    assert rate["local"] == pytest.approx(0.5, abs=0.03)
    assert rate["remote"] == pytest.approx(0.5, abs=0.03)
    assert rate["victim"] > 2 * window["victim"]
    assert rate["A/1"] > window["A/1"] + 0.1


def test_fig4a_naive_marking_gives_the_local_flows_most_of_the_root(fig4: dict[str, dict[str, float]]) -> None:
    a = fig4["a"]
    assert a["B/12"] > 0.95
    assert a["local"] / a["B/12"] > 0.8  # paper: 90 %


def test_fig4b_input_triggered_lipd_keeps_the_root_full_and_the_victim_near_its_bandwidth(
        fig4: dict[str, dict[str, float]], lone_victim: float) -> None:
    a, b, none = fig4["a"], fig4["b"], fig4["none"]
    assert b["B/12"] > 0.95
    # Without marking, twenty windowed flows on four buffer slots starve the victim ...
    assert none["victim"] < 0.1
    # ... with input-triggered marking it gets most of what it can send alone (its rare marks
    # cost it some: docs/seed004.md).
    assert b["victim"] > 0.45 * lone_victim
    assert b["victim"] > 4 * none["victim"]
    # Fairer than naive marking: the remote flows' share grows.
    assert b["remote"] > 2 * a["remote"]


def test_fig4c_low_output_threshold_trades_root_utilization_for_fairness(
        fig4: dict[str, dict[str, float]], tmp_path: Path) -> None:
    b, c = fig4["b"], fig4["c"]
    assert c["B/12"] < b["B/12"] - 0.03
    # Local and remote about equal (the paper), once LIPD has brought the twenty flows to their
    # rates: the config as committed, over docs/seed004.md's window of 42..58 ms (the victim
    # on from 40 ms). The 40 ms runs above have not converged there yet (0.41 / 0.52).
    steady = mean_rates(run("fig4c", tmp_path, "duration=60ms"), 0.042, 0.058)
    assert steady["local"] == pytest.approx(steady["remote"], abs=0.1)


FIG7 = ("duration=40ms", "warmup=10ms")
FIG7_WINDOW = (0.015, 0.039)


def fig7(out: Path, args: str, buffer_packets: int) -> dict[str, float]:
    return mean_rates(run("fig7", out, *FIG7, f"hca.firmware_args={args}",
                          f"switch.vl_buffer_bytes={buffer_packets * 2112}"), *FIG7_WINDOW)


def test_fig7_discrete_and_continuous_ipd_agree(tmp_path: Path) -> None:
    discrete = fig7(tmp_path / "d", "cc=lipd,cc_rate=discrete,cc_window=1", 4)
    continuous = fig7(tmp_path / "c", "cc=lipd,cc_rate=continuous,cc_window=1", 4)
    assert discrete["B/12"] > 0.95
    assert discrete["B/12"] == pytest.approx(continuous["B/12"], abs=0.03)
    assert discrete["A/1"] == pytest.approx(continuous["A/1"], abs=0.05)


def test_fig7_aimd_leaves_the_inter_switch_link_under_used_with_small_buffers(tmp_path: Path) -> None:
    lipd = fig7(tmp_path / "l", "cc=lipd,cc_window=1", 2)
    aimd = fig7(tmp_path / "a", "cc=aimd,cc_window=1", 2)
    # AIMD's slow recovery keeps the rarely marked victim down (Sec. 6.3.1).
    assert aimd["A/1"] < lipd["A/1"] - 0.15
    assert aimd["victim"] < 0.5 * lipd["victim"]


def test_fig8a_persistent_state_protects_the_static_flows(tmp_path: Path) -> None:
    common = ("duration=60ms", "warmup=10ms", "flow_defaults.on_off_mean=1ms")
    fresh = mean_rates(run("fig8a", tmp_path / "f", *common, "hca.firmware_args=cc=lipd,cc_window=1,cc_persist=0"),
                       0.010, 0.059)
    kept = mean_rates(run("fig8a", tmp_path / "k", *common, "hca.firmware_args=cc=lipd,cc_window=1,cc_persist=1"),
                      0.010, 0.059)
    # Short-lived flows that start at R_max hog the root; with state kept they behave as
    # static flows and the static ones get their share back.
    assert fresh["dynamic"] > fresh["static"]
    assert kept["static"] > fresh["static"] + 0.05
