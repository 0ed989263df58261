"""Hostile scenario files: both front ends refuse each one quickly, with the same message.

`ibvp validate FILE` (Python: PyYAML behind the limits of ibvp._yaml) and `ibvp-sim FILE`
(C++: platform/params/input_text.cpp) must print the same ConfigError for each file, and the
in-process `_core.validate` on the same text agrees where the text reaches it. Each input once
crashed or hung the Python side: RecursionError at 1,000 levels, a hang on an alias bomb, a bare
codec error on invalid UTF-8, a traceback on a directory.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ibvp import _yaml
from ibvp.scenario import read_input_text

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IBVP_BUILD", ROOT / "build"))


def _billion_laughs() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return ("\n".join(lines) + "\nname: x\n").encode()


# name -> (file content, or None for a directory; the start of the expected problem)
HOSTILE = {
    "nested_lists_1000": (b"name: x\nflows: " + b"[" * 1000 + b"]" * 1000 + b"\n",
                          ":2: mappings and lists nested more than 64 deep"),
    "nested_maps_1000": (b"name: x\nswitch:\n" + b"".join(b"  " * (i + 1) + b"k:\n" for i in range(1000)) + b"\n",
                         ":66: mappings and lists nested more than 64 deep"),
    "alias_bomb": (_billion_laughs(), ":7: aliases expand the document to more than 1000000 values"),
    "recursive_alias": (b"name: x\nflows: &f [1, *f]\n", ":2: an alias inside the value of its own anchor"),
    "invalid_utf8": (b"name: r\xc3\xa9seau\nseed: \xff\xfe\n", ":2: invalid UTF-8 byte 0xff at column 7"),
    "truncated_utf8": (b"name: \xe2\x82\n", ":1: invalid UTF-8 byte 0xe2 at column 7"),
    "string_10MB": (b"name: " + b"a" * (10 << 20) + b"\n", "10485767 bytes, more than the limit"),
    "string_100kB": (b"seed: 1\nname: " + b"a" * 100_000 + b"\n", ":2: a value of 100000 bytes, more than the limit"),
    "nul_byte": (b"name: x\x00y\n", ":1: character U+0000 at column 8 is not allowed in YAML"),
    "empty": (b"", "empty"),
    "directory": (None, "a directory"),
    "elf_binary": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), ":1: character U+007F at column 1"),
    "ini_file": (b"[general]\nname = x\n", ":2: the input holds 2 YAML documents"),
    "broken_json": (b'{"name": "x",\n "seed": [1,}\n', ":2: YAML syntax error"),
    "plain_text": (b"This is not a scenario.\n", ':1: expected a mapping of keys at the top, got "This is not'),
    "control_in_echo": (b'"line\\nbreak\\x01"\n', ':1: expected a mapping of keys at the top, got "line\\nbreak\\x01"'),
    "two_documents": (b"name: a\n---\nname: b\n", ":3: the input holds 2 YAML documents"),
}


# Problems with the file as a whole, worded by the reader of input files (shared by both
# front ends): only what the message must hold is checked.
FILE_LEVEL = {"string_10MB", "empty", "directory"}


def _write(tmp_path: Path, name: str) -> Path:
    content, _ = HOSTILE[name]
    path = tmp_path / f"{name}.yaml"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    return path


def _sim_message(path: Path) -> str:
    sim = BUILD / "ibvp-sim"
    assert sim.exists(), f"{sim} missing: run `make` first"
    r = subprocess.run([str(sim), str(path), "--out", str(path.parent / "out"), "--quiet"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("ibvp-sim: ")
    return r.stderr[len("ibvp-sim: "):].strip()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_both_front_ends_refuse_a_hostile_file_with_the_same_message(cli, tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name)
    code, out, err = cli("validate", path)
    assert code == 2, err
    assert out == ""
    assert err.startswith("ibvp: ") and "Traceback" not in err
    python_message = err[len("ibvp: "):].strip()
    assert python_message == _sim_message(path)
    if name in FILE_LEVEL:
        assert python_message.startswith(str(path)) and HOSTILE[name][1] in python_message
    else:
        assert python_message.startswith(str(path) + HOSTILE[name][1])
    assert "(fix: " in python_message


@pytest.mark.parametrize("name", ["nested_lists_1000", "alias_bomb", "nul_byte", "string_100kB", "plain_text"])
def test_core_validate_of_hostile_text_agrees_with_the_python_check(tmp_path: Path, name: str) -> None:
    from ibvp import ConfigError, Scenario
    from ibvp._core import ConfigError as CoreConfigError, validate

    text = HOSTILE[name][0].decode()
    with pytest.raises(CoreConfigError) as core_err:
        validate(text, "doc.yaml", [], str(tmp_path))
    with pytest.raises(ConfigError) as py_err:
        Scenario.from_text(text, source="doc.yaml", base_dir=tmp_path)
    assert str(py_err.value) == str(core_err.value)


def test_limits_leave_the_shipped_scenarios_alone(root: Path) -> None:
    for path in sorted((root / "configs").rglob("*.yaml")):
        text = read_input_text(path, "scenario file")
        _yaml.check_yaml_limits(text, str(path))


def test_a_document_at_the_nesting_limit_is_read() -> None:
    # 64 levels are allowed, the 65th is refused: the limit is where the messages say.
    at_limit = "k: " + "[" * 63 + "]" * 63 + "\n"
    _yaml.check_yaml_limits(at_limit, "doc.yaml")
    with pytest.raises(Exception, match="nested more than 64 deep"):
        _yaml.check_yaml_limits("k: " + "[" * 64 + "]" * 64 + "\n", "doc.yaml")
