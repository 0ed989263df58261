"""Independent reference for InfiniBand packet bytes: CRCs and header decoding.

Written from the InfiniBand Architecture Specification, Vol. 1, not from the C++ model
(models/ib/crc.cpp, models/ib/wire.cpp), so that the two can check each other:

* The CRCs are computed one bit at a time, literally following the procedure of IBA 7.8.1:
  a non-reflected shift register preset to all ones, the packet bytes in transmission
  order with each byte's least significant bit first, the remainder complemented, and the
  remainder's most significant bit transmitted first (so it becomes bit 0 of the first
  CRC byte). The C++ side uses the reflected, table-driven formulation instead.
* The ICRC masking (IBA 7.8.1): local packets have LRH.VL and BTH.resv8a (FECN, BECN,
  resv6) replaced by ones; global packets have the whole LRH, GRH.TClass, GRH.FlowLabel,
  GRH.HopLmt and BTH.resv8a replaced by ones.
* VCRC (IBA 7.8.2) and LPCRC (IBA 7.9.4): the same procedure with the 16-bit polynomial
  x^16 + x^12 + x^3 + x + 1 (0x100B), over LRH..ICRC and over the first 4 bytes of a flow
  control packet respectively.
* Header layouts: LRH (IBA 7.7), GRH (8.3), BTH (9.2), DETH/RETH/AETH/ImmDt (9.3); which
  extended headers follow an opcode: IBA Table 39, transcribed below.
"""

from __future__ import annotations

CRC32_POLY = 0x04C11DB7  # IBA 7.8.1, same as IEEE 802.3
CRC16_POLY = 0x100B  # IBA 7.8.2

LRH_BYTES = 8
GRH_BYTES = 40
BTH_BYTES = 12
LNH_LOCAL = 2
LNH_GLOBAL = 3


