"""A scenario: the document `ibvp-sim` runs, as one Python object.

    sc = ibvp.Scenario.from_yaml("configs/examples/minimal.yaml")
    sc.duration = "1ms"                      # top-level keys as attributes
    sc["switch.bypass_limit"] = 2            # any key path, as `--set` writes it
    sc.set("flows[0].load", 0.25)            # the same, chainable
    sc.flows.append({"name": "f3", "src": "h4", "dst": "h1"})
    sc.validate()                            # the C++ loader's verdict, or ConfigError
    print(sc.to_yaml())

The document stays a plain dict (`sc.data`); the C++ loader is the only judge of what is
valid, so nothing here duplicates its rules. What this class adds is bookkeeping:

- the directory relative paths (`topology.file`, `trace.file`) are resolved against, kept
  with the scenario and passed to the C++ side, and used to rebase those paths when the
  document is written elsewhere;
- the original text: as long as the document only changed through `set()`, the C++ side gets
  the file as written plus the `key=value` overrides (exactly `ibvp-sim --set`), so its
  errors point at lines of the user's file. Once the dict is edited otherwise, the document
  is written out again and errors refer to that text.
"""
from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from . import _yaml
from ._corelib import core
from .errors import ConfigError, from_core

# Keys whose values are paths relative to the scenario file's directory.
FILE_KEYS = (("topology", "file"), ("trace", "file"))

_PATH_STEP = re.compile(r"\.?([A-Za-z0-9_]+)|\[([0-9]{1,9})\]")
_PATH_FULL = re.compile(r"[A-Za-z0-9_]+(\[[0-9]{1,9}\])*(\.[A-Za-z0-9_]+(\[[0-9]{1,9}\])*)*")


def parse_key_path(path: str) -> list[str | int]:
    """`flows[2].ipd` -> ["flows", 2, "ipd"] (the syntax of `ibvp-sim --set`)."""
    path = path.strip()
    if not _PATH_FULL.fullmatch(path):
        raise ConfigError(f"set: {path}: malformed key path (fix: join keys with dots and give list items "
                          "in brackets, e.g. flows[2].ipd)", file="set", key=path,
                          problem="malformed key path",
                          fix="join keys with dots and give list items in brackets, e.g. flows[2].ipd")
    return [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PATH_STEP.finditer(path)]


def _path_text(steps: list[str | int]) -> str:
    out = ""
    for s in steps:
        out += f"[{s}]" if isinstance(s, int) else (f".{s}" if out else s)
    return out


def _set_error(steps: list[str | int], problem: str, fix: str) -> ConfigError:
    key = _path_text(steps)
    return ConfigError(f"set: {key}: {problem} (fix: {fix})", file="set", key=key, problem=problem, fix=fix)


def set_path(doc: dict, path: str, value: Any) -> None:
    """Sets one value by key path, with the rules of the C++ `--set` (validate.cpp): missing
    mappings on the way are created, list items must exist, a whole list may be replaced."""
    steps = parse_key_path(path)
    cur: Any = doc
    for i, step in enumerate(steps):
        last = i + 1 == len(steps)
        here = steps[: i + 1]
        if isinstance(step, int):
            if not isinstance(cur, list) or step >= len(cur):
                n = len(cur) if isinstance(cur, list) else 0
                raise _set_error(here, f"no item {step}: the list has {n} items",
                                 f"use an index in 0..{n - 1}, or set the whole list" if n
                                 else f"set the whole list, e.g. {_path_text(steps[:i])}=[...]")
            if last:
                cur[step] = value
            else:
                cur = cur[step]
            continue
        if not isinstance(cur, dict):
            raise _set_error(here[:-1], "the document has no mapping here", f"set the whole value {_path_text(here[:-1])}")
        if last:
            cur[step] = value
            return
        nxt = cur.get(step)
        if isinstance(steps[i + 1], int):
            if not isinstance(nxt, list):
                raise _set_error(here, "the document has no list here to index",
                                 f"set the whole list, e.g. {_path_text(here)}=[...]")
        elif nxt is None:
            nxt = cur[step] = {}
        elif not isinstance(nxt, dict):
            raise _set_error(here, f"the document has {type(nxt).__name__} here, not a mapping",
                             f"set the whole value, e.g. {_path_text(here)}={{...}}")
        cur = nxt


