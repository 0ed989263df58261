#include "platform/sm/updn.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "platform/params/config_error.h"
#include "platform/params/input_file.h"
#include "platform/sm/route_stats.h"
#include "platform/sm/switch_graph.h"
#include "platform/sm/updown_tables.h"

namespace ibvp::sm {

using topo::Topology;

bool UpDownRanking::is_up(const Topology& t, uint32_t from, uint32_t to) const {
  return std::make_tuple(rank[to], t.nodes[to].guid, to) < std::make_tuple(rank[from], t.nodes[from].guid, from);
}

namespace {

// A GUID as OpenSM's parse_node_map reads one (strtoull base 0, hexadecimal with 0x).
bool parse_guid(const std::string& word, uint64_t& out) {
  if (word.empty()) return false;
  size_t i = 0;
  int base = 10;
  if (word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X')) i = 2, base = 16;
  uint64_t v = 0;
  for (; i < word.size(); ++i) {
    const int c = std::tolower(static_cast<unsigned char>(word[i]));
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (d < 0 || v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

}  // namespace

uint32_t find_switch(const Topology& t, const std::string& name_or_guid) {
  const uint32_t by_name = t.find(name_or_guid);
  if (by_name != Topology::npos) return t.nodes[by_name].kind == topo::NodeKind::switch_node ? by_name : Topology::npos;
  uint64_t guid = 0;
  if (!parse_guid(name_or_guid, guid)) return Topology::npos;
  for (uint32_t s : t.switches())
    if (topo::node_guid(t, s) == guid) return s;
  return Topology::npos;
}

std::vector<uint32_t> parse_root_guids(const Topology& t, const std::string& text, const std::string& source) {
  std::vector<uint32_t> roots;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word[0] == '#') continue;
    const size_t hash = word.find('#');
    if (hash != std::string::npos) word.resize(hash);
    uint64_t guid = 0;
    if (!parse_guid(word, guid))
      throw ConfigError(source, "", n, "'" + word.substr(0, 40) + "' is not a GUID",
                        "write one switch node GUID per line, e.g. 0x0008f10500200b50");
    uint32_t sw = Topology::npos;
    for (uint32_t s : t.switches())
      if (topo::node_guid(t, s) == guid) sw = s;
    if (sw == Topology::npos)
      throw ConfigError(source, "", n, "GUID " + word + " is not the node GUID of a switch of " + t.source,
                        "list switch node GUIDs of this fabric (ibvp topo --dump writes them in opensm-subnet.lst)");
    if (std::find(roots.begin(), roots.end(), sw) == roots.end()) roots.push_back(sw);
  }
  if (roots.empty())
    throw ConfigError(source, "", 0, "the root GUID file lists no GUID", "write one switch node GUID per line");
  return roots;
}

std::vector<uint32_t> load_root_guid_file(const Topology& t, const std::string& path) {
  return parse_root_guids(t, read_input_file(path, "root GUID file", "check the path"), path);
}

UpDownRanking rank_switches(const Topology& t, const UpDownOptions& opt) {
  const SwitchGraph g = switch_graph(t);
  const uint32_t wanted = requested_root(t, g.sw_of_node, opt.root, opt.root_node, "routing.updn.root", "up*/down*");
  std::vector<bool> given_root(g.node.size(), false);
  for (size_t i = 0; i < opt.roots.size(); ++i) {
    const uint32_t n = opt.roots[i];
    if (n >= t.nodes.size() || g.sw_of_node[n] == Topology::npos)
      throw ConfigError(t.source, "routing_options.roots[" + std::to_string(i) + "]", 0,
                        "root " + (n < t.nodes.size() ? t.nodes[n].name : std::to_string(n)) + " is not a switch",
                        "name switches as roots");
    given_root[g.sw_of_node[n]] = true;
  }
  UpDownRanking r;
  r.rank.assign(t.nodes.size(), Topology::npos);
  // Each connected set of switches is ranked from its own root (a switch cabled to no other
  // switch is its own root), so a fabric split at the switch level still routes within its
  // parts, as minhop does. Sets are taken in order of their lowest node index.
  std::vector<bool> done(g.node.size(), false);
  for (uint32_t first = 0; first < g.node.size(); ++first) {
    if (done[first]) continue;
    std::vector<uint32_t> members;
    bfs(g, first, &members);
    std::sort(members.begin(), members.end());
    // Given roots: all of rank 0, ranks by one breadth-first search from all of them.
    std::vector<uint32_t> set_roots;
    for (uint32_t m : members)
      if (given_root[m]) set_roots.push_back(m);
    if (!set_roots.empty()) {
      std::vector<uint32_t> d(g.node.size(), Topology::npos);
      std::vector<uint32_t> queue = set_roots;
      for (uint32_t r0 : set_roots) d[r0] = 0;
      for (size_t q = 0; q < queue.size(); ++q)
        for (const Neighbour& nb : g.adj[queue[q]])
          if (d[nb.sw] == Topology::npos) {
            d[nb.sw] = d[queue[q]] + 1;
            queue.push_back(nb.sw);
          }
      for (uint32_t m : members) {
        done[m] = true;
        r.rank[g.node[m]] = d[m];
      }
      for (uint32_t r0 : set_roots) r.roots.push_back(g.node[r0]);
      continue;
    }
    uint32_t root = Topology::npos;
    if (wanted != Topology::npos && std::binary_search(members.begin(), members.end(), wanted)) {
      root = wanted;
    } else {
      // Smallest eccentricity, ties to the lowest index (members are sorted and the switch
      // order is node order): one BFS per switch, O(S * (S + cables)).
      uint32_t best = Topology::npos;
      for (uint32_t s : members) {
        const std::vector<uint32_t> d = bfs(g, s);
        uint32_t ecc = 0;
        for (uint32_t m : members) ecc = std::max(ecc, d[m]);
        if (ecc < best) best = ecc, root = s;
      }
    }
    const std::vector<uint32_t> d = bfs(g, root);
    for (uint32_t m : members) {
      done[m] = true;
      r.rank[g.node[m]] = d[m];
    }
    r.roots.push_back(g.node[root]);
  }
  return r;
}

RoutingTables UpDownEngine::compute(const Topology& t) {
  ranking_ = rank_switches(t, opt_);
  const SwitchGraph g = switch_graph(t);
  const size_t n = g.node.size();

  // pos[s]: place of switch s in the (rank, GUID, index) order; a cable s -> c leads up
  // exactly when pos[c] < pos[s] (UpDownRanking::is_up, precomputed).
  std::vector<uint32_t> pos(n);
  {
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return ranking_.is_up(t, g.node[b], g.node[a]);  // a before b: b -> a leads up
    });
    for (uint32_t i = 0; i < n; ++i) pos[order[i]] = i;
  }

  RoutingTables rt = updown_tables(t, g, pos, name());
  // With several roots, each is a lowest point of the order; two switches whose up paths
  // reach different roots only, with no switch both can climb to, have no legal route.
  // OpenSM leaves such pairs unrouted unless connect_roots is set (not modelled here): refuse.
  if (opt_.roots.size() > 1) {
    if (const std::optional<UnroutedPair> hole = first_unrouted(t, rt)) {
      std::string names;
      for (uint32_t r : opt_.roots) names += (names.empty() ? "" : ", ") + t.nodes[r].name;
      throw ConfigError(t.source, "routing_options.roots", 0,
                        "with the roots " + names + " (all of rank 0), " + t.nodes[hole->src].name +
                            " has no up*/down* route to " + t.nodes[t.node_of_lid(hole->dlid)].name +
                            ": no switch is reached going up from both",
                        "give roots every switch can climb to through a common switch (the top level of a fat tree, "
                        "or roots cabled to each other), or one root");
    }
  }
  return rt;
}

std::unique_ptr<RoutingEngine> make_updn_engine(UpDownOptions opt) {
  return std::make_unique<UpDownEngine>(std::move(opt));
}

}  // namespace ibvp::sm
