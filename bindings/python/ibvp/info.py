"""What the C++ side knows without running anything: the scenario schema and reference,
the version, and topology summaries."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ._corelib import core
from .errors import from_core
from .scenario import Scenario, read_input_text


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


def topology_summary(source: str | os.PathLike | Scenario, routing: str | None = None,
                     overrides: list[str] | None = None, *, lmc: int | None = None,
                     dump: str | os.PathLike | None = None, graph: bool = False) -> dict[str, Any]:
    """Validates a topology and describes it: a topology file (YAML switches/hosts/links, or
    ibnetdiscover output), a scenario file or a Scenario. Returns switches, hosts, links,
    diameter (switch hops between endpoints), independent_cycles (|E|-|V|+1 of the switch
    graph), routing, routing_seconds, path_length_histogram {hops: routes},
    edge_forwarding_index {max, mean} and deadlock {acyclic, cycle, channels, dependencies}
    (the channel dependency graph of the tables). `routing` overrides the scenario's engine
    (default minhop); `lmc` gives every endpoint that many path bits (LIDs assigned anew);
    `dump` writes opensm-lfts.dump and opensm-sl2vl.dump into that directory. With `graph`,
    also nodes [{name, kind, lid, lmc}] and cables [(node, port, node, port)]."""
    if isinstance(source, Scenario):
        text, name, sc_overrides, base_dir = source.core_args()
    else:
        path = Path(source)
        text, name, sc_overrides, base_dir = (read_input_text(path, "topology file"), str(path), [],
                                              str(path.resolve().parent))
    try:
        return core().topology_summary(text, name, sc_overrides + list(overrides or []), base_dir, routing, lmc,
                                       str(dump) if dump is not None else "", graph)
    except Exception as e:
        raise from_core(e) from None
