// The HCA firmware's SMI (IBA 14.2.2) on two hosts cabled back to back: a directed-route SMP
// the host's SM sends leaves with its hop pointer stepped, the CA at the end of the path
// answers it, and the returning SMP reaches the sender's host; a CA never forwards one.
#include <gtest/gtest.h>

#include <systemc>
#include <utility>
#include <vector>

#include "hca/hca_bench.h"
#include "models/ib/mad.h"

using namespace ibvp;
using sc_core::SC_US;
using sc_core::sc_time;
namespace mad = ib::mad;

namespace {

tb::HcaBenchOptions back_to_back() {
  tb::HcaBenchOptions o;
  o.switched = false;
  o.h2.hca.node_guid = 0x0002c90300001230ULL;
  o.h2.hca.port_guid = 0x0002c90300001231ULL;
  return o;
}

ib::MadDatagram dr_smp(const mad::Smp& s) {
  ib::MadDatagram m;
  m.dlid = ib::kPermissiveLid;
  mad::Bytes b;
  mad::encode(s, b);
  m.mad = b;
  return m;
}

}  // namespace

TEST(HcaSmi, ADirectedRouteSmpOneHopOutIsAnsweredByTheCaAtTheEndAndReturnsToTheSender) {
  tb::HcaBench bench(back_to_back());
  std::vector<ib::MadDatagram> got1, got2;
  bench.h1->hca.set_mad_receiver([&](const ib::MadDatagram& m, uint64_t) { got1.push_back(m); });
  bench.h2->hca.set_mad_receiver([&](const ib::MadDatagram& m, uint64_t) { got2.push_back(m); });
  const uint8_t path[] = {1};  // out of h1's port 1: the cable to h2
  bench.h1->hca.send_mad(dr_smp(mad::make_directed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 77, path, 1)), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  ASSERT_EQ(got1.size(), 1u);
  EXPECT_TRUE(got2.empty());
  const mad::Smp r = mad::decode_smp(got1[0].mad);
  EXPECT_TRUE(r.returning());
  EXPECT_EQ(r.status_code(), mad::kStatusOk);
  EXPECT_EQ(r.hdr.transaction_id, 77u);
  EXPECT_EQ(r.hop_count(), 1);
  EXPECT_EQ(r.hop_pointer(), 0);     // C14-13:3: back at the start of the path
  EXPECT_EQ(r.return_path[1], 1);    // h2 recorded the port it came in by
  const mad::NodeInfo n = mad::NodeInfo::decode(r.data);
  EXPECT_EQ(n.node_guid, 0x0002c90300001230ULL);
  EXPECT_EQ(n.port_guid, 0x0002c90300001231ULL);
  EXPECT_EQ(got1[0].dlid, ib::kPermissiveLid);  // directed-route mode on the wire both ways
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_SMPS), 1u);
  EXPECT_EQ(bench.h1->hca.counters().vl[ib::kVl15].packets_tx, 1u);
  EXPECT_EQ(bench.h2->hca.counters().vl[ib::kVl15].packets_tx, 1u);
}

TEST(HcaSmi, ACaAskedToForwardADirectedRouteSmpDropsIt) {
  // HopCount 2: h2 would be an intermediate hop, which only a switch can be (C14-9:2).
  tb::HcaBench bench(back_to_back());
  std::vector<ib::MadDatagram> got1;
  bench.h1->hca.set_mad_receiver([&](const ib::MadDatagram& m, uint64_t) { got1.push_back(m); });
  const uint8_t path[] = {1, 1};
  bench.h1->hca.send_mad(dr_smp(mad::make_directed_smp(mad::kMethodGet, mad::kAttrNodeInfo, 0, 1, path, 2)), 0);
  sc_core::sc_start(sc_time(20, SC_US));
  EXPECT_TRUE(got1.empty());
  EXPECT_EQ(bench.h2->hca.counters().vl[ib::kVl15].packets_tx, 0u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_RX_DROPPED), 1u);
  EXPECT_EQ(bench.h2->hca.fw_counter(IBVP_CNT_SMPS), 0u);
}