def get_path(doc: Any, path: str) -> Any:
    """The value at a key path; KeyError when the document does not hold it."""
    cur = doc
    for step in parse_key_path(path):
        try:
            cur = cur[step]
        except (KeyError, IndexError, TypeError):
            raise KeyError(path) from None
    return cur


def split_assignment(assignment: str) -> tuple[str, str]:
    """`key=value` (as given to --set) -> (key, value text)."""
    key, eq, text = assignment.partition("=")
    if not eq or not key.strip():
        raise ConfigError(f"--set: {assignment}: expected KEY=VALUE (fix: write e.g. "
                          "--set switch.pipeline_delay=40ns)", file="--set", key=assignment,
                          problem="expected KEY=VALUE", fix="write e.g. --set switch.pipeline_delay=40ns")
    return key.strip(), text


def _cpp_syntax_error(text: str, source: str, base_dir: str | os.PathLike | None) -> ConfigError | None:
    """The C++ loader's word on a document PyYAML could not parse, when it too refuses the
    document as a whole (syntax, several documents): both front ends then say the same."""
    try:
        core().validate(text, source, [], str(base_dir or "."))
    except ImportError:
        return None
    except Exception as e:  # noqa: BLE001 - whatever _core raised, judged below
        err = from_core(e)
        return err if isinstance(err, ConfigError) and not err.key else None
    return None


def _load_document(text: str, source: str, base_dir: str | os.PathLike | None) -> Any:
    """A whole scenario document, refused as the C++ loader refuses it (Document::parse)."""
    _yaml.check_text(text, source)
    _yaml.check_yaml_limits(text, source)
    try:
        data = _yaml.load(text)
    except yaml.YAMLError:
        err = _cpp_syntax_error(text, source, base_dir)
        if err is not None:
            raise err from None
        raise
    if data is not None and not isinstance(data, dict):
        node = yaml.compose(text, Loader=_yaml.Loader)
        got = "a list" if isinstance(node, yaml.SequenceNode) else f'"{node.value}"'
        raise _yaml.config_error(source, node.start_mark.line + 1, f"expected a mapping of keys at the top, got {got}",
                                 "write key: value lines, e.g. name: my-run")
    return data


def _load_yaml(text: str, source: str) -> Any:
    try:
        return _yaml.load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(e, "problem", None) or str(e)
        raise ConfigError(f"{source}:{line}: {problem} (fix: fix the YAML syntax)", file=source, line=line,
                          problem=problem, fix="fix the YAML syntax") from None


def read_input_text(path: str | os.PathLike, what: str) -> str:
    """A file a user named for reading, as the C++ side reads it: a regular file of at most
    `_core.MAX_INPUT_FILE_BYTES` (platform/params/input_file.h), else ConfigError."""
    try:
        data = core().read_input_file(str(path), what)
    except Exception as e:
        raise from_core(e) from None
    # Not UTF-8 or holding characters YAML forbids: refused as input_text.cpp refuses it.
    return _yaml.decode_text(data, str(path))


_top_level_keys: frozenset[str] | None = None


def top_level_keys() -> frozenset[str]:
    """The keys a scenario document may hold at its top, from the C++ declarations."""
    global _top_level_keys
    if _top_level_keys is None:
        _top_level_keys = frozenset(json.loads(core().schema()).get("properties", {}))
    return _top_level_keys


