"""YAML as the C++ loader reads it, so a document survives a trip through Python unchanged.

PyYAML follows YAML 1.1: `yes`/`on` are booleans, `010` is octal eight, `1:30` is ninety,
`2024-01-01` a date and `1e3` a string. The C++ side (yaml-cpp plus the parameter parsers in
models/sim/params.cpp) takes a plain scalar's text and reads only `true`/`false` as booleans,
decimal integers and plain decimal reals. If Python read such scalars differently it would
write them back quoted (a string that looks like another type must be quoted), and the C++
side treats a quoted scalar as text: `load: 1e-1` would turn into `load: '1e-1'` and be
refused. So this module reads and writes with one set of rules matching the C++ ones; a
scalar either stays plain text in both directions or becomes the same number both sides see.
"""
from __future__ import annotations

import math
import re
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.emitter import Emitter
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.representer import SafeRepresenter
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner
from yaml.serializer import Serializer

_INT = re.compile(r"^[-+]?[0-9]+$")
# A real needs a fraction or an exponent; otherwise it is an integer.
_FLOAT = re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][-+]?[0-9]+)?$")
_BOOL = re.compile(r"^(?:[tT][rR][uU][eE]|[fF][aA][lL][sS][eE])$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


class _Resolver(BaseResolver):
    # Start from nothing: BaseResolver subclasses would otherwise inherit YAML 1.1's rules.
    yaml_implicit_resolvers: dict = {}


_Resolver.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
_Resolver.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
_Resolver.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
_Resolver.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""])


class _Constructor(SafeConstructor):
    pass


# SafeConstructor's own int/float readers implement YAML 1.1 (octal `010`, sexagesimal);
# these are plain decimal, as params.cpp parses them.
_Constructor.add_constructor(
    "tag:yaml.org,2002:int", lambda loader, node: int(loader.construct_scalar(node)))
_Constructor.add_constructor(
    "tag:yaml.org,2002:float", lambda loader, node: float(loader.construct_scalar(node)))
_Constructor.add_constructor(
    "tag:yaml.org,2002:bool", lambda loader, node: loader.construct_scalar(node).lower() == "true")


class Loader(Reader, Scanner, Parser, Composer, _Constructor, _Resolver):
    def __init__(self, stream: Any) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        _Constructor.__init__(self)
        _Resolver.__init__(self)


class _Representer(SafeRepresenter):
    def represent_float(self, data: float) -> Any:
        # repr() is the shortest text that reads back as the same double; non-finite values
        # have no plain decimal form (the C++ side refuses them whatever we write).
        if not math.isfinite(data):
            return super().represent_float(data)
        return self.represent_scalar("tag:yaml.org,2002:float", repr(data))


_Representer.add_representer(float, _Representer.represent_float)


class Dumper(Emitter, Serializer, _Representer, _Resolver):
    def __init__(self, stream: Any, default_style=None, default_flow_style=False, canonical=None,
                 indent=None, width=None, allow_unicode=None, line_break=None, encoding=None,
                 explicit_start=None, explicit_end=None, version=None, tags=None, sort_keys=True) -> None:
        Emitter.__init__(self, stream, canonical=canonical, indent=indent, width=width,
                         allow_unicode=allow_unicode, line_break=line_break)
        Serializer.__init__(self, encoding=encoding, explicit_start=explicit_start,
                            explicit_end=explicit_end, version=version, tags=tags)
        _Representer.__init__(self, default_style=default_style, default_flow_style=default_flow_style,
                              sort_keys=sort_keys)
        _Resolver.__init__(self)


def load(text: str) -> Any:
    return yaml.load(text, Loader=Loader)


# ---- limits on input documents -----------------------------------------------------------
# The same limits, checks and messages as platform/params/input_text.cpp, so that both front
# ends refuse a hostile file (deep nesting, an alias bomb, a huge value, binary bytes, a
# directory) the same way and before a parser builds anything (PyYAML's composer recurses per
# level and would raise RecursionError; an alias bomb expands without end when compared).

MAX_DOCUMENT_BYTES = 1 << 20
MAX_NESTING = 64
MAX_NODES = 1_000_000
MAX_SCALAR_BYTES = 4096

_SIZE_FIX = "keep the file to settings: large tables go in files of their own (trace.file, an ibnetdiscover dump)"
# YAML 1.2 Sec. 5.1 c-printable, as PyYAML's reader and input_text.cpp accept it.
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


def _printable(s: str) -> str:
    """Control characters but tabs as escapes, as config_error.cpp writes them."""
    return re.sub("[\x00-\x08\x0a-\x1f\x7f]",
                  lambda m: {"\n": "\\n", "\r": "\\r"}.get(m.group(), f"\\x{ord(m.group()):02x}"), s)


def config_error(source: str, line: int, problem: str, fix: str, key: str = "") -> Exception:
    """A ConfigError worded as the C++ ConfigError composes it (config_error.cpp)."""
    from .errors import ConfigError

    m = _printable(source) if source else "<input>"
    if line > 0:
        m += f":{line}"
    m += ": "
    if key:
        m += f"{_printable(key)}: "
    m += _printable(problem)
    if fix:
        m += f" (fix: {_printable(fix)})"
    return ConfigError(m, file=source, key=key, line=line, problem=problem, fix=fix)


