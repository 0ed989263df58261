#pragma once
// Multipath routing with DLID path bits (seed 000: Kim, Das et al., Sec. 3.2-3.3). An
// endpoint answers to 2^LMC LIDs (IBA 7.11.1); each of them is routed on its own path, so a
// source picks a path by the low bits of the DLID it sends to.
//
// Two modes:
//  - cycles (seed 000 Sec. 3.2-3.3): the switch graph G = (V, E) has C = |E| - |V| + 1
//    independent cycles (per connected set of switches; Theorem 1 and Algorithm 1: the back
//    edges of a breadth-first tree). Each cycle C_i, closed by back edge i, gets one path bit:
//    1 = the path runs along C_i in its own ("clockwise") orientation, 0 = against it. A path
//    gets its bits from the cycles its hops lie on (Definition 1, Algorithm 3), so C path
//    bits name the paths (Theorem 2: some pair has 2^C of them) and the endpoints need
//    LMC >= C. The forwarding table for DLID base + b sends every switch along a path whose
//    hops agree with b on every cycle they lie on, the shortest such path; where no path
//    agrees (a hop shared by cycles that b orients against each other blocks both ways),
//    the path with the fewest disagreeing hops, then the shortest. On the paper's own example
//    (Fig. 4a) this gives exactly the paths and bits of Sec. 3.2/3.3 (tests).
//    Rule for LMC != C: endpoints with LMC < C are a ConfigError naming the needed LMC;
//    with LMC > C the path bits are the low C bits of the DLID offset and the higher bits
//    are ignored (LID base + k takes the path of base + (k mod 2^C)). The paper's extra
//    "multipathing on" flag bit is not used: path bits 0 (the base LID) are one of the paths.
//  - disjoint: each endpoint keeps the LMC it has, and its 2^LMC LIDs get paths that share as
//    few switch-to-switch channels as the fabric allows, for every source at once. LID 0
//    (the base LID) takes a shortest path; LID k is routed by a tree toward the destination
//    that first avoids channels the earlier LIDs' trees use, then is improved switch by
//    switch while that lowers, summed over the sources (weighted by their endpoints), the
//    channels a source shares with its own routes to the earlier LIDs (once per earlier route
//    sharing it), then the hops. Ties go to the least loaded port, then the lowest, so the
//    result is deterministic. One tree per LID cannot always give every source all the
//    disjoint paths it has (a 4 x 4 torus: most pairs get 4 different paths, every pair at
//    least 2 link-disjoint ones; a ring, a k-ary 2-tree: all of them).
//  - adaptive (seed 000 Sec. 3.3-3.4 and 5.1, past IBA's LMC): no path bits in the DLID.
//    Each switch keeps per destination LID 2 or 4 alternative output ports where the fabric
//    has them (1 where it has not; sw::AltTable), and the switch chooses among them per packet
//    (switch.path_selection). The first alternative is a shortest-path hop (the LFT entry,
//    balanced as minhop); the others are the hops that descend in (switch hops to the
//    destination, switch index), so any sequence of choices is loop-free. Any number of cycles.
// No mode is deadlock-free by itself (see channel_dependency.h); switch LIDs take one
// path (cycles: path bits 0; disjoint: shortest).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/sm/routing.h"

namespace ibvp::sm {

enum class MultipathMode : uint8_t { cycles, disjoint, adaptive };

// "cycles", "disjoint" or "adaptive"; throws ConfigError (key routing.multipath.mode) otherwise.
MultipathMode parse_multipath_mode(const std::string& text);

struct MultipathOptions {
  MultipathMode mode = MultipathMode::cycles;
  // cycles mode: the root of the breadth-first tree whose back edges close the cycles, by
  // name or, when `root` is empty, by node index. Neither given: in each connected set of
  // switches the switch of least eccentricity, ties to the lowest node index (as updn.h):
  // a central root keeps the tree's cycles short.
  std::string root;
  uint32_t root_node = topo::Topology::npos;
};

// seed 000 Sec. 3.2, Algorithms 1 and 2: a cycle basis of the switch graph.
struct CycleBasis {
  size_t switches = 0;    // |V|
  size_t cables = 0;      // |E|: switch-to-switch cables, parallel ones counted, loopbacks not
  size_t components = 0;  // connected sets of switches
  std::vector<uint32_t> roots;  // breadth-first root of each set (node index)
  // C_1, C_2, ...: cycle i is closed by the i-th back edge {v, w} (v the lower node index;
  // back edges in order of (v, w, port at v)) and runs v -> w, then along the tree from w
  // back to v: its "clockwise" orientation (seed 000 Fig. 4: C_1 = acba for back edge (a, c)).
  // Each cycle is the list of the ports its hops leave from.
  std::vector<std::vector<topo::PortRef>> cycles;

  // C = |E| - |V| + components, the number of path bits the cycles mode needs.
  size_t count() const { return cycles.size(); }
  // seed 000 Definition 1: the cycles the hop leaving `send` lies on, as (cycle index, true
  // when the hop runs along the cycle's orientation).
  std::vector<std::pair<uint32_t, bool>> cycle_list(const topo::Topology& t, topo::PortRef send) const;
  // seed 000 Algorithm 3: the path bits of a path given by the ports its switch-to-switch hops
  // leave from, one character per cycle, C_1 first (the most significant bit): '1' along the
  // cycle, '0' against it, 'X' when the path does not touch it. Hops that disagree on a cycle
  // are reconciled by the cycle list union (Definition 2): a hop lying on that cycle only
  // wins over hops lying on several; when only hops lying on several disagree the bit is 'X';
  // when hops lying on that cycle only disagree the path has no bits and "" is returned.
  std::string path_bits(const topo::Topology& t, const std::vector<topo::PortRef>& hops) const;
};

// The cycle basis of an indexed topology; throws ConfigError when the requested root is not
// a switch of the fabric.
CycleBasis find_cycles(const topo::Topology& t, const MultipathOptions& opt = {});

class MultipathEngine : public RoutingEngine {
 public:
  explicit MultipathEngine(MultipathOptions opt = {}) : opt_(std::move(opt)) {}
  const char* name() const override {
    return opt_.mode == MultipathMode::disjoint   ? "multipath_disjoint"
           : opt_.mode == MultipathMode::adaptive ? "multipath_adaptive"
                                                  : "multipath";
  }
  // Fills the LFTs for every LID as the mode says (header comment). Needs an indexed
  // topology. Throws ConfigError (key routing.multipath.mode) in cycles mode when an endpoint
  // has fewer path bits (LMC) than the fabric has cycles, or the cycles exceed IBA's LMC of 7,
  // and (key routing.multipath.root) for a bad root.
  RoutingTables compute(const topo::Topology& topology) override;
  // The cycle basis of the last compute() (cycles and adaptive modes; empty in disjoint mode).
  const CycleBasis& cycles() const { return basis_; }

 private:
  MultipathOptions opt_;
  CycleBasis basis_;
};

std::unique_ptr<RoutingEngine> make_multipath_engine(MultipathOptions opt = {});

}  // namespace ibvp::sm
