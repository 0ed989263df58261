#include "platform/topology/generators.h"

#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "platform/params/config_error.h"

namespace ibvp::topo {

namespace {

// Uniform integer in [0, n): std::uniform_int_distribution is implementation-defined, so the
// same seed would give different fabrics with libstdc++ and libc++. Draws below 2^64 mod n
// are rejected; the rest divide evenly into n classes.
uint64_t uniform(std::mt19937_64& g, uint64_t n) {
  const uint64_t reject_below = (0 - n) % n;
  uint64_t x = g();
  while (x < reject_below) x = g();
  return x % n;
}

class Builder {
 public:
  explicit Builder(std::string source) { t_.source = std::move(source); }
  uint32_t add(const std::string& name, NodeKind kind, uint32_t ports) {
    Node n;
    n.name = name;
    n.kind = kind;
    n.num_ports = static_cast<uint16_t>(ports);
    t_.nodes.push_back(n);
    return static_cast<uint32_t>(t_.nodes.size() - 1);
  }
  void cable(uint32_t a, uint32_t pa, uint32_t b, uint32_t pb, const link::LinkConfig& cfg) {
    t_.links.push_back(Link{PortRef{a, static_cast<uint16_t>(pa)}, PortRef{b, static_cast<uint16_t>(pb)}, cfg});
  }
  Topology finish() {
    assign_lids(t_);
    t_.index();
    t_.validate();
    return std::move(t_);
  }
  [[noreturn]] void fail(const std::string& key, const std::string& problem, const std::string& fix) const {
    throw ConfigError(t_.source, key, 0, problem, fix);
  }

 private:
  Topology t_;
};

// Switch port counts are one byte in an LFT (255 = no route).
void check_ports(const Builder& b, const std::string& key, uint64_t ports) {
  if (ports < 1 || ports > Topology::kMaxPorts)
    b.fail(key, "a switch would need " + std::to_string(ports) + " ports",
           "keep ports per switch within 1.." + std::to_string(Topology::kMaxPorts));
}

// The inter-switch graph of random_irregular, as an edge list plus adjacency.
class RandomGraph {
 public:
  RandomGraph(uint32_t n, uint32_t degree, std::mt19937_64& g) : n_(n), degree_(degree), g_(g), adj_(n), deg_(n, 0) {}

  std::vector<std::pair<uint32_t, uint32_t>> build() {
    spanning_tree();
    for (;;) {
      fill();
      if (!swap_once()) break;
    }
    return edges_;
  }

  // The spanning tree plus exactly `extra` cables (each one more independent cycle), or
  // fewer when no cable can be added or rewired; the caller checks the count.
  std::vector<std::pair<uint32_t, uint32_t>> build_with_cycles(uint64_t extra) {
    spanning_tree();
    const size_t target = edges_.size() + extra;
    while (edges_.size() < target)
      if (!add_one() && !swap_once()) break;
    return edges_;
  }

 private:
  bool adjacent(uint32_t u, uint32_t v) const { return adj_[u].count(v) != 0; }
  uint32_t free_ports(uint32_t u) const { return degree_ - deg_[u]; }
  void add(uint32_t u, uint32_t v) {
    edges_.emplace_back(u, v);
    adj_[u].insert(v);
    adj_[v].insert(u);
    ++deg_[u];
    ++deg_[v];
  }
  void remove(size_t e) {
    const auto [u, v] = edges_[e];
    edges_.erase(edges_.begin() + static_cast<std::ptrdiff_t>(e));
    adj_[u].erase(v);
    adj_[v].erase(u);
    --deg_[u];
    --deg_[v];
  }

  // Connected first: switches in random order, each cabled to a random earlier one with a
  // free port. With degree >= 2 one always exists (earlier switches have (degree-2)i + 2
  // free ports between them).
  void spanning_tree() {
    std::vector<uint32_t> order(n_);
    for (uint32_t i = 0; i < n_; ++i) order[i] = i;
    for (uint32_t i = n_; i > 1; --i) std::swap(order[i - 1], order[uniform(g_, i)]);  // Fisher-Yates
    std::vector<uint32_t> open;  // earlier switches with a free port
    for (uint32_t i = 0; i < n_; ++i) {
      const uint32_t u = order[i];
      if (i > 0) {
        const size_t pick = uniform(g_, open.size());
        const uint32_t v = open[pick];
        add(u, v);
        if (free_ports(v) == 0) {
          open[pick] = open.back();
          open.pop_back();
        }
      }
      if (free_ports(u) > 0) open.push_back(u);
    }
  }