class Scenario:
    """One simulation run: topology, endpoints, workloads, routing, switch settings, duration,
    warm-up, seed and outputs (every key: docs/parameters.md, or `ibvp.schema()`)."""

    def __init__(self, data: Mapping[str, Any] | None = None, *, base_dir: str | os.PathLike | None = None,
                 source: str | None = None) -> None:
        if data is not None and not isinstance(data, Mapping):
            raise TypeError(f"a scenario is a mapping of keys to values, not {type(data).__name__}")
        object.__setattr__(self, "_data", copy.deepcopy(dict(data or {})))
        # Relative paths in the document are relative to this directory (absolute, so that a
        # later chdir or a child process with another cwd sees the same files).
        object.__setattr__(self, "base_dir", os.path.abspath(base_dir if base_dir is not None else os.getcwd()))
        object.__setattr__(self, "source", source or "<scenario>")
        # The text as read and the overrides since; _baseline is what they parse to, so a
        # dict equal to it can still be sent as text + overrides (see the module docstring).
        object.__setattr__(self, "_text", None)
        object.__setattr__(self, "_overrides", [])
        object.__setattr__(self, "_baseline", None)

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def from_yaml(cls, path: str | os.PathLike) -> "Scenario":
        """Reads a scenario file; relative paths inside stay relative to its directory."""
        path = Path(path)
        text = read_input_text(path, "scenario file")
        return cls.from_text(text, source=str(path), base_dir=path.resolve().parent)

    @classmethod
    def from_text(cls, text: str, *, source: str = "<scenario>",
                  base_dir: str | os.PathLike | None = None) -> "Scenario":
        """A scenario from YAML text; `base_dir` resolves its relative paths (default: cwd)."""
        try:
            data = _load_document(text, source, base_dir)
        except yaml.YAMLError:
            data = _load_yaml(text, source)  # raises PyYAML's account of the syntax error
        if data is None:
            data = {}  # the C++ loader's "the document is empty" comes with validate()
        sc = cls(data, base_dir=base_dir, source=source)
        object.__setattr__(sc, "_text", text)
        object.__setattr__(sc, "_baseline", copy.deepcopy(data))
        return sc

    @classmethod
    def coerce(cls, scenario: "Scenario | Mapping[str, Any] | str | os.PathLike") -> "Scenario":
        """A Scenario from what `ibvp.run` and friends accept: a Scenario, a dict or a path."""
        if isinstance(scenario, Scenario):
            return scenario
        if isinstance(scenario, Mapping):
            return cls(scenario)
        if isinstance(scenario, (str, os.PathLike)):
            return cls.from_yaml(scenario)
        raise TypeError(f"expected a Scenario, a dict or a path to a YAML file, not {type(scenario).__name__}")

    def copy(self) -> "Scenario":
        return copy.deepcopy(self)

    # ---- access --------------------------------------------------------------------------

    @property
    def data(self) -> dict[str, Any]:
        """The document itself (edits change the scenario)."""
        return self._data

    @property
    def name(self) -> str:
        """The run's name: `name:` or, as the C++ loader does, the file name without extension."""
        if self._data.get("name"):
            return str(self._data["name"])
        stem = Path(self.source).stem
        return "scenario" if not stem or stem.startswith("<") else stem

    @name.setter
    def name(self, value: str) -> None:
        self._data["name"] = value

    def __getattr__(self, key: str) -> Any:
        # Only reached for names that are not attributes of the object: the document's keys.
        if key.startswith("_"):
            raise AttributeError(key)
        if key in self._data:
            return self._data[key]
        if key in top_level_keys():
            return None  # a declared key left out: it takes its default
        raise AttributeError(f"a scenario has no key {key!r}; keys: {', '.join(sorted(top_level_keys()))}")

    def __setattr__(self, key: str, value: Any) -> None:
        if key.startswith("_") or key in ("base_dir", "source") or isinstance(getattr(type(self), key, None), property):
            object.__setattr__(self, key, value)
        elif key in top_level_keys():
            self._data[key] = value
        else:
            # A typo here would otherwise only surface when the C++ side refuses the document.
            raise AttributeError(f"a scenario has no key {key!r}; keys: {', '.join(sorted(top_level_keys()))}")

    def __delattr__(self, key: str) -> None:
        if key in self._data:
            del self._data[key]
        else:
            object.__delattr__(self, key)

    def __getitem__(self, path: str) -> Any:
        """`sc["switch.bypass_limit"]`, `sc["flows[0]"]`: the value at a key path."""
        return get_path(self._data, path)

    def __setitem__(self, path: str, value: Any) -> None:
        self.set(path, value)

    def __contains__(self, path: str) -> bool:
        try:
            get_path(self._data, path)
            return True
        except KeyError:
            return False

    def get(self, path: str, default: Any = None) -> Any:
        try:
            return get_path(self._data, path)
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def keys(self):
        return self._data.keys()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._data == other._data and self.base_dir == other.base_dir

    def __repr__(self) -> str:
        return f"Scenario({self.name!r}, source={self.source!r}, keys={list(self._data)})"

    # ---- changes -------------------------------------------------------------------------

    def set(self, path: str, value: Any) -> "Scenario":
        """Sets a value by key path, as `ibvp-sim --set path=value` does; returns the scenario."""
        return self._override(path, _yaml.scalar_text(value), value)

    def override(self, assignment: str) -> "Scenario":
        """Applies one `key=value` string as given on the command line (the value is YAML)."""
        key, text = split_assignment(assignment)
        return self._override(key, text, _load_yaml(text, "--set") if text.strip() else None)

    def _override(self, path: str, text: str, value: Any) -> "Scenario":
        set_path(self._data, path, copy.deepcopy(value))
        if self._baseline is not None:
            try:
                set_path(self._baseline, path, copy.deepcopy(value))
                self._overrides.append(f"{path}={text}")
            except ConfigError:
                # The text as read no longer leads to this document: send it rewritten.
                object.__setattr__(self, "_baseline", None)
        return self

    @property
    def overrides(self) -> list[str]:
        """The `key=value` changes made since the file was read, while they still describe it."""
        return list(self._overrides) if self._sent_as_text() else []

    # ---- output --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def to_yaml(self, path: str | os.PathLike | None = None) -> str:
        """The document as YAML (comments of the original are not kept). Written to `path`,
        relative file references are rewritten relative to the new file's directory."""
        if path is None:
            return _yaml.dump(self._data)
        path = Path(path)
        text = _yaml.dump(self.rebased(path.resolve().parent))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return text

    def rebased(self, new_dir: str | os.PathLike | None) -> dict[str, Any]:
        """A copy of the document whose relative file references work from `new_dir`
        (None: made absolute)."""
        data = copy.deepcopy(self._data)
        for section, key in FILE_KEYS:
            sec = data.get(section)
            if isinstance(sec, dict) and isinstance(sec.get(key), str) and not os.path.isabs(sec[key]):
                target = os.path.normpath(os.path.join(self.base_dir, sec[key]))
                sec[key] = target if new_dir is None else os.path.relpath(target, os.path.abspath(new_dir))
        return data

    # ---- the C++ side ----------------------------------------------------------------------

    def _sent_as_text(self) -> bool:
        return self._text is not None and self._baseline is not None and self._data == self._baseline

    def core_args(self) -> tuple[str, str, list[str], str]:
        """(yaml_text, source, overrides, base_dir) as `_core.validate`/`run` take them."""
        if self._sent_as_text():
            return self._text, self.source, list(self._overrides), self.base_dir
        data = self._data
        if "name" not in data:
            # The C++ default name comes from the source, which is about to change.
            data = {"name": self.name, **data}
        source = self.source if self._text is None else f"<{Path(self.source).name} as edited in Python>"
        return _yaml.dump(data), source, [], self.base_dir

    def checked_name(self) -> str:
        """The run's name as the C++ loader takes it (after checking the document's keys);
        ConfigError at `name` unless it is one path component, since ibvp makes directories
        of it (out/<name>). The same check and message as `ibvp-sim` and `validate`."""
        text, source, overrides, _base_dir = self.core_args()
        try:
            return core().scenario_name(text, source, overrides)
        except Exception as e:
            raise from_core(e) from None

    def validate(self) -> dict[str, Any]:
        """Checks the whole scenario with the C++ loader (topology built, flows resolved).
        Returns {name, duration_s, seed, flows, switches, endpoints}; raises ConfigError."""
        try:
            return core().validate(*self.core_args())
        except Exception as e:
            raise from_core(e) from None
