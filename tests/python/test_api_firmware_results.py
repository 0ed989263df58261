"""The firmware's counters and log lines reach the Python results (docs/firmware.md):
Results.firmware holds summary.json's firmware block as a DataFrame, one row per HCA, and
Results.firmware_log the lines of firmware.log."""
from __future__ import annotations

from pathlib import Path

import pytest

import ibvp

SCENARIO = ("duration: 2ms\n"
            "topology: {generator: single_switch, hosts: 2}\n"
            "endpoint_model: hca\n"
            "hca: {firmware_args: \"wqe_cycles=30\"}\n"
            "perftest: {test: send_bw, client: h1, server: h2, sizes: [1024], iterations: 20, tx_depth: 4}\n"
            "outputs: {packets_csv: false}\n")


def test_firmware_counters_and_log_are_in_the_python_results(tmp_path: Path) -> None:
    scenario = tmp_path / "bw.yaml"
    scenario.write_text(SCENARIO)
    res = ibvp.run(scenario, tmp_path / "out", timeout=120)
    fw = res.firmware
    assert list(fw.index) == ["h1", "h2"]
    block = {h["hca"]: h for h in res.summary["firmware"]}
    for hca, row in fw.iterrows():
        for name, value in block[hca]["counters"].items():
            assert row[name] == value, (hca, name)
        assert row["events"] == block[hca]["events"]
        assert row["cycles"] == block[hca]["cycles"]
    # 20 one-packet SENDs left h1 and reached h2 (numbers the run must reproduce, not zeros).
    assert fw.loc["h1", "tx_messages"] == 20
    assert fw.loc["h2", "rx_packets"] == 20
    assert res.firmware_log == ["0.000000 us h1 INFO started with firmware_args 'wqe_cycles=30'",
                                "0.000000 us h2 INFO started with firmware_args 'wqe_cycles=30'"]


def test_a_fabric_only_run_has_no_firmware_block(tmp_path: Path) -> None:
    scenario = tmp_path / "fab.yaml"
    scenario.write_text("duration: 100us\n"
                        "topology: {generator: single_switch, hosts: 2}\n"
                        "flows: [{src: h1, dst: h2, load: 0.1, generator: constant}]\n")
    res = ibvp.run(scenario, tmp_path / "out", timeout=120)
    assert "firmware" not in res.summary
    with pytest.raises(KeyError, match="endpoint_model: hca"):
        res.firmware
    assert not (res.out_dir / "firmware.log").exists()
