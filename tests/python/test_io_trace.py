"""ibvp.io_trace (seed 001 Sec. 2, 3.2): trace readers, the synthetic stand-in, disk
placement, accesses as packets of at most 512 bytes, and Fig. 2's metrics over time."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ibvp import io_trace as io
from ibvp.errors import ConfigError


def test_an_access_is_split_into_packets_of_at_most_512_bytes() -> None:
    assert io.split(1300) == [512, 512, 276]
    assert io.split(1024) == [512, 512]
    assert io.split(100) == [100]


def test_disksim_trace_is_read_sorted_from_time_zero_with_reads_from_flag_bit_0(tmp_path: Path) -> None:
    path = tmp_path / "t.ascii"
    path.write_text("# cello, converted\n12.5 3 100 16 1\n10.0 1 7 2 0\n")
    reqs = io.read_trace(path)
    assert reqs == [io.IoRequest(0.0, 1, 1024, False), io.IoRequest(pytest.approx(2.5e-3), 3, 8192, True)]


def test_msr_csv_trace_is_read_in_windows_ticks(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("128166372003061629,src1,2,Read,3154152960,4096,1331\n"
                    "128166372003161629,src1,0,Write,0,512,100\n")
    reqs = io.read_trace(path)
    assert [(r.device, r.bytes, r.read) for r in reqs] == [(2, 4096, True), (0, 512, False)]
    assert reqs[1].time_s == pytest.approx(0.01)  # 100,000 ticks of 100 ns


def test_a_malformed_trace_line_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "t.ascii"
    path.write_text("1.0 0 0 8 1\n2.0 0 x 8 1 9\n")
    with pytest.raises(ConfigError) as e:
        io.read_trace(path)
    assert e.value.line == 2 and e.value.key == "line" and str(path) in str(e.value) and e.value.fix
    path.write_text("1.0 0 0 eight 1\n")
    with pytest.raises(ConfigError) as e:
        io.read_trace(path)
    assert e.value.key == "blocks"


# HP SRT records built word by word (32-bit big-endian), as DiskSim's hpl reader takes them:
# size, id (version << 16 | type), sec, usec, start, stop, bytes, sectno, devno (disk in bits
# 8..15), drivertype, cylno, ioflags (bit 0: read), info [, queuelen (version 4)]
# [, susflags (SUSPECTIO)].
def _word(v: int) -> bytes:
    return bytes([(v >> 24) & 0xFF, (v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF])


def _srt_record(version: int, kind: int, sec: int, usec: int, nbytes: int, disk: int, read: bool) -> bytes:
    extra = (version == 4) + (kind == 4)
    words = [52 + 4 * extra, (version << 16) | kind, sec, usec, 120, 4500, nbytes, 77_000, disk << 8, 3, 410,
             (0x1 if read else 0x0) | 0x100, 0] + [5] * extra
    return b"".join(_word(w) for w in words)


SRT_HEADER = b'tracename\t= "cello";\ntracedate\t= "Thu Jan 14 00:00:00 1999";\n\x0c'


def test_srt_trace_is_read_from_big_endian_records_after_its_header_skipping_suspect_ones(tmp_path: Path) -> None:
    first = _srt_record(3, 1, 10, 500_000, 4096, 3, True)
    # The first record's bytes spelled out: 52 bytes, version 3, SHORTIO, 10.5 s, 4096 bytes,
    # devno 0x0300 (disk 3), ioflags READ | ASYNC.
    assert first[:16] == bytes.fromhex("00000034" "00030001" "0000000a" "0007a120")
    assert first[24:28] == bytes.fromhex("00001000") and first[32:36] == bytes.fromhex("00000300")
    assert first[44:48] == bytes.fromhex("00000101")
    path = tmp_path / "cello.srt"
    path.write_bytes(SRT_HEADER + first + _srt_record(3, 4, 10, 600_000, 512, 9, True)
                     + _srt_record(4, 1, 10, 500_250, 8192, 7, False))
    reqs = io.read_trace(path)  # .srt: the srt format
    assert reqs == [io.IoRequest(0.0, 3, 4096, True), io.IoRequest(pytest.approx(250e-6), 7, 8192, False)]
    # Without the header (DiskSim's hpl2), the same records read the same.
    path.write_bytes(first + _srt_record(4, 1, 10, 500_250, 8192, 7, False))
    assert io.read_trace(path, "srt") == reqs


def test_a_damaged_srt_trace_is_refused_naming_file_byte_and_field(tmp_path: Path) -> None:
    path = tmp_path / "t.srt"
    good = _srt_record(3, 1, 1, 0, 4096, 1, False)
    path.write_bytes(SRT_HEADER + good + good[:30])
    with pytest.raises(ConfigError) as e:
        io.read_trace(path)
    assert e.value.key == "record" and f"byte {len(SRT_HEADER) + 52}" in str(e.value) and str(path) in str(e.value)
    assert "truncated" in e.value.fix
    path.write_bytes(SRT_HEADER + good[:4] + _word(0x00030002) + good[8:])  # a LONGIO record
    with pytest.raises(ConfigError) as e:
        io.read_trace(path)
    assert e.value.key == "id"
    path.write_bytes(b"12.5 3 100 16 1\n")  # DiskSim ASCII: not a record, and no header either
    with pytest.raises(ConfigError) as e:
        io.read_trace(path)
    assert e.value.key == "header" and "disksim" in e.value.fix
    path.write_bytes(SRT_HEADER + _word(56) + good[4:] + _word(0))
    with pytest.raises(ConfigError) as e:
        io.read_trace(path)
    assert e.value.key == "size" and "52" in e.value.problem


def test_synthetic_stand_in_is_bursty_mostly_writes_and_deterministic() -> None:
    a = io.synthetic_requests(0.5, 23, seed=3)
    assert a == io.synthetic_requests(0.5, 23, seed=3)
    writes = sum(not r.read for r in a) / len(a)
    assert 0.55 < writes < 0.65
    # ON/OFF: the gaps between requests include OFF periods far longer than the mean gap
    # inside a burst (1 / 80,000 s).
    gaps = [b.time_s - x.time_s for x, b in zip(a, a[1:])]
    assert max(gaps) > 50 * (1 / 80000)
    assert all(0 <= r.device < 23 for r in a)


def test_per_device_stand_in_keeps_the_mean_rate_but_its_bursts_do_not_coincide() -> None:
    common = io.synthetic_requests(1.0, 23, seed=3)
    own = io.synthetic_requests(1.0, 23, seed=3, per_device=True)
    assert own == io.synthetic_requests(1.0, 23, seed=3, per_device=True)
    # Mean rate 80,000/s x 2 ms / (2 + 8 ms) = 16,000/s either way.
    assert 11200 < len(common) < 20800 and 11200 < len(own) < 20800  # within 30 %
    assert {r.device for r in own} == set(range(23))

    def empty_ms(reqs: list) -> float:  # the fraction of 1 ms windows without a request
        busy = {int(r.time_s * 1e3) for r in reqs}
        return 1 - len(busy) / 1000

    # One ON/OFF process: most milliseconds fall in an OFF period (8 of 10 on average).
    # Twenty-three: all OFF at once with probability 0.8^23, under 1 %.
    assert empty_ms(common) > 0.5
    assert empty_ms(own) < 0.05


def test_disk_placements_follow_sec_2() -> None:
    def switch(name: str) -> int:
        return int(name[1:].split("_")[0])

    for placement in io.PLACEMENTS:
        disks = io.place_disks(32, placement=placement, seed=2)
        assert len(disks) == 23 and len(set(disks)) == 23
        assert len(io.hosts_of(32, disks)) == 128 - 23
    assert len({switch(d) for d in io.place_disks(32, placement="uniform")}) == 23
    assert len({switch(d) for d in io.place_disks(32, placement="concentrated")}) <= 6


def test_reads_go_out_as_a_request_and_come_back_as_data_and_writes_the_other_way() -> None:
    reqs = [io.IoRequest(0.03, 0, 1300, True), io.IoRequest(0.06, 1, 600, False)]
    pk = io.io_packets(reqs, ["d0", "d1"], ["h"], compression=15, sls=1)
    assert pk == [(0.002, "h", "d0", 32, 0), (0.002, "d0", "h", 512, 0), (0.002, "d0", "h", 512, 0),
                  (0.002, "d0", "h", 276, 0), (0.004, "h", "d1", 512, 0), (0.004, "h", "d1", 88, 0),
                  (0.004, "d1", "h", 32, 0)]


def test_every_packet_to_or_from_a_disk_uses_that_disks_sl() -> None:
    reqs = io.synthetic_requests(0.2, 23, seed=1)
    disks = io.place_disks(32, seed=1)
    pk = io.io_packets(reqs, disks, io.hosts_of(32, disks), sls=4, seed=5)
    sl_of: dict[str, set[int]] = {}
    for _, src, dst, _, sl in pk:
        sl_of.setdefault(src if src in disks else dst, set()).add(sl)
    assert all(len(s) == 1 for s in sl_of.values()) and {x for s in sl_of.values() for x in s} <= {0, 1, 2, 3}
    assert len({x for s in sl_of.values() for x in s}) > 1


def test_time_series_averages_message_latency_so_far_and_counts_waiting_packets() -> None:
    # Two messages: m1 (2 packets, created 0, last arrival at 3 us), m2 (1 packet, created
    # 1 us, arrival at 6 us); one packet of m3 (created 2 us) never left its source.
    packets = pd.DataFrame([
        ("a", "b", 0.0, 500.0, 2000.0), ("a", "b", 0.0, 1500.0, 3000.0), ("c", "b", 1000.0, 4000.0, 6000.0)],
        columns=["src", "dst", "created_ns", "injected_ns", "done_ns"])
    workload = [(0.0, "a", "b", 512, 0), (0.0, "a", "b", 512, 0), (1e-6, "c", "b", 32, 0), (2e-6, "c", "b", 32, 0)]
    ts = io.time_series(packets, 1e-6, workload=workload, hosts=["a", "c"])
    # At 1 us: created 3, injected 1 -> 2 waiting over 2 hosts.
    assert ts.loc[0, "waiting_per_host"] == 1.0 and pd.isna(ts.loc[0, "cumulative_latency_ns"])
    assert ts.loc[2, "cumulative_latency_ns"] == 3000.0          # at 3 us: m1 only
    assert ts.loc[5, "cumulative_latency_ns"] == (3000.0 + 5000.0) / 2  # at 6 us: m1 and m2
    assert ts.loc[5, "waiting_per_host"] == 0.5                  # m3's packet, still at c


def test_plot_kinds_draw_a_run_fed_a_disk_workload(tmp_path: Path) -> None:
    import ibvp
    from ibvp import plots

    reqs = [io.IoRequest(i * 2e-6, i % 3, 1300, i % 2 == 0) for i in range(20)]
    disks = io.place_disks(8, disks=3, seed=1)
    pk = io.io_packets(reqs, disks, io.hosts_of(8, disks))
    sc = ibvp.Scenario({"name": "io8", "duration": "200us", "topology": {"generator": "random_irregular",
                        "switches": 8, "seed": 1}, "routing": "updn", "outputs": {"packets_csv": True}})
    res = ibvp.run(sc, tmp_path / "run", workload=pk)
    ts = io.read_time_series(res.out_dir)
    assert ts["messages"].iloc[-1] == 40  # every request and its reply arrived
    assert ts.equals(io.time_series(res.packets, 200e-6 / 40, workload=pk))
    for kind in ("io-latency", "io-waiting"):
        paths = plots.plot(kind, res.out_dir)
        assert all(p.exists() for p in paths)
