"""What the C++ side knows without running anything: the scenario schema and reference,
the version, and topology summaries."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ._corelib import core
from .errors import from_core
from .scenario import Scenario


def version() -> str:
    return core().version()


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario document, generated from the C++
    parameter declarations (`ibvp schema --out FILE` writes it for editors)."""
    return json.loads(core().schema())


def schema_text() -> str:
    return core().schema()


def reference() -> str:
    """The Markdown reference of every scenario key (docs/parameters.md)."""
    return core().reference()


def _topology_args(source: str | os.PathLike | Scenario) -> tuple[str | bytes, str, list[str], str]:
    if isinstance(source, Scenario):
        return source.core_args()
    path = Path(source)
    # The file's bytes as the C++ side reads them: a YAML document is checked there (UTF-8,
    # limits), and an ibnetdiscover dump may carry node descriptions that are not UTF-8, as
    # real fabrics report them; ibvp-sim takes such a dump, so ibvp topo does too.
    try:
        data = core().read_input_file(str(path), "topology file")
    except Exception as e:
        raise from_core(e) from None
    return data, str(path), [], str(path.resolve().parent)


def _path(p: str | os.PathLike | None) -> str:
    return "" if p is None else str(p)


def topology_summary(source: str | os.PathLike | Scenario, routing: str | None = None,
                     overrides: list[str] | None = None, *, lmc: int | None = None,
                     dump: str | os.PathLike | None = None, graph: bool = False,
                     roots: list[str] | None = None, root_guid_file: str | os.PathLike | None = None,
                     lfts_file: str | os.PathLike | None = None,
                     node_name_map: str | os.PathLike | None = None) -> dict[str, Any]:
    """Validates a topology and describes it: a topology file (YAML switches/hosts/links, or
    ibnetdiscover output), a scenario file or a Scenario. Returns switches, hosts, links,
    diameter (switch hops between endpoints), independent_cycles (|E|-|V|+1 of the switch
    graph), routing, routing_seconds, path_length_histogram {hops: routes},
    edge_forwarding_index {max, mean} and deadlock {acyclic, cycle, channels, dependencies}
    (the channel dependency graph of the tables). `routing` overrides the scenario's engine
    (default minhop) and its routing_options; `lmc` gives every endpoint that many path bits
    (LIDs assigned anew); `dump` writes opensm-lfts.dump, opensm-sl2vl.dump,
    opensm-subnet.lst and opensm.fdbs into that directory. With `graph`, also nodes
    [{name, kind, lid, lmc}] and cables [(node, port, node, port)].

    updn roots: `roots` (switch names or node GUIDs "0x..."), `root_guid_file` (OpenSM's
    root_guid_file). Engine "file": `lfts_file`, an opensm-lfts.dump. `node_name_map`: a
    node-name map (lines 0x<GUID> "name") applied when an ibnetdiscover dump is loaded."""
    text, name, sc_overrides, base_dir = _topology_args(source)
    try:
        return core().topology_summary(text, name, sc_overrides + list(overrides or []), base_dir, routing, lmc,
                                       _path(dump), graph, [str(r) for r in roots or []], _path(root_guid_file),
                                       _path(lfts_file), _path(node_name_map))
    except Exception as e:
        raise from_core(e) from None


def export_ibnetdiscover(source: str | os.PathLike | Scenario, out: str | os.PathLike, *,
                         node_name_map: str | os.PathLike | None = None,
                         node_name_map_out: str | os.PathLike | None = None,
                         overrides: list[str] | None = None) -> dict[str, Any]:
    """Writes any topology (a generated fabric of a scenario, a YAML topology, a dump) as an
    ibnetdiscover file that ibvp's loader reads back as the same fabric. With
    `node_name_map_out`, nodes are written with ibnetdiscover's ids (S-/H-<node GUID>) and
    the names go into that node-name map, which restores them on load. `node_name_map` is
    applied when `source` is itself a dump. Returns the counts written."""
    text, name, sc_overrides, base_dir = _topology_args(source)
    try:
        return core().export_ibnetdiscover(text, name, sc_overrides + list(overrides or []), base_dir, str(out),
                                           _path(node_name_map), _path(node_name_map_out))
    except Exception as e:
        raise from_core(e) from None
