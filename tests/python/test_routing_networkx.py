"""Routing checked against an independent graph library: the switch hops of every min-hop
route between two hosts equal networkx's shortest-path length between them, on generated
fabrics and on a real cluster's ibnetdiscover dump; up*/down* routes are never shorter."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import networkx as nx
import pytest

import ibvp

ROOT = Path(__file__).resolve().parents[2]
X5 = ROOT.parent / "shared" / "topologies" / "real_X5.net"

FABRICS = {
    "irregular16-seed1": {"generator": "random_irregular", "switches": 16, "seed": 1},
    "irregular32-seed7": {"generator": "random_irregular", "switches": 32, "seed": 7},
    "fat-tree-4-ary-2": {"generator": "fat_tree", "k": 4, "n": 2},
    "torus-5x4": {"generator": "torus", "x": 5, "y": 4, "hosts_per_switch": 1},
    "mesh-3x3": {"generator": "mesh", "x": 3, "y": 3, "hosts_per_switch": 2},
}


def _summary(source, routing: str) -> dict:
    if isinstance(source, dict):
        source = ibvp.Scenario({"duration": "1us", "topology": source, "traffic": {"load": 0.1}})
    return ibvp.topology_summary(source, routing=routing, graph=True)


def _networkx_histogram(s: dict) -> Counter:
    """Switches on a shortest path, for every ordered pair of distinct hosts."""
    g = nx.MultiGraph()
    g.add_nodes_from(n["name"] for n in s["nodes"])
    g.add_edges_from((a, b) for a, _pa, b, _pb in s["cables"] if a != b)
    hosts = [n["name"] for n in s["nodes"] if n["kind"] == "endpoint"]
    hist: Counter = Counter()
    for src, lengths in nx.all_pairs_shortest_path_length(g):
        if src not in hosts:
            continue
        for dst, edges in lengths.items():
            if dst != src and dst in set(hosts):
                hist[edges - 1] += 1  # host - switch ... switch - host: edges - 1 switches
    return hist


def _ibvp_histogram(s: dict) -> Counter:
    return Counter({int(k): v for k, v in s["path_length_histogram"].items()})


@pytest.mark.parametrize("name", sorted(FABRICS))
def test_minhop_path_lengths_equal_networkx_shortest_paths(name: str) -> None:
    s = _summary(FABRICS[name], "minhop")
    assert s["unrouted"] == 0
    assert _ibvp_histogram(s) == _networkx_histogram(s)


def test_minhop_on_a_real_cluster_dump_equals_networkx() -> None:
    if not X5.exists():
        pytest.skip(f"{X5} not found (the shared topologies sit beside the repository)")
    s = _summary(X5, "minhop")
    assert (s["switches"], s["hosts"]) == (11, 89)
    assert _ibvp_histogram(s) == _networkx_histogram(s)


@pytest.mark.parametrize("engine", ["updn", "dfs", "smart"])
def test_deadlock_free_engines_are_never_shorter_than_shortest_paths(engine: str) -> None:
    s = _summary(FABRICS["irregular32-seed7"], engine)
    ours, shortest = _ibvp_histogram(s), _networkx_histogram(s)
    assert sum(ours.values()) == sum(shortest.values())
    # Sorted path lengths: the k-th shortest of ours is at least the k-th of the shortest.
    a = sorted(Counter(ours).elements())
    b = sorted(Counter(shortest).elements())
    assert all(x >= y for x, y in zip(a, b))
    assert s["deadlock"]["acyclic"]
