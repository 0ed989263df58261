"""`ibvp plot`: figures as PNG and SVG from a run (rates over time, throughput per flow,
latency distribution) and from a sweep (latency against load)."""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp

PNG = b"\x89PNG\r\n\x1a\n"


def _check_figure(base: Path) -> None:
    assert base.with_suffix(".png").read_bytes().startswith(PNG)
    assert "<svg" in base.with_suffix(".svg").read_text()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(__file__).resolve().parents[2]
    sc = ibvp.Scenario.from_yaml(root / "configs/examples/minimal.yaml").set("outputs.packets_csv", True)
    return ibvp.run(sc, tmp_path_factory.mktemp("run"), timeout=120).out_dir


def test_plot_run_directory_defaults_to_rates_and_throughput(cli, run_dir: Path) -> None:
    code, out, err = cli("plot", run_dir)
    assert code == 0, err
    assert out.split() == [str(run_dir / f) for f in ("rates.png", "rates.svg", "throughput.png", "throughput.svg")]
    _check_figure(run_dir / "rates")
    _check_figure(run_dir / "throughput")


def test_plot_latency_cdf_to_a_chosen_file(cli, run_dir: Path, tmp_path: Path) -> None:
    code, _out, err = cli("plot", run_dir, "--kind", "latency-cdf", "--out", tmp_path / "figs" / "lat")
    assert code == 0, err
    _check_figure(tmp_path / "figs" / "lat")


def test_plot_latency_vs_load_from_a_sweep(cli, minimal_yaml: Path, tmp_path: Path) -> None:
    code, _out, err = cli("sweep", minimal_yaml, "--set", "duration=500us", "--vary", "flows[0].load=0.2,0.5,0.8",
                          "--vary", "switch.request_order=fifo,fifo_bypass", "--out", tmp_path)
    assert code == 0, err
    code, out, err = cli("plot", tmp_path, "--kind", "latency-vs-load")
    assert code == 0, err
    _check_figure(tmp_path / "latency-vs-load")
    code, _out, err = cli("plot", tmp_path, "--kind", "latency-vs-load", "--x", "nope")
    assert code == 2 and "flows[0].load" in err


def test_plot_without_its_data_exits_2(cli, run_dir: Path, tmp_path: Path) -> None:
    code, _out, err = cli("plot", run_dir, "--kind", "latency-vs-load")
    assert code == 2 and "sweep.csv" in err
    code, _out, err = cli("plot", tmp_path / "missing")
    assert code == 2 and "no such directory" in err


def test_rates_with_labels_and_a_window_table(cli, run_dir: Path) -> None:
    # `make demo` draws the seed 004 figure this way: readable port names and mean rates.
    code, out, err = cli("plot", run_dir, "--kind", "rates-over-time", "--label", "sw/3=into h3",
                         "--window", "0.5ms,1.5ms")
    assert code == 0, err
    assert "mean rates between 0.5ms and 1.5ms" in out
    rows = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.startswith("  ")}
    assert "sw/3" not in out.split("mean rates")[1] and "into" in rows
    # The labelled row is the port's own mean over the window, renamed and nothing else.
    from ibvp import plots
    direct = plots.mean_rates(run_dir, 0.5e-3, 1.5e-3, group=False)
    assert float(rows["into"]) == pytest.approx(direct["sw/3"], abs=1e-3)
    _check_figure(run_dir / "rates")


def test_bad_label_and_window_are_refused_with_the_form_to_use(cli, run_dir: Path) -> None:
    code, _out, err = cli("plot", run_dir, "--kind", "rates-over-time", "--label", "sw/3")
    assert code == 2 and "SERIES=TEXT" in err
    code, _out, err = cli("plot", run_dir, "--kind", "rates-over-time", "--window", "2ms,1ms")
    assert code == 2 and "START < END" in err


def test_traffic_classes_weighs_each_class_by_delivered_packets() -> None:
    # Seed 000's classes: video and multicast flows are real time, control/<host> is control,
    # the rest best effort; DMP and DMT from the video totals.
    from ibvp.plots import traffic_classes

    summary = {
        "flows": [
            {"name": "v1", "frames": 10, "delivered": 100, "latency_ns": {"mean": 1000.0}},
            {"name": "mc", "frames": None, "multicast": {"group": "g"}, "delivered": 300,
             "latency_ns": {"mean": 3000.0}},
            {"name": "be", "frames": None, "delivered": 50, "latency_ns": {"mean": 8000.0}},
            {"name": "idle", "frames": None, "delivered": 0, "latency_ns": {"mean": None}},
            {"name": "control/h1", "frames": None, "delivered": 4, "latency_ns": {"mean": 500.0}},
        ],
        "video": {"frames": 40, "frames_missed": 2, "dmp": 0.05, "dmt_ns": 4e6},
    }
    m = traffic_classes(summary)
    assert m["dmp"] == 0.05 and m["dmt_ms"] == 4.0
    assert m["rt_latency_us"] == (100 * 1.0 + 300 * 3.0) / 400  # 2.5 us
    assert m["be_latency_us"] == 8.0 and m["control_latency_us"] == 0.5
    assert m["mc_latency_us"] == 3.0
    assert m["uc_latency_us"] == (100 * 1.0 + 50 * 8.0) / 150
    # No frame missed: DMT 0, not NaN; no video at all: both NaN.
    assert traffic_classes({**summary, "video": {"frames": 40, "frames_missed": 0, "dmp": 0.0, "dmt_ns": 0.0}})[
        "dmt_ms"] == 0.0
    empty = traffic_classes({"flows": []})
    assert empty["dmp"] != empty["dmp"] and empty["be_latency_us"] != empty["be_latency_us"]


def test_plot_classes_vs_load_from_a_sweep_of_named_variants(cli, tmp_path: Path) -> None:
    # Seed 000's figure form: a line per variant, x = load, one panel per metric, and the
    # numbers behind it in classes.csv.
    root = Path(__file__).resolve().parents[2]
    schemes = tmp_path / "schemes.yaml"
    schemes.write_text("RR:\n  switch.vlarb: {low: [{vl: 0, weight: 255}, {vl: 1, weight: 255}]}\n"
                       "RTfirst:\n  switch.vlarb: {high: [{vl: 1, weight: 255}], low: [{vl: 0, weight: 255}]}\n")
    out_dir = tmp_path / "sweep"
    code, _out, err = cli("sweep", root / "configs/examples/video.yaml", "--set", "duration=70ms",
                          "--set", "warmup=0s", "--set", "control.period=10ms", "--vary", "traffic.load=0.05,0.3",
                          "--vary", f"scheme=@{schemes}", "--out", out_dir)
    assert code == 0, err
    code, out, err = cli("plot", out_dir, "--kind", "classes-vs-load")
    assert code == 0, err
    _check_figure(out_dir / "classes-vs-load")
    import csv
    with open(out_dir / "classes.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["traffic.load"], r["scheme"]) for r in rows] == [
        ("0.05", "RR"), ("0.05", "RTfirst"), ("0.3", "RR"), ("0.3", "RTfirst")]
    for r in rows:
        assert float(r["rt_latency_us"]) > 0 and float(r["be_latency_us"]) > 0 and float(r["control_latency_us"]) > 0
        assert 0.0 <= float(r["dmp"]) <= 1.0
    code, _out, err = cli("plot", out_dir, "--kind", "classes-vs-load", "--y", "dmp,nope")
    assert code == 2 and "nope" in err and "be_latency_us" in err
