"""Checks the C++ wire encoder against an independent Python reference.

tests/ib/vectors.txt holds packets encoded by models/ib/wire.cpp (the C++ test
Vectors.EncodedPacketsMatchTheCommittedVectorsFileByteForByte asserts the file matches
the encoder byte for byte). Here every line is decoded with ib_reference.py, a from-scratch
bit-serial implementation of the IBA CRC procedure, and:
  * the ICRC and VCRC (LPCRC for flow control packets) in the bytes must equal the ones
    recomputed independently;
  * the decoded header fields must equal the key=value expectations on the same line.
The reference itself is first checked against public vectors (CRC catalogue check value,
Linux rxe's masked-LRH seed, and a ConnectX-4 Lx captured RoCE CNP with its hardware ICRC).
"""

from __future__ import annotations

import os
import sys
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ib_reference as ref  # noqa: E402


def _source_dir() -> Path:
    env = os.environ.get("IBVP_SOURCE_DIR")
    if env and (Path(env) / "tests/ib/vectors.txt").is_file():
        return Path(env)
    return Path(__file__).resolve().parents[2]


VECTORS = _source_dir() / "tests/ib/vectors.txt"


def _load_vectors():
    out = []
    for lineno, line in enumerate(VECTORS.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, hexbytes, *kvs = line.split()
        fields = dict(kv.split("=", 1) for kv in kvs)
        out.append(pytest.param(name, bytes.fromhex(hexbytes), fields, id=name))
    return out


ALL = _load_vectors()
PACKETS = [p for p in ALL if not p.values[0].startswith("fcp_")]
FCPS = [p for p in ALL if p.values[0].startswith("fcp_")]


def _expected(key: str, text: str):
    if key in ("sgid", "dgid"):
        return bytes.fromhex(text)
    return int(text, 0)


# --- the reference against public vectors ---------------------------------------------


def test_reference_crc32_matches_catalogue_check_value():
    # CRC-32/ISO-HDLC check value for "123456789" (reveng CRC catalogue), which is
    # 0xCBF43926 transmitted low byte first.
    assert ref.serial_crc(b"123456789", 32, ref.CRC32_POLY) == bytes.fromhex("2639f4cb")


def test_reference_crc32_agrees_with_zlib_on_random_data():
    import random

    rng = random.Random(5)
    for n in (0, 1, 3, 17, 300):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert ref.serial_crc(data, 32, ref.CRC32_POLY) == zlib.crc32(data).to_bytes(4, "little")


def test_reference_masked_lrh_register_equals_linux_rxe_seed():
    # drivers/infiniband/sw/rxe/rxe_icrc.c starts from 0xdebb20e3, the CRC register after
    # 8 bytes of 0xff (the masked LRH) from the all-ones preset. The register is the
    # complement of the finished CRC, read low byte first.
    crc = int.from_bytes(ref.serial_crc(b"\xff" * 8, 32, ref.CRC32_POLY), "little")
    assert crc ^ 0xFFFFFFFF == 0xDEBB20E3


def test_reference_reproduces_connectx4_hardware_icrc_of_captured_roce_cnp():
    # Scapy test/contrib/roce.uts, "RoCE CNP captured on ConnectX-4 Lx" (Ethernet header
    # dropped). RoCEv2 computes the IBA ICRC with 64 one bits for the absent LRH and the
    # IP/UDP variant fields (TOS, TTL, IP checksum, UDP checksum) set to ones.
    frame = bytes.fromhex(
        "45c2003c718c400040119161 0a001101 0a001201"
        "000012b700280000"
        "8100ffff 40000118 00000000"
        "00000000000000000000000000000000"
        "82fd002a".replace(" ", "")
    )
    m = bytearray(b"\xff" * 8 + frame[:-4])
    ip = 8
    m[ip + 1] = 0xFF
    m[ip + 8] = 0xFF
    m[ip + 10 : ip + 12] = b"\xff\xff"
    m[ip + 26 : ip + 28] = b"\xff\xff"
    m[ip + 28 + 4] = 0xFF  # BTH resv8a
    assert ref.serial_crc(bytes(m), 32, ref.CRC32_POLY) == frame[-4:]


# --- the committed vectors ---------------------------------------------------------------


def test_vectors_file_covers_the_header_combinations():
    assert VECTORS.is_file(), VECTORS
    assert len(PACKETS) >= 10 and len(FCPS) >= 2
    kinds = set()
    for p in PACKETS:
        f = ref.decode(p.values[1])
        lay = ref.LAYOUTS[f["opcode"]]
        kinds.add(("grh", f["lnh"] == ref.LNH_GLOBAL))
        kinds.update(k for k, present in zip(("deth", "reth", "aeth", "immdt"), lay) if present)
        kinds.add(("pad", f["padcnt"]))
    for want in ("deth", "reth", "aeth", "immdt", ("grh", True), ("grh", False)):
        assert want in kinds
    assert {("pad", n) for n in range(4)} <= kinds


@pytest.mark.parametrize("name,pkt,fields", PACKETS)
def test_vector_crcs_match_independent_bit_serial_computation(name, pkt, fields):
    f = ref.decode(pkt)
    assert f["icrc"] == ref.icrc_wire(pkt[:-6]), "ICRC"
    assert f["vcrc"] == ref.vcrc_wire(pkt[:-2]), "VCRC"
    # A third, unrelated CRC-32 implementation (zlib) over the same masked bytes.
    assert f["icrc"] == zlib.crc32(ref.icrc_masked(pkt[:-6])).to_bytes(4, "little")


@pytest.mark.parametrize("name,pkt,fields", PACKETS)
def test_vector_decodes_to_the_listed_fields(name, pkt, fields):
    f = ref.decode(pkt)
    decoded = {k: v for k, v in f.items() if k not in ("payload_bytes", "icrc", "vcrc")}
    assert set(decoded) == set(fields), "field sets differ"
    for key, text in fields.items():
        assert decoded[key] == _expected(key, text), key
    # Lengths: PktLen counts LRH..ICRC in 4-byte words; GRH PayLen counts BTH..ICRC bytes.
    assert f["pktlen"] * 4 == len(pkt) - 2
    if f["lnh"] == ref.LNH_GLOBAL:
        assert f["paylen"] == len(pkt) - 2 - ref.LRH_BYTES - ref.GRH_BYTES
        assert f["nxthdr"] == 0x1B
    assert (f["payload"] + f["padcnt"]) % 4 == 0
    assert f["padcnt"] == (4 - f["payload"] % 4) % 4
    # Pad bytes are written as zeros.
    end = len(pkt) - 6
    assert pkt[end - f["padcnt"] : end] == b"\x00" * f["padcnt"]


@pytest.mark.parametrize("name,pkt,fields", PACKETS)
def test_vector_variant_fields_do_not_change_reference_icrc(name, pkt, fields):
    b = bytearray(pkt[:-6])
    base = ref.icrc_wire(bytes(b))
    bth = ref.LRH_BYTES + (ref.GRH_BYTES if (b[1] & 3) == ref.LNH_GLOBAL else 0)
    b[0] ^= 0xF0  # VL
    b[bth + 4] ^= 0xC0  # FECN, BECN
    assert ref.icrc_wire(bytes(b)) == base
    b[bth + 5] ^= 0x01  # DestQP: invariant
    assert ref.icrc_wire(bytes(b)) != base


@pytest.mark.parametrize("name,pkt,fields", FCPS)
def test_flow_control_vector_fields_and_lpcrc(name, pkt, fields):
    f = ref.decode_fcp(pkt)
    assert f["lpcrc"] == ref.lpcrc_wire(pkt[:4])
    for key, text in fields.items():
        assert f[key] == int(text, 0), key
