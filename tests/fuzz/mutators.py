"""Mutations of scenario documents, topology files and ibnetdiscover dumps (docs/fuzzing.md).

Every function takes a `random.Random` and returns a new input; nothing here runs anything.
YAML is read with PyYAML's BaseLoader (every scalar stays text) and written back with no
implicit typing, so a value keeps the plain spelling the C++ loader reads (`7`, `40ns`, `4X`)
and a mutation decides exactly what text the loader sees.
"""
from __future__ import annotations

import copy
import random
import re
from typing import Any, Callable

import yaml


class _Dumper(yaml.SafeDumper):
    # No implicit resolvers: a string is written plain whenever YAML's syntax allows, so "7"
    # stays the plain scalar 7 (the C++ side reads a quoted '7' as text).
    yaml_implicit_resolvers: dict = {}


class Raw(str):
    """YAML text put into the document as it is (deep nesting, alias bombs, huge values)."""


class Quoted(str):
    """A string written double-quoted (escapes for control characters)."""


_Dumper.add_representer(Quoted, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", str(v), style='"'))


def load(text: str) -> Any:
    return yaml.load(text, Loader=yaml.BaseLoader)


def dump(data: Any) -> str:
    raws: list[str] = []

    def strip(v: Any) -> Any:
        if isinstance(v, Raw):
            raws.append(str(v))
            return f"RAW{len(raws) - 1}RAW"
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    text = yaml.dump(strip(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 30)
    for i, r in enumerate(raws):
        text = text.replace(f"RAW{i}RAW", r, 1)
    return text


# ---- values -------------------------------------------------------------------------------

OUT_OF_RANGE = ["-1", "0", "-0", "1", "255", "256", "65535", "65536", "2147483647", "2147483648", "4294967295",
                "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551615",
                "18446744073709551616", "99999999999999999999999", "-9223372036854775809", "1e308", "-1e308",
                "1.7976931348623157e309", "0.0000001", "4.9e-324", "1.5", "-0.5", "0x10", "010", "1_000"]
NON_FINITE = [".nan", ".NaN", ".inf", "-.inf", "+.inf", "nan", "inf", "-inf", "1e400", "-1e400", "NaN"]
WRONG_UNITS = ["5", "5 furlongs", "5nss", "5 NS", "-5ns", "5e3ns", "1e30s", "18446744073709551615ps",
               "18446744073709551616ps", "0.0000000001ps", "5ms5", "ns", "5 m s", "1.5.5us", "+5us", "99999999s",
               "5 µs", "5ps5ps", "0x5ns", "213503982334601us", "10000000000000000000000ns"]
WRONG_TYPES: list[Any] = [[], {}, ["a", "b"], {"x": "1"}, "", "true", "false", "null", "~", Quoted("7"),
                          Quoted("0.5"), "abc", "[", Raw("!!binary aGVsbG8="), Raw("!!float 1"), Raw("!custom 3")]
NON_ASCII = ["réseau", "网络交换机", "🚀🔥", "שלום", "e\u0301", "\u200b", "\ufeffbom", "ab\u202ecd", "Ω≈ç√",
             Quoted("tab\there"), Quoted("ctl\x01\x1f"), Quoted("line\nbreak"), Quoted('quote"comma,semi;'),
             Quoted("back\\slash"), Quoted("\x7f"), "a,b", "a\tb"]

TIME_LIKE = re.compile(r"^\s*[0-9.]+\s*(ps|ns|us|ms|s)\s*$")
NUMBER_LIKE = re.compile(r"^[-+]?[0-9.]+(e[-+]?[0-9]+)?$")


def deep_value(rng: random.Random) -> Raw:
    depth = rng.choice([65, 100, 500, 1000, 5000])
    if rng.random() < 0.5:
        return Raw("[" * depth + "]" * depth)
    return Raw("{a: " * depth + "1" + "}" * depth)


def alias_bomb(rng: random.Random) -> Raw:
    """Billion laughs inside one flow value: each level repeats the one before it nine times."""
    levels = rng.choice([4, 7, 9, 12])
    parts = ["&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        parts.append(f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return Raw("[" + ", ".join(parts) + "]")


def long_string(rng: random.Random) -> Raw:
    # Raw: PyYAML's emitter would take seconds over a megabyte of text.
    n = rng.choice([300, 4097, 70_000, 1 << 20, 2 << 20])
    s = rng.choice(["a", "é", "x/"]) * n
    return Raw(f'"{s}"') if rng.random() < 0.3 else Raw(s)


# ---- walking a document -------------------------------------------------------------------

Path = list  # of str keys and int indices


# Key paths ("duration", "hca.firmware_args") that mutations leave alone (fuzz.py --exclude-key).
EXCLUDED_KEYS: set[str] = set()


def path_text(p: Path) -> str:
    out = ""
    for s in p:
        out += f"[{s}]" if isinstance(s, int) else (f".{s}" if out else str(s))
    return out


def all_paths(doc: Any) -> list[Path]:
    """Every node below the top, as key paths (but the excluded keys)."""
    out: list[Path] = []

    def walk(v: Any, p: Path) -> None:
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else []
        for k, x in items:
            if path_text(p + [k]) in EXCLUDED_KEYS:
                continue
            out.append(p + [k])
            walk(x, p + [k])

    walk(doc, [])
    return out


def get(doc: Any, p: Path) -> Any:
    for s in p:
        doc = doc[s]
    return doc


def put(doc: Any, p: Path, value: Any) -> None:
    get(doc, p[:-1])[p[-1]] = value


def scalar_paths(doc: Any) -> list[Path]:
    return [p for p in all_paths(doc) if isinstance(get(doc, p), str)]


def _pick(rng: random.Random, paths: list[Path]) -> Path | None:
    return rng.choice(paths) if paths else None


# ---- document mutations (scenarios and topology YAML) ---------------------------------------
# Each takes (rng, doc, ctx) and changes doc in place; ctx holds the mutant's directory facts
# (ctx["outside"]: a path outside the run's output directory, ctx["fifo"], ...). It returns
# a short description, or None when the document offers nothing to mutate.


def m_delete_key(rng, doc, ctx):
    p = _pick(rng, all_paths(doc))
    if p is None:
        return None
    parent = get(doc, p[:-1])
    del parent[p[-1]]
    return f"delete {p}"


def m_wrong_type(rng, doc, ctx):
    p = _pick(rng, all_paths(doc))
    if p is None:
        return None
    v = copy.deepcopy(rng.choice(WRONG_TYPES))
    put(doc, p, v)
    return f"{p} = {v!r}"


def m_out_of_range(rng, doc, ctx):
    paths = [p for p in scalar_paths(doc) if NUMBER_LIKE.match(get(doc, p))] or scalar_paths(doc)
    p = _pick(rng, paths)
    if p is None:
        return None
    v = rng.choice(OUT_OF_RANGE)
    put(doc, p, v)
    return f"{p} = {v}"


def m_non_finite(rng, doc, ctx):
    paths = [p for p in scalar_paths(doc) if NUMBER_LIKE.match(get(doc, p)) or TIME_LIKE.match(get(doc, p))]
    p = _pick(rng, paths or scalar_paths(doc))
    if p is None:
        return None
    v = rng.choice(NON_FINITE)
    if TIME_LIKE.match(get(doc, p)) and rng.random() < 0.5:
        v += rng.choice(["ns", "us", "s"])
    put(doc, p, v)
    return f"{p} = {v}"


def m_wrong_unit(rng, doc, ctx):
    paths = [p for p in scalar_paths(doc) if TIME_LIKE.match(get(doc, p))]
    p = _pick(rng, paths or scalar_paths(doc))
    if p is None:
        return None
    v = rng.choice(WRONG_UNITS)
    put(doc, p, v)
    return f"{p} = {v}"


def m_unknown_key(rng, doc, ctx):
    maps = [[]] + [p for p in all_paths(doc) if isinstance(get(doc, p), dict)]
    p = rng.choice(maps)
    m = get(doc, p)
    keys = list(m)
    if keys and rng.random() < 0.6:
        k = rng.choice(keys)
        i = rng.randrange(len(k) + 1)
        new = k[:i] + rng.choice("abcxyz_") + k[i:]  # a near miss: "did you mean"
    else:
        new = rng.choice(["foo", "Name", "FLOWS", "x" * 300, "é", "1", "true", "null", "<<"])
    m[new] = rng.choice(["1", "x", "10ns"])
    return f"{p} + {new!r}"


def m_non_ascii(rng, doc, ctx):
    p = _pick(rng, scalar_paths(doc))
    if p is None:
        return None
    v = rng.choice(NON_ASCII)
    put(doc, p, v)
    return f"{p} = {v!r}"


def m_long_string(rng, doc, ctx):
    p = _pick(rng, scalar_paths(doc))
    if p is None:
        return None
    v = long_string(rng)
    put(doc, p, v)
    return f"{p} = <{len(v)} chars>"


def m_deep_nesting(rng, doc, ctx):
    p = _pick(rng, all_paths(doc))
    if p is None:
        return None
    put(doc, p, deep_value(rng))
    return f"{p} = <deep>"


def m_alias_bomb(rng, doc, ctx):
    p = _pick(rng, all_paths(doc))
    if p is None:
        return None
    put(doc, p, alias_bomb(rng))
    return f"{p} = <alias bomb>"


# Keys that name files the run reads, and files it writes inside its output directory.
INPUT_FILE_KEYS = [["topology", "file"], ["trace", "file"], ["qos", "options_file"], ["hca", "firmware_image"]]
OUTPUT_FILE_KEYS = [["outputs", "timeline"], ["name"], ["outputs", "pcaps", 0, "file"]]


def m_special_file(rng, doc, ctx):
    """A read file that is a device, a directory, a FIFO, missing or unrelated."""
    key = rng.choice(INPUT_FILE_KEYS)
    value = rng.choice(["/dev/zero", "/dev/null", ".", "..", ctx["fifo"], "missing.yaml", "/etc/passwd",
                        ctx["self"], "", "/proc/self/mem", "/dev/urandom"])
    _put_creating(doc, key, value)
    return f"{key} = {value}"


def m_output_path(rng, doc, ctx):
    """A written file named to land outside the output directory (the fuzzer watches there)."""
    key = rng.choice(OUTPUT_FILE_KEYS)
    value = rng.choice(["../escaped.json", "../../escaped.json", ctx["outside"] + "/escaped.json",
                        "a/../../escaped.json", ctx["outside"], "/", "", ".", "..", "sub/dir/x.json",
                        ctx["outside_link"] + "/escaped.json"])
    if key[-1] == "file":
        # A pcap entry needs a node and port to get as far as the file name.
        outs = doc.setdefault("outputs", {}) if isinstance(doc, dict) else {}
        if isinstance(outs, dict):
            pc = outs.get("pcaps")
            if not isinstance(pc, list) or not pc or not isinstance(pc[0], dict):
                outs["pcaps"] = [{"node": ctx.get("host", "h1"), "port": "1"}]
            outs["pcaps"][0]["file"] = value
        return f"outputs.pcaps[0].file = {value}"
    _put_creating(doc, key, value)
    return f"{key} = {value}"


def _put_creating(doc: Any, key: Path, value: Any) -> None:
    if not isinstance(doc, dict):
        return
    cur = doc
    for k in key[:-1]:
        if not isinstance(cur.get(k), dict):
            cur[k] = {}
        cur = cur[k]
    cur[key[-1]] = value


DOC_MUTATIONS: dict[str, Callable] = {
    "delete_key": m_delete_key, "wrong_type": m_wrong_type, "out_of_range": m_out_of_range,
    "non_finite": m_non_finite, "wrong_unit": m_wrong_unit, "unknown_key": m_unknown_key,
    "non_ascii": m_non_ascii, "long_string": m_long_string, "deep_nesting": m_deep_nesting,
    "alias_bomb": m_alias_bomb, "special_file": m_special_file, "output_path": m_output_path,
}


# ---- text mutations (any input) -------------------------------------------------------------

def t_truncate(rng, data: bytes) -> tuple[bytes, str]:
    n = rng.randrange(len(data) + 1) if data else 0
    return data[:n], f"truncate at {n}"


def t_random_bytes(rng, data: bytes) -> tuple[bytes, str]:
    b = bytearray(data)
    k = rng.randint(1, 8)
    for _ in range(k):
        pos = rng.randrange(len(b) + 1)
        byte = rng.choice([0, 0xff, 0xfe, 0xc3, 0x80, 0x1b, 0x7f, 0x0d, 0x09, rng.randrange(256)])
        if rng.random() < 0.5 and pos < len(b):
            b[pos] = byte
        else:
            b.insert(pos, byte)
    return bytes(b), f"{k} random bytes"


def t_duplicate_line(rng, data: bytes) -> tuple[bytes, str]:
    """Duplicated keys (YAML) or records (dumps): one line written twice in a row."""
    lines = data.split(b"\n")
    candidates = [i for i, l in enumerate(lines) if l.strip() and not l.lstrip().startswith(b"#")]
    if not candidates:
        return data, "no line"
    i = rng.choice(candidates)
    lines.insert(i + 1, lines[i])
    return b"\n".join(lines), f"line {i + 1} twice"


def t_delete_line(rng, data: bytes) -> tuple[bytes, str]:
    lines = data.split(b"\n")
    if not lines:
        return data, "no line"
    i = rng.randrange(len(lines))
    del lines[i]
    return b"\n".join(lines), f"line {i + 1} deleted"


TEXT_MUTATIONS = {"truncate": t_truncate, "random_bytes": t_random_bytes, "duplicate_key": t_duplicate_line}


# ---- ibnetdiscover dumps ---------------------------------------------------------------------

_PORT = re.compile(rb"^(\s*)\[(\d+)\]")
_GUID_LINE = re.compile(rb"^(switchguid|caguid)=0x([0-9a-fA-F]+)")
_PEER = re.compile(rb'("[^"]+")\[(\d+)\]')
_NODE = re.compile(rb'^(?:Switch|Ca)\s+\d+\s+("[^"]+")')
_LID = re.compile(rb"(\blid )(\d+)")
_LMC = re.compile(rb"(\blmc )(\d+)")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def d_swap_ports(rng, data):
    lines = _lines(data)
    ports = [i for i, l in enumerate(lines) if _PORT.match(l)]
    if len(ports) < 2:
        return data, "no ports"
    i, j = rng.sample(ports, 2)
    pi, pj = _PORT.match(lines[i]).group(2), _PORT.match(lines[j]).group(2)
    lines[i] = _PORT.sub(lambda m: m.group(1) + b"[" + pj + b"]", lines[i], count=1)
    lines[j] = _PORT.sub(lambda m: m.group(1) + b"[" + pi + b"]", lines[j], count=1)
    return b"\n".join(lines), f"ports of lines {i + 1} and {j + 1} swapped"


def d_huge_port(rng, data):
    lines = _lines(data)
    ports = [i for i, l in enumerate(lines) if _PORT.match(l) or _PEER.search(l)]
    if not ports:
        return data, "no ports"
    i = rng.choice(ports)
    v = rng.choice([b"0", b"255", b"256", b"65535", b"65536", b"4294967296", b"99999999999999999999", b"-1", b"1e3"])
    if _PEER.search(lines[i]) and rng.random() < 0.5:
        lines[i] = _PEER.sub(lambda m: m.group(1) + b"[" + v + b"]", lines[i], count=1)
    else:
        lines[i] = _PORT.sub(lambda m: m.group(1) + b"[" + v + b"]", lines[i], count=1)
    return b"\n".join(lines), f"line {i + 1} port {v.decode()}"


def d_duplicate_guid(rng, data):
    guids = [m.group(2) for m in map(_GUID_LINE.match, _lines(data)) if m]
    if len(guids) < 2:
        return data, "no guids"
    a, b = rng.sample(guids, 2)
    return data.replace(a, b), f"guid {a.decode()} made {b.decode()}"


def d_dangling_cable(rng, data):
    lines = _lines(data)
    peers = [i for i, l in enumerate(lines) if _PEER.search(l)]
    if not peers:
        return data, "no cables"
    i = rng.choice(peers)
    lines[i] = _PEER.sub(lambda m: b'"S-00000000deadbeef"[' + m.group(2) + b"]", lines[i], count=1)
    return b"\n".join(lines), f"line {i + 1} cabled to a missing node"


def d_self_loop(rng, data):
    lines = _lines(data)
    own = None
    cands = []
    for i, l in enumerate(lines):
        m = _NODE.match(l)
        if m:
            own = m.group(1)
        elif own and _PORT.match(l) and _PEER.search(l):
            cands.append((i, own))
    if not cands:
        return data, "no cables"
    i, g = rng.choice(cands)
    port = _PORT.match(lines[i]).group(2)
    if rng.random() < 0.5:
        port = str(int(port) % 2 + 1).encode()  # another port of the same node
    lines[i] = _PEER.sub(lambda m: g + b"[" + port + b"]", lines[i], count=1)
    return b"\n".join(lines), f"line {i + 1} cabled to its own node"


def d_lid_range(rng, data):
    pat = _LMC if rng.random() < 0.3 else _LID
    hits = list(pat.finditer(data))
    if not hits:
        return data, "no lids"
    m = rng.choice(hits)
    v = rng.choice([b"0", b"8", b"255", b"49151", b"49152", b"65535", b"65536", b"99999999999", b"-1"])
    what = f"{m.group(1).decode().strip()} at byte {m.start(2)} = {v.decode()}"
    return data[: m.start(2)] + v + data[m.end(2):], what


DUMP_MUTATIONS = {"truncate": t_truncate, "random_bytes": t_random_bytes, "duplicate_line": t_duplicate_line,
                  "delete_line": t_delete_line, "swap_ports": d_swap_ports, "huge_port": d_huge_port,
                  "duplicate_guid": d_duplicate_guid, "dangling_cable": d_dangling_cable, "self_loop": d_self_loop,
                  "lid_range": d_lid_range}


# ---- --set ------------------------------------------------------------------------------------

def random_set(rng: random.Random, schema_paths: list[str]) -> tuple[str, str]:
    """One `--set KEY=VALUE`: a declared key (or a malformed one) and a hostile value."""
    r = rng.random()
    if r < 0.1:
        arg = rng.choice(["=", "a..b=1", "flows[99].load=1", "[0]=1", "duration", "=1ms", "flows[x]=1",
                          "switch=", "topology.inline.links[0]=1", "é=1", "a" * 5000 + "=1"])
        return arg, "malformed --set"
    key = rng.choice([k for k in schema_paths if k not in EXCLUDED_KEYS])
    pool = rng.choice([OUT_OF_RANGE, NON_FINITE, WRONG_UNITS, ["[", "{", "[1, 2]", "{a: 1}", "", "null", "&a [*a]",
                                                               "'quoted'", "\"\\x00\"", "!!binary AA=="]])
    value = rng.choice(pool)
    if not isinstance(value, str):
        value = str(value)
    return f"{key}={value}", f"--set {key}={value[:40]}"