  // One random cable between two switches with free ports that are not yet neighbours, as
  // fill() lays them; false when no such pair is left.
  bool add_one() {
    std::vector<uint32_t> open;
    for (uint32_t u = 0; u < n_; ++u)
      if (free_ports(u) > 0) open.push_back(u);
    if (open.size() < 2) return false;
    for (int attempt = 0; attempt < 32; ++attempt) {
      const uint32_t u = open[uniform(g_, open.size())], v = open[uniform(g_, open.size())];
      if (u != v && !adjacent(u, v)) {
        add(u, v);
        return true;
      }
    }
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (size_t i = 0; i < open.size(); ++i)
      for (size_t j = i + 1; j < open.size(); ++j)
        if (!adjacent(open[i], open[j])) pairs.emplace_back(open[i], open[j]);
    if (pairs.empty()) return false;
    const auto [u, v] = pairs[uniform(g_, pairs.size())];
    add(u, v);
    return true;
  }

  // Then random extra cables between switches with free ports that are not yet neighbours,
  // until no such pair is left. Random pairs first; a full scan only when those miss.
  void fill() {
    for (;;) {
      std::vector<uint32_t> open;
      for (uint32_t u = 0; u < n_; ++u)
        if (free_ports(u) > 0) open.push_back(u);
      if (open.size() < 2) return;
      bool added = false;
      for (int attempt = 0; attempt < 32 && !added; ++attempt) {
        const uint32_t u = open[uniform(g_, open.size())], v = open[uniform(g_, open.size())];
        if (u != v && !adjacent(u, v)) {
          add(u, v);
          added = true;
        }
      }
      if (added) continue;
      std::vector<std::pair<uint32_t, uint32_t>> pairs;
      for (size_t i = 0; i < open.size(); ++i)
        for (size_t j = i + 1; j < open.size(); ++j)
          if (!adjacent(open[i], open[j])) pairs.emplace_back(open[i], open[j]);
      if (pairs.empty()) return;
      const auto [u, v] = pairs[uniform(g_, pairs.size())];
      add(u, v);
    }
  }

  // The free ports left are on switches already cabled to each other. Rewire one random
  // cable x-y into u-x and y-u (or u-x and y-v for two neighbours u, v with a free port
  // each): x and y stay connected through u, so the graph stays connected, and two more
  // ports are used. False when no cable qualifies.
  bool swap_once() {
    std::vector<uint32_t> open;
    for (uint32_t u = 0; u < n_; ++u)
      if (free_ports(u) > 0) open.push_back(u);
    for (uint32_t u : open) {
      if (free_ports(u) < 2) continue;
      std::vector<size_t> ok;
      for (size_t e = 0; e < edges_.size(); ++e) {
        const auto [x, y] = edges_[e];
        if (x != u && y != u && !adjacent(u, x) && !adjacent(u, y)) ok.push_back(e);
      }
      if (ok.empty()) continue;
      const size_t e = ok[uniform(g_, ok.size())];
      const auto [x, y] = edges_[e];
      remove(e);
      add(u, x);
      add(u, y);
      return true;
    }
    for (size_t i = 0; i < open.size(); ++i)
      for (size_t j = i + 1; j < open.size(); ++j) {
        const uint32_t u = open[i], v = open[j];
        std::vector<std::pair<size_t, bool>> ok;  // cable, and whether to cross it (u-y, v-x)
        for (size_t e = 0; e < edges_.size(); ++e) {
          const auto [x, y] = edges_[e];
          if (x == u || x == v || y == u || y == v) continue;
          if (!adjacent(u, x) && !adjacent(v, y)) ok.emplace_back(e, false);
          if (!adjacent(u, y) && !adjacent(v, x)) ok.emplace_back(e, true);
        }
        if (ok.empty()) continue;
        const auto [e, cross] = ok[uniform(g_, ok.size())];
        auto [x, y] = edges_[e];
        if (cross) std::swap(x, y);
        remove(e);
        add(u, x);
        add(v, y);
        return true;
      }
    return false;
  }