def _line_column(text: str, index: int) -> tuple[int, int]:
    """1-based line (counted in '\n') and column (in characters) of text[index]."""
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def check_text(text: str, source: str) -> None:
    """Refuses text over the size limit and characters YAML does not allow."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_DOCUMENT_BYTES:
        raise config_error(source, 0, f"the document is {size} bytes, more than the limit of {MAX_DOCUMENT_BYTES}",
                           _SIZE_FIX)
    m = _NON_PRINTABLE.search(text)
    if m:
        line, column = _line_column(text, m.start())
        raise config_error(source, line, f"character U+{ord(m.group()):04X} at column {column} is not allowed in YAML",
                           "remove it: YAML text holds tabs, line breaks and printable characters")


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 bytes as text, refused as input_text.cpp's check_text refuses them: the first bad
    byte or character, with its line and column, and the size limit."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        # input_text.cpp reads left to right: a bad character before the bad byte comes first.
        prefix = data[: e.start].decode("utf-8")
        check_text(prefix, source)
        line, column = _line_column(prefix, len(prefix))
        raise config_error(source, line, f"invalid UTF-8 byte 0x{data[e.start]:02x} at column {column}",
                           "save the file as UTF-8 text") from None
    check_text(text, source)
    return text


def check_yaml_limits(text: str, source: str) -> None:
    """Reads the YAML events only (no tree) and refuses nesting, alias expansion and scalar
    size beyond the limits; a syntax error is left for the parse that follows."""
    nodes = 0
    open_: list[tuple[int, str | None]] = []  # (nodes before, anchor) of each open collection
    sizes: dict[str, int] = {}  # anchor -> nodes of its value, aliases expanded

    def add(n: int, mark: Any) -> None:
        nonlocal nodes
        nodes += n
        if nodes > MAX_NODES:
            raise config_error(source, mark.line + 1, f"aliases expand the document to more than {MAX_NODES} values",
                               "write the values out instead of repeating large anchors (&name, *name)")

    try:
        for ev in yaml.parse(text, Loader=Loader):
            if isinstance(ev, yaml.ScalarEvent):
                n = len(ev.value.encode("utf-8", "surrogatepass"))
                if n > MAX_SCALAR_BYTES:
                    raise config_error(source, ev.start_mark.line + 1,
                                       f"a value of {n} bytes, more than the limit of {MAX_SCALAR_BYTES}",
                                       "shorten it; long data belongs in a file of its own (trace.file, topology.file)")
                add(1, ev.start_mark)
                if ev.anchor:
                    sizes[ev.anchor] = 1
            elif isinstance(ev, yaml.AliasEvent):
                if any(a == ev.anchor for _, a in open_):
                    raise config_error(source, ev.start_mark.line + 1, "an alias inside the value of its own anchor",
                                       "point the alias at another anchor or write the value out")
                add(sizes.get(ev.anchor, 1), ev.start_mark)
            elif isinstance(ev, yaml.CollectionStartEvent):
                if len(open_) >= MAX_NESTING:
                    raise config_error(source, ev.start_mark.line + 1,
                                       f"mappings and lists nested more than {MAX_NESTING} deep",
                                       "flatten the document: a scenario needs about five levels")
                open_.append((nodes, ev.anchor))
                add(1, ev.start_mark)
            elif isinstance(ev, yaml.CollectionEndEvent):
                before, anchor = open_.pop()
                if anchor:
                    sizes[anchor] = nodes - before
    except yaml.YAMLError:
        pass  # a syntax error: the parse that follows reports it


class _FlowMap(dict):
    pass


class _FlowSeq(list):
    pass


_Representer.add_representer(
    _FlowMap, lambda r, d: r.represent_mapping("tag:yaml.org,2002:map", d, flow_style=True))
_Representer.add_representer(
    _FlowSeq, lambda r, d: r.represent_sequence("tag:yaml.org,2002:seq", d, flow_style=True))


def _inline_leaves(value: Any, depth: int) -> Any:
    """Marks collections of scalars below the top-level sections for one-line writing."""
    if isinstance(value, dict):
        items = {k: _inline_leaves(v, depth + 1) for k, v in value.items()}
        leaf = not any(isinstance(v, (dict, list)) for v in value.values())
        return _FlowMap(items) if leaf and depth >= 2 else items
    if isinstance(value, list):
        items = [_inline_leaves(v, depth + 1) for v in value]
        leaf = not any(isinstance(v, (dict, list)) for v in value)
        return _FlowSeq(items) if leaf and depth >= 2 else items
    return value


def dump(data: Any) -> str:
    """A document in the repository's style: sections as blocks, flows and short lists on
    one line each (`- {name: f1, src: h1, dst: h3}`, `rate_ports: [B/7]`)."""
    return yaml.dump(_inline_leaves(data, 0), Dumper=Dumper, sort_keys=False, default_flow_style=False,
                     width=100, allow_unicode=True)


def scalar_text(value: Any) -> str:
    """One value as the text of `--set key=VALUE` (flow style, on one line)."""
    text = yaml.dump(value, Dumper=Dumper, default_flow_style=True, width=math.inf, allow_unicode=True)
    # A lone scalar is written as a document with an explicit end marker ("2\n...\n").
    text = text.strip()
    if text.endswith("\n..."):
        text = text[: -len("\n...")].rstrip()
    elif text == "...":
        text = ""
    return text
