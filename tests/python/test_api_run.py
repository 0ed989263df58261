"""ibvp.run: a fresh child process per simulation, Results as DataFrames, every failure of
the child (bad input, deadlock, crash, timeout) as an exception rather than a hang, the
once-per-process in-process mode, and generator workloads."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

import ibvp
from ibvp import runner

TIMEOUT = 120  # seconds; every run here takes well under one


def test_run_in_child_returns_results_tables(minimal_yaml: Path, tmp_path: Path) -> None:
    res = ibvp.run(minimal_yaml, tmp_path / "out", timeout=TIMEOUT)
    assert res.out_dir == tmp_path / "out"
    assert res.summary["scenario"] == "minimal"
    assert res.summary["sim_seconds"] == pytest.approx(2e-3)
    assert list(res.flows["name"]) == ["f1", "f2"]
    assert (res.flows["delivered"] > 0).all()
    # Every cabled port has its "all" row: the switch's four and each host's one.
    all_rows = res.ports[res.ports["vl"] == "all"]
    assert sorted(zip(all_rows["node"], all_rows["port"])) == [
        ("h1", 1), ("h2", 1), ("h3", 1), ("h4", 1), ("sw", 1), ("sw", 2), ("sw", 3), ("sw", 4)]
    assert set(res.rates["series"]) == {"f1", "f2", "sw/3"}
    sw3 = res.rate_series("sw/3")
    assert sw3.index.name == "time_s" and len(sw3) == 20  # 2 ms in steps of 100 us
    with pytest.raises(KeyError, match="sw/3"):
        res.rate_series("nope")
    with pytest.raises(FileNotFoundError, match="packets_csv"):
        res.packets  # the scenario turns packets.csv off
    # The run wrote each table as Parquet beside its CSV; a later load reads them.
    for name in ("flows", "ports", "rates"):
        assert (res.out_dir / f"{name}.parquet").exists()
    again = ibvp.Results.load(res.out_dir)
    pd.testing.assert_frame_equal(again.flows, res.flows)
    assert again.run_info["events"] > 0
    # The run's own peak resident memory (Linux VmHWM): more than the SystemC kernel alone.
    assert again.run_info["peak_rss_bytes"] > 1 << 20
    # The document that ran is kept with its results.
    assert ibvp.Scenario.from_yaml(res.out_dir / "scenario.yaml").validate()["flows"] == ["f1", "f2"]


def test_flow_throughput_counts_only_the_time_the_flow_is_active(tmp_path: Path) -> None:
    # One switch, two saturating flows into h3: together they fill h3's link, each gets half.
    # Flow b runs 1 of the 2 measured ms: half of the link while active, not a quarter.
    doc = {"name": "active", "seed": 1, "duration": "2.1ms", "warmup": "100us",
           "topology": {"generator": "single_switch", "hosts": 3, "link": {"width": "4X", "speed": "QDR"}},
           "flows": [{"name": "a", "src": "h1", "dst": "h3", "generator": "saturating", "payload_bytes": 1024},
                     {"name": "b", "src": "h2", "dst": "h3", "generator": "saturating", "payload_bytes": 1024,
                      "start": "600us", "stop": "1600us"}],
           "outputs": {"rate_window": "100us", "rate_ports": ["sw/3"]}}
    res = ibvp.run(ibvp.Scenario(doc), tmp_path, timeout=TIMEOUT)
    share = dict(zip(res.flows["name"], res.flows["throughput_fraction"]))
    payload_share = 1024 / (1024 + 34)  # LRH+BTH+DETH+ICRC+VCRC on each UD packet
    assert share["b"] == pytest.approx(payload_share / 2, rel=0.03)
    # a has the link alone for 1 of its 2 ms and half of it for the other.
    assert share["a"] == pytest.approx(payload_share * 0.75, rel=0.03)
    # Flow rate series are drawn on the scale of the source link, as the ports are.
    rates = res.rates[(res.rates["series"] == "b") & res.rates["time_s"].between(1.0e-3, 1.5e-3)]
    assert rates["utilization"].mean() == pytest.approx(0.5, rel=0.03)


def test_packets_are_conserved(minimal_yaml: Path, tmp_path: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml).set("outputs.packets_csv", True).set("duration", "500us")
    res = ibvp.run(sc, tmp_path, timeout=TIMEOUT)
    p = res.summary["packets"]
    assert p["injected"] > 0
    assert p["injected"] == p["delivered"] + p["dropped"] + p["in_flight"]
    assert res.conservation_ok()
    assert sum(f["injected"] for f in res.summary["flows"]) == p["injected"]
    counts = res.packets["status"].value_counts().to_dict()
    assert counts.get("delivered", 0) == p["delivered"]
    assert counts.get("in_flight", 0) == p["in_flight"]
    assert len(res.packets) == p["injected"]


def test_progress_reports_simulated_time(minimal_yaml: Path, tmp_path: Path) -> None:
    seen: list[tuple] = []
    ibvp.run(minimal_yaml, tmp_path, progress=lambda *a: seen.append(a), timeout=TIMEOUT)
    assert seen, "no progress was reported"
    sim_s, end_s, wall_s, hops = seen[-1]
    assert end_s == pytest.approx(2e-3) and sim_s == pytest.approx(end_s)
    assert hops > 0 and wall_s >= 0
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)


def test_config_error_in_child_arrives_with_its_attributes(tmp_path: Path) -> None:
    sc = ibvp.Scenario({"duration": "1ms", "topology": {"generator": "single_switch", "hosts": 2},
                        "flows": [{"src": "h1", "dst": "h2", "payload_bytes": 5000}]})
    with pytest.raises(ibvp.ConfigError) as err:
        # Straight to the child, as a run would get it: no validation beforehand.
        runner._run_child(sc, tmp_path, None, TIMEOUT)
    assert err.value.key == "flows[0].payload_bytes"
    assert err.value.line > 0
    assert "4096" in str(err.value)


def test_deadlocked_ring_raises_deadlock_error_not_a_hang(ring: dict, tmp_path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(ibvp.DeadlockError) as err:
        ibvp.run(ring, tmp_path, timeout=TIMEOUT)
    assert time.monotonic() - start < 30
    message = str(err.value)
    assert "deadlock detected" in message
    for k in range(5):
        assert f"s{k}/1" in message  # the cycle of inter-switch ports
    # The results up to the deadlock are there to look at.
    assert ibvp.Results.load(err.value.out_dir).summary["deadlock"]


def test_partial_deadlock_raises_deadlock_error_while_a_bystander_flow_moves(partial_ring: dict,
                                                                          tmp_path: Path) -> None:
    with pytest.raises(ibvp.DeadlockError) as err:
        ibvp.run(partial_ring, tmp_path, timeout=TIMEOUT)
    message = str(err.value)
    for k in range(5):
        assert f"s{k}/1 VL0" in message
    res = ibvp.Results.load(err.value.out_dir)
    bystander = next(f for f in res.summary["flows"] if f["name"] == "bystander")
    assert bystander["delivered"] > 100  # moving until the report, a millisecond in or more
    assert res.stuck["packets"] >= 5 * 4 and res.stuck["outputs"] >= 5


def test_crashing_child_raises_simulation_error(minimal_yaml: Path, tmp_path: Path, monkeypatch) -> None:
    crash = textwrap.dedent("""
        import os, signal, sys
        sys.stdin.read()
        print("about to crash", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    """)
    monkeypatch.setattr(runner, "WORKER_COMMAND", [sys.executable, "-c", crash])
    with pytest.raises(ibvp.SimulationError) as err:
        ibvp.run(minimal_yaml, tmp_path, timeout=TIMEOUT)
    assert err.value.returncode == -11
    assert "signal 11" in str(err.value)
    assert "about to crash" in err.value.stderr


def test_child_exiting_without_result_raises_simulation_error(minimal_yaml: Path, tmp_path: Path,
                                                              monkeypatch) -> None:
    monkeypatch.setattr(runner, "WORKER_COMMAND", [sys.executable, "-c", "import sys; sys.exit(7)"])
    with pytest.raises(ibvp.SimulationError) as err:
        ibvp.run(minimal_yaml, tmp_path, timeout=TIMEOUT)
    assert err.value.returncode == 7


def test_timeout_stops_the_child(root: Path, tmp_path: Path) -> None:
    # Seed 004 for ten simulated seconds takes minutes; half a second is all it gets.
    sc = ibvp.Scenario.from_yaml(root / "configs/seed004/fig2a.yaml").set("duration", "10s")
    start = time.monotonic()
    with pytest.raises(ibvp.RunTimeout) as err:
        ibvp.run(sc, tmp_path, timeout=0.5)
    assert time.monotonic() - start < 10
    assert isinstance(err.value, TimeoutError) and "0.5 s" in str(err.value)


def test_second_in_process_run_raises_a_clear_error(minimal_yaml: Path, tmp_path: Path) -> None:
    # In a separate interpreter: this test process must keep its SystemC kernel unused.
    script = textwrap.dedent(f"""
        import ibvp
        bad = ibvp.Scenario.from_yaml({str(minimal_yaml)!r}).set("switch.bypass_limit", 999)
        try:
            ibvp.run(bad, {str(tmp_path / "bad")!r}, in_process=True)
        except ibvp.ConfigError:
            print("config error, kernel still unused")
        res = ibvp.run({str(minimal_yaml)!r}, {str(tmp_path / "first")!r}, in_process=True)
        print("first run delivered", res.summary["packets"]["delivered"])
        try:
            ibvp.run({str(minimal_yaml)!r}, {str(tmp_path / "second")!r}, in_process=True)
        except ibvp.KernelUsedError as e:
            print("second run refused:", e)
        res = ibvp.run({str(minimal_yaml)!r}, {str(tmp_path / "child")!r})
        print("child run delivered", res.summary["packets"]["delivered"])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "config error, kernel still unused" in out
    first = next(line for line in out.splitlines() if line.startswith("first run delivered"))
    refusal = next(line for line in out.splitlines() if line.startswith("second run refused:"))
    assert "SystemC" in refusal and "one fabric per process" in refusal  # why
    assert "in_process" in refusal and "child process" in refusal        # what to do instead
    child = next(line for line in out.splitlines() if line.startswith("child run delivered"))
    assert first.split()[-1] == child.split()[-1] != "0"  # the same run either way


def test_generator_workload_delivers_exactly_the_generated_packets(tmp_path: Path) -> None:
    sc = ibvp.Scenario({"name": "trace", "duration": "200us",
                        "topology": {"generator": "single_switch", "hosts": 4},
                        "outputs": {"packets_csv": True}})

    def packets():
        for i in range(60):
            src, dst = ("h1", "h3") if i % 3 else ("h2", "h4")
            yield (i * 1e-6, src, dst, 64 * (1 + i % 8), i % 2)

    expected = sorted((p[1], p[2], p[3]) for p in packets())
    res = ibvp.run(sc, tmp_path, workload=packets(), timeout=TIMEOUT)
    p = res.summary["packets"]
    assert p["injected"] == p["delivered"] == 60 and p["dropped"] == 0 and p["in_flight"] == 0
    got = sorted(zip(res.packets["src"], res.packets["dst"], res.packets["payload_bytes"]))
    assert got == expected
    # One flow per (source, SL), named as the C++ trace source names them.
    assert set(res.flows["name"]) == {"trace/h1/sl0", "trace/h1/sl1", "trace/h2/sl0", "trace/h2/sl1"}
    assert (tmp_path / "workload.csv").read_text().startswith("time_s,src,dst,payload_bytes,sl\n")


def test_bad_workload_item_is_refused_before_running(tmp_path: Path) -> None:
    sc = {"duration": "1ms", "topology": {"generator": "single_switch", "hosts": 2}}
    with pytest.raises(ValueError, match="workload item 1"):
        ibvp.run(sc, tmp_path, workload=iter([(0.0, "h1", "h2", 64, 0), (1e-6, "h1", "h2")]))


def test_a_rerun_into_the_same_directory_leaves_no_stale_tables(minimal_yaml: Path, tmp_path: Path) -> None:
    sc = ibvp.Scenario.from_yaml(minimal_yaml).set("duration", "200us")
    first = ibvp.run(sc.copy().set("outputs.packets_csv", True), tmp_path, timeout=TIMEOUT)
    assert len(first.packets) > 0 and (tmp_path / "packets.parquet").exists()
    second = ibvp.run(sc, tmp_path, timeout=TIMEOUT)  # packets_csv: false
    with pytest.raises(FileNotFoundError):
        second.packets