  uint32_t n_, degree_;
  std::mt19937_64& g_;
  std::vector<std::set<uint32_t>> adj_;
  std::vector<uint32_t> deg_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;
};

}  // namespace

Topology random_irregular(uint32_t switches, uint32_t seed, const RandomIrregularOptions& opt) {
  Builder b("random_irregular(" + std::to_string(switches) + " switches, seed " + std::to_string(seed) +
            (opt.cycles >= 0 ? ", " + std::to_string(opt.cycles) + " cycles" : std::string()) + ")");
  if (switches == 0) b.fail("switches", "no switches", "ask for at least 1 switch");
  if ((opt.switch_ports == 0 && switches > 1) || (opt.switch_ports == 1 && switches > 2))
    b.fail("switch_ports", std::to_string(opt.switch_ports) + " switch port(s) per switch cannot join " +
                               std::to_string(switches) + " switches",
           "use switch_ports >= 2");
  check_ports(b, "switch_ports", static_cast<uint64_t>(opt.switch_ports) + opt.host_ports);
  const uint32_t ports = static_cast<uint32_t>(opt.switch_ports) + opt.host_ports;

  std::mt19937_64 g(seed);
  RandomGraph graph(switches, opt.switch_ports, g);
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  if (opt.cycles < 0) {
    edges = graph.build();
  } else {
    // A connected simple graph on n switches of degree <= d has n - 1 tree cables and at
    // most min(floor(n d / 2), n (n - 1) / 2) cables in all.
    const uint64_t n = switches, d = opt.switch_ports;
    const uint64_t most = std::min(n * d / 2, n * (n - 1) / 2) - (n - 1);
    const uint64_t want = static_cast<uint64_t>(opt.cycles);
    const std::string fix = "ask for at most " + std::to_string(most) + " cycles, or give more switch_ports";
    if (want > most)
      b.fail("cycles", std::to_string(want) + " independent cycles need " + std::to_string(n - 1 + want) +
                           " switch cables; " + std::to_string(n) + " switches with " + std::to_string(d) +
                           " switch ports each hold at most " + std::to_string(n - 1 + most),
             fix);
    edges = graph.build_with_cycles(want);
    if (edges.size() != n - 1 + want)
      b.fail("cycles", "seed " + std::to_string(seed) + " could lay only " + std::to_string(edges.size() - (n - 1)) +
                           " of " + std::to_string(want) + " cycles",
             "try another topology seed or " + fix);
  }

  for (uint32_t s = 0; s < switches; ++s) b.add("sw" + std::to_string(s), NodeKind::switch_node, ports);
  // Switch ports in the order the cables were laid, which is random.
  std::vector<uint32_t> next_port(switches, 1);
  for (const auto& [u, v] : edges) b.cable(u, next_port[u]++, v, next_port[v]++, opt.cfg);
  for (uint32_t s = 0; s < switches; ++s)
    for (uint32_t h = 0; h < opt.host_ports; ++h) {
      const uint32_t host = b.add("h" + std::to_string(s) + "_" + std::to_string(h + 1), NodeKind::endpoint, 1);
      b.cable(s, opt.switch_ports + 1u + h, host, 1, opt.cfg);
    }
  return b.finish();
}

Topology two_switch_congestion(uint32_t local, uint32_t remote, const link::LinkConfig& cfg) {
  Builder b("two_switch_congestion(L=" + std::to_string(local) + ", R=" + std::to_string(remote) + ")");
  // A: inter-switch cable, R remote sources, the victim source. B: inter-switch cable, L
  // local sources, the congested root's destination and the victim's destination.
  check_ports(b, "remote", 1ull + remote + 1);
  check_ports(b, "local", 1ull + local + 2);
  const uint32_t a = b.add("A", NodeKind::switch_node, 1 + remote + 1);
  const uint32_t s_b = b.add("B", NodeKind::switch_node, 1 + local + 2);
  std::vector<uint32_t> hosts_a, hosts_b;
  for (uint32_t r = 1; r <= remote; ++r) hosts_a.push_back(b.add("A_R" + std::to_string(r), NodeKind::endpoint, 1));
  hosts_a.push_back(b.add("A_V", NodeKind::endpoint, 1));
  for (uint32_t l = 1; l <= local; ++l) hosts_b.push_back(b.add("B_L" + std::to_string(l), NodeKind::endpoint, 1));
  hosts_b.push_back(b.add("B_C", NodeKind::endpoint, 1));
  hosts_b.push_back(b.add("B_V", NodeKind::endpoint, 1));
  b.cable(a, 1, s_b, 1, cfg);
  for (uint32_t i = 0; i < hosts_a.size(); ++i) b.cable(a, 2 + i, hosts_a[i], 1, cfg);
  for (uint32_t i = 0; i < hosts_b.size(); ++i) b.cable(s_b, 2 + i, hosts_b[i], 1, cfg);
  return b.finish();
}

Topology single_switch(uint32_t hosts, const link::LinkConfig& cfg) {
  Builder b("single_switch(" + std::to_string(hosts) + ")");
  check_ports(b, "hosts", hosts);
  const uint32_t s = b.add("sw", NodeKind::switch_node, hosts);
  for (uint32_t h = 1; h <= hosts; ++h) b.cable(s, h, b.add("h" + std::to_string(h), NodeKind::endpoint, 1), 1, cfg);
  return b.finish();
}

Topology kary_ntree(uint32_t k, uint32_t n, const link::LinkConfig& cfg) {
  Builder b("kary_ntree(k=" + std::to_string(k) + ", n=" + std::to_string(n) + ")");
  if (k < 1 || n < 1) b.fail("k", "a k-ary n-tree needs k >= 1 and n >= 1", "use e.g. k=4, n=2");
  check_ports(b, "k", n > 1 ? 2ull * k : k);
  uint64_t per_level = 1;  // k^(n-1)
  for (uint32_t i = 1; i < n; ++i) {
    per_level *= k;
    if (per_level * n > 65535) b.fail("n", "the tree would have more than 65535 switches", "use smaller k or n");
  }
  const uint32_t w_count = static_cast<uint32_t>(per_level);
  auto id = [w_count](uint32_t level, uint32_t w) { return level * w_count + w; };
  for (uint32_t l = 0; l < n; ++l)
    for (uint32_t w = 0; w < w_count; ++w)
      b.add("s" + std::to_string(l) + "_" + std::to_string(w), NodeKind::switch_node, l + 1 < n ? 2 * k : k);
  // Level l to l+1: the neighbours of <w, l> above are <w', l+1> with digit l of w' = 0..k-1.
  uint32_t digit_weight = 1;  // k^l
  for (uint32_t l = 0; l + 1 < n; ++l, digit_weight *= k)
    for (uint32_t w = 0; w < w_count; ++w) {
      const uint32_t digit = (w / digit_weight) % k;
      const uint32_t base = w - digit * digit_weight;
      for (uint32_t d = 0; d < k; ++d) {
        const uint32_t up = base + d * digit_weight;
        b.cable(id(l, w), k + 1 + d, id(l + 1, up), 1 + digit, cfg);
      }
    }
  for (uint32_t p = 0; p < w_count * k; ++p) {
    const uint32_t host = b.add("h" + std::to_string(p + 1), NodeKind::endpoint, 1);
    b.cable(id(0, p / k), 1 + p % k, host, 1, cfg);
  }
  return b.finish();
}

namespace {

Topology grid(const std::string& what, uint32_t x, uint32_t y, uint32_t hosts_per_switch, bool wrap,
              const link::LinkConfig& cfg) {
  Builder b(what + "(" + std::to_string(x) + "x" + std::to_string(y) + ", " + std::to_string(hosts_per_switch) +
            " hosts per switch)");
  if (x == 0 || y == 0) b.fail("x", "a grid needs x >= 1 and y >= 1", "use e.g. 4 x 4");
  if (static_cast<uint64_t>(x) * y * (1 + hosts_per_switch) > 49151)
    b.fail("x", "more nodes than unicast LIDs", "use a smaller grid");
  check_ports(b, "hosts_per_switch", 4ull + hosts_per_switch);
  enum : uint32_t { kPlusX = 1, kMinusX = 2, kPlusY = 3, kMinusY = 4 };
  auto id = [x](uint32_t i, uint32_t j) { return j * x + i; };
  for (uint32_t j = 0; j < y; ++j)
    for (uint32_t i = 0; i < x; ++i)
      b.add("s" + std::to_string(i) + "_" + std::to_string(j), NodeKind::switch_node, 4 + hosts_per_switch);
  for (uint32_t j = 0; j < y; ++j)
    for (uint32_t i = 0; i < x; ++i) {
      if (i + 1 < x || (wrap && x >= 3)) b.cable(id(i, j), kPlusX, id((i + 1) % x, j), kMinusX, cfg);
      if (j + 1 < y || (wrap && y >= 3)) b.cable(id(i, j), kPlusY, id(i, (j + 1) % y), kMinusY, cfg);
    }
  for (uint32_t j = 0; j < y; ++j)
    for (uint32_t i = 0; i < x; ++i)
      for (uint32_t h = 0; h < hosts_per_switch; ++h) {
        const uint32_t host = b.add("h" + std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(h + 1),
                                    NodeKind::endpoint, 1);
        b.cable(id(i, j), 5 + h, host, 1, cfg);
      }
  return b.finish();
}

}  // namespace

Topology mesh2d(uint32_t x, uint32_t y, uint32_t hosts_per_switch, const link::LinkConfig& cfg) {
  return grid("mesh2d", x, y, hosts_per_switch, false, cfg);
}

Topology torus2d(uint32_t x, uint32_t y, uint32_t hosts_per_switch, const link::LinkConfig& cfg) {
  return grid("torus2d", x, y, hosts_per_switch, true, cfg);
}

}  // namespace ibvp::topo
