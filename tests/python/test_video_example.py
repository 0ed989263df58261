"""configs/examples/video.yaml through ibvp.run: the video flows' frame and deadline columns
(docs/realtime_metrics.md) reach the flows DataFrame and summary.json; other flows leave them
empty."""
from __future__ import annotations

import math
from pathlib import Path

import ibvp

ROOT = Path(__file__).resolve().parents[2]

COLUMNS = ["frames", "frames_missed", "dmp", "dmt_ns", "inter_frame_mean_ns", "inter_frame_sd_ns"]


def test_video_example_reports_frames_and_deadline_misses(tmp_path: Path) -> None:
    res = ibvp.run(ROOT / "configs" / "examples" / "video.yaml", tmp_path / "out", timeout=300)
    flows = res.flows
    for c in COLUMNS:
        assert c in flows.columns, c
    video = flows[flows["name"].str.startswith("v")]
    background = flows[~flows["name"].str.startswith("v")]
    assert len(video) == 7 and len(background) == 8
    # 1 s at 30 frames/s: frames at 0, 1/30, ..., 29/30 s, all delivered well before the end.
    assert (video["frames"] == 30).all()
    assert ((video["dmp"] >= 0) & (video["dmp"] <= 1)).all()
    assert video["frames_missed"].le(video["frames"]).all()
    assert background[COLUMNS].isna().all().all()
    total = res.summary["video"]
    assert total["streams"] == 7 and total["frames"] == 210
    assert 0 <= total["dmp"] <= 1
    assert all(f["dmp"] is None for f in res.summary["flows"] if not f["name"].startswith("v"))
    assert not math.isnan(total["inter_frame_mean_ns"])


def test_frames_plot_draws_each_video_stream_from_a_results_directory(tmp_path: Path) -> None:
    res = ibvp.run(ROOT / "configs" / "examples" / "video.yaml", tmp_path / "out", timeout=300)
    from ibvp import plots

    paths = plots.plot("frames", res.out_dir)
    assert {p.suffix for p in paths} == {".png", ".svg"}
    svg = next(p for p in paths if p.suffix == ".svg").read_text()
    for name in res.flows[res.flows["dmp"].notna()]["name"]:
        assert f">{name}<" in svg or name in svg


def test_mix_example_writes_one_phases_row_per_phase_matching_the_summary(tmp_path: Path) -> None:
    res = ibvp.run(ROOT / "configs" / "examples" / "mix.yaml", tmp_path / "mix", timeout=300)
    phases = res.phases
    summary = res.summary["mix"]["phases"]
    assert len(phases) == len(summary) == 5
    assert list(phases["real_time_percent"]) == [20, 30, 50, 70, 80]
    for row, ph in zip(phases.itertuples(), summary):
        assert row.rt_frames == ph["real_time"]["frames"]
        assert row.be_packets == ph["best_effort"]["packets"]
        assert row.start_ns == ph["start_ns"] and row.end_ns == ph["end_ns"]