def serial_crc(data: bytes, width: int, poly: int) -> bytes:
    """The IBA CRC procedure, bit by bit; returns the CRC bytes in transmission order."""
    mask = (1 << width) - 1
    top = 1 << (width - 1)
    reg = mask  # preset to all ones
    for byte in data:
        for bit in range(8):  # least significant bit of each byte first
            feedback = bool(reg & top) != bool((byte >> bit) & 1)
            reg = (reg << 1) & mask
            if feedback:
                reg ^= poly
    reg ^= mask  # complement the remainder
    out = bytearray(width // 8)
    for k in range(width):  # remainder bit (width-1) is transmitted first
        if (reg >> (width - 1 - k)) & 1:
            out[k // 8] |= 1 << (k % 8)
    return bytes(out)


def icrc_masked(pkt: bytes) -> bytes:
    """Bytes LRH..pad (ICRC and VCRC excluded) with the variant fields set to ones."""
    b = bytearray(pkt)
    lnh = b[1] & 0x3
    if lnh == LNH_GLOBAL:
        b[0:LRH_BYTES] = b"\xff" * LRH_BYTES
        g = LRH_BYTES
        b[g] |= 0x0F  # TClass[7:4]; IPVer stays
        b[g + 1] = b[g + 2] = b[g + 3] = 0xFF  # TClass[3:0] + FlowLabel
        b[g + 7] = 0xFF  # HopLmt
        bth = LRH_BYTES + GRH_BYTES
    else:
        b[0] |= 0xF0  # VL
        bth = LRH_BYTES
    b[bth + 4] = 0xFF  # resv8a: FECN, BECN, resv6
    return bytes(b)


def icrc_wire(pkt_lrh_to_pad: bytes) -> bytes:
    return serial_crc(icrc_masked(pkt_lrh_to_pad), 32, CRC32_POLY)


def vcrc_wire(pkt_lrh_to_icrc: bytes) -> bytes:
    return serial_crc(pkt_lrh_to_icrc, 16, CRC16_POLY)


def lpcrc_wire(fcp_first4: bytes) -> bytes:
    return serial_crc(fcp_first4[:4], 16, CRC16_POLY)


# IBA Table 39: extended headers per opcode. Keys are the opcodes the model supports
# (RC 0x00-0x11, UC 0x20-0x2B, UD 0x64-0x65, CNP 0x81); values are
# (DETH, RETH, AETH, ImmDt, payload allowed).
def _layouts() -> dict[int, tuple[bool, bool, bool, bool, bool]]:
    rc_uc = {
        0x00: (False, False, False, False, True),  # SEND First
        0x01: (False, False, False, False, True),  # SEND Middle
        0x02: (False, False, False, False, True),  # SEND Last
        0x03: (False, False, False, True, True),  # SEND Last with Immediate
        0x04: (False, False, False, False, True),  # SEND Only
        0x05: (False, False, False, True, True),  # SEND Only with Immediate
        0x06: (False, True, False, False, True),  # RDMA WRITE First
        0x07: (False, False, False, False, True),  # RDMA WRITE Middle
        0x08: (False, False, False, False, True),  # RDMA WRITE Last
        0x09: (False, False, False, True, True),  # RDMA WRITE Last with Immediate
        0x0A: (False, True, False, False, True),  # RDMA WRITE Only
        0x0B: (False, True, False, True, True),  # RDMA WRITE Only with Immediate
    }
    rc_only = {
        0x0C: (False, True, False, False, False),  # RDMA READ Request
        0x0D: (False, False, True, False, True),  # RDMA READ Response First
        0x0E: (False, False, False, False, True),  # RDMA READ Response Middle
        0x0F: (False, False, True, False, True),  # RDMA READ Response Last
        0x10: (False, False, True, False, True),  # RDMA READ Response Only
        0x11: (False, False, True, False, False),  # Acknowledge
    }
    table = {}
    table.update(rc_uc)
    table.update(rc_only)
    table.update({0x20 | k: v for k, v in rc_uc.items()})  # UC uses the same layouts
    table[0x64] = (True, False, False, False, True)  # UD SEND Only
    table[0x65] = (True, False, False, True, True)  # UD SEND Only with Immediate
    table[0x81] = (False, False, False, False, False)  # CNP (annex A10): BTH only
    return table


LAYOUTS = _layouts()


class DecodeError(ValueError):
    pass


def _be(b: bytes) -> int:
    return int.from_bytes(b, "big")


def decode(pkt: bytes) -> dict:
    """Fields of one packet (LRH..VCRC), keyed as in tests/ib/vectors.txt.

    Integers for numeric fields, bytes for the GIDs, plus 'payload' (its length) and
    'payload_bytes', 'icrc' and 'vcrc' (the CRC bytes as found in the packet).
    """
    if len(pkt) < LRH_BYTES:
        raise DecodeError("shorter than an LRH")
    f: dict = {}
    f["vl"] = pkt[0] >> 4
    f["lver"] = pkt[0] & 0xF
    f["sl"] = pkt[1] >> 4
    f["lnh"] = pkt[1] & 0x3
    f["dlid"] = _be(pkt[2:4])
    f["pktlen"] = _be(pkt[4:6]) & 0x7FF
    f["slid"] = _be(pkt[6:8])
    if f["lnh"] not in (LNH_LOCAL, LNH_GLOBAL):
        raise DecodeError("raw packet")
    if f["pktlen"] * 4 + 2 != len(pkt):
        raise DecodeError(f"PktLen {f['pktlen']} does not match {len(pkt)} bytes")
    off = LRH_BYTES
    if f["lnh"] == LNH_GLOBAL:
        g = pkt[off : off + GRH_BYTES]
        w0 = _be(g[0:4])
        f["ipver"] = w0 >> 28
        f["tclass"] = (w0 >> 20) & 0xFF
        f["flowlabel"] = w0 & 0xFFFFF
        f["paylen"] = _be(g[4:6])
        f["nxthdr"] = g[6]
        f["hoplmt"] = g[7]
        f["sgid"] = bytes(g[8:24])
        f["dgid"] = bytes(g[24:40])
        off += GRH_BYTES
    b = pkt[off : off + BTH_BYTES]
    f["opcode"] = b[0]
    f["se"] = b[1] >> 7
    f["m"] = (b[1] >> 6) & 1
    f["padcnt"] = (b[1] >> 4) & 3
    f["tver"] = b[1] & 0xF
    f["pkey"] = _be(b[2:4])
    f["fecn"] = b[4] >> 7
    f["becn"] = (b[4] >> 6) & 1
    f["destqp"] = _be(b[5:8])
    f["a"] = b[8] >> 7
    f["psn"] = _be(b[9:12])
    off += BTH_BYTES
    if f["opcode"] not in LAYOUTS:
        raise DecodeError(f"opcode {f['opcode']:#x} not in the reference table")
    deth, reth, aeth, immdt, payload_ok = LAYOUTS[f["opcode"]]
    if deth:
        f["qkey"] = _be(pkt[off : off + 4])
        f["srcqp"] = _be(pkt[off + 5 : off + 8])
        off += 8
    if reth:
        f["va"] = _be(pkt[off : off + 8])
        f["rkey"] = _be(pkt[off + 8 : off + 12])
        f["dmalen"] = _be(pkt[off + 12 : off + 16])
        off += 16
    if aeth:
        f["syndrome"] = pkt[off]
        f["msn"] = _be(pkt[off + 1 : off + 4])
        off += 4
    if immdt:
        f["immdt"] = _be(pkt[off : off + 4])
        off += 4
    end = len(pkt) - 6
    if off > end:
        raise DecodeError("headers run into the ICRC")
    payload_len = end - off - f["padcnt"]
    if payload_len < 0 or (payload_len > 0 and not payload_ok):
        raise DecodeError("payload/pad inconsistent with the opcode")
    f["payload"] = payload_len
    f["payload_bytes"] = bytes(pkt[off : off + payload_len])
    f["icrc"] = bytes(pkt[end : end + 4])
    f["vcrc"] = bytes(pkt[end + 4 :])
    return f


def decode_fcp(pkt: bytes) -> dict:
    """Flow control packet (IBA 7.9.4): Op(4) FCTBS(12) VL(4) FCCL(12) LPCRC(16)."""
    if len(pkt) != 6:
        raise DecodeError("a flow control packet is 6 bytes")
    return {
        "op": pkt[0] >> 4,
        "fctbs": _be(pkt[0:2]) & 0xFFF,
        "vl": pkt[2] >> 4,
        "fccl": _be(pkt[2:4]) & 0xFFF,
        "lpcrc": bytes(pkt[4:6]),
    }
