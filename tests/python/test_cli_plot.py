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
