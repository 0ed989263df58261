// Firmware images: the loader refuses what it cannot run, naming the image; an alternative
// image changes a measurable behaviour (the order in which doorbells are served).
#include <gtest/gtest.h>

#include <string>
#include <systemc>
#include <vector>

#include "hca/hca_bench.h"
#include "models/hca/firmware_image.h"

using namespace ibvp;
using namespace ibvp::verbs;
using sc_core::SC_MS;
using sc_core::sc_time;

TEST(HcaFirmware, ImageWithWrongHalVersionIsRefusedNamingPathAndBothVersions) {
  const std::string path = IBVP_FW_WRONG_HAL_VERSION_IMAGE;
  try {
    hca::FirmwareImage image(path);
    FAIL() << "an image built for another HAL version was loaded";
  } catch (const hca::FirmwareError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("HAL version " + std::to_string(IBVP_HAL_VERSION + 1)), std::string::npos) << msg;
    EXPECT_NE(msg.find("HAL version " + std::to_string(IBVP_HAL_VERSION)), std::string::npos) << msg;
  }
}

TEST(HcaFirmware, MissingImageIsRefusedNamingThePath) {
  const std::string path = std::string(IBVP_BINARY_DIR) + "/firmware/no_such_image.so";
  try {
    hca::FirmwareImage image(path);
    FAIL() << "a missing image was loaded";
  } catch (const hca::FirmwareError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(HcaFirmware, DefaultImageLoadsWithThePlatformsHalVersion) {
  hca::FirmwareImage image(driver::default_firmware_image());
  EXPECT_EQ(image.hal_version(), IBVP_HAL_VERSION);
  EXPECT_NE(image.init, nullptr);
  EXPECT_NE(image.handle, nullptr);
  EXPECT_NE(image.fini, nullptr);
}

TEST(HcaFirmware, HcaWithWrongImageIsRefusedAtElaboration) {
  tb::HcaBenchOptions o;
  o.h2.hca.firmware_image = IBVP_FW_WRONG_HAL_VERSION_IMAGE;
  EXPECT_THROW(tb::HcaBench bench(o), hca::FirmwareError);
}

TEST(HcaFirmware, BadFirmwareArgumentsAreRefused) {
  tb::HcaBenchOptions o;
  o.h1.hca.firmware_args = "wqe_cycle=5";
  try {
    tb::HcaBench bench(o);
    FAIL() << "firmware started with an unknown argument";
  } catch (const hca::FirmwareError& e) {
    EXPECT_NE(std::string(e.what()).find("refused to start"), std::string::npos) << e.what();
  }
}

namespace {

// Three UD QPs on h1: two of doorbell class 0, one of class 3, posted in that order, 54 ns
// apart (a verbs call and a doorbell store). The core spends 100 cycles taking the first
// doorbell event and 10 per HAL call looking at the queues, so all three doorbells wait
// when the firmware first picks one; the order of the receiver's completions shows the
// order in which it served them.
std::vector<uint32_t> arrival_order(const std::string& image) {
  tb::HcaBenchOptions o;
  o.h1.hca.firmware_image = image;
  tb::HcaBench bench(o);
  tb::Side a, b;
  std::vector<uint32_t> order, sent;
  bench.h1->cpu.run([&] {
    tb::open_side(a, *bench.h1, QpType::ud, 0);
    tb::open_side(b, *bench.h2, QpType::ud);
    QueuePair* low2 = tb::add_qp(a, QpType::ud, 0);
    QueuePair* high = tb::add_qp(a, QpType::ud, 3);
    ASSERT_NE(low2, nullptr);
    ASSERT_NE(high, nullptr);
    for (QueuePair* q : {a.qp, low2, high}) tb::bring_up(q, 0, 0);
    tb::bring_up(b.qp, 0, 0);
    std::vector<RecvWr> recvs(3);
    for (size_t i = 0; i < 3; ++i) {
      recvs[i].wr_id = i;
      recvs[i].sg = {tb::Side::kBuffer + i * 4096, 4096, b.mr->lkey};
      if (i + 1 < 3) recvs[i].next = &recvs[i + 1];
    }
    ASSERT_EQ(post_recv(b.qp, &recvs[0]), 0);
    AddressHandle* ah = create_ah(a.pd, AhAttr{b.lid, 0, 1});
    bench.h1->cpu.spend(sc_time(10, sc_core::SC_US));
    for (QueuePair* q : {a.qp, low2, high}) {
      SendWr w;
      w.sg = {tb::Side::kBuffer, 32, a.mr->lkey};
      w.ud.ah = ah;
      w.ud.remote_qpn = b.qp->qp_num;
      w.ud.remote_qkey = tb::kQkey;
      ASSERT_EQ(post_send(q, &w), 0);
      sent.push_back(q->qp_num);
    }
    for (int i = 0; i < 3; ++i) {
      Wc wc;
      poll_cq_wait(b.recv_cq, wc);
      order.push_back(wc.src_qp);
    }
  });
  sc_core::sc_start(sc_time(1, SC_MS));
  EXPECT_EQ(order.size(), 3u);
  if (order.size() != 3 || sent.size() != 3) return {};
  // As indices into the posting order: 0 = first class-0 QP, 1 = second, 2 = class 3.
  std::vector<uint32_t> idx;
  for (uint32_t q : order) idx.push_back(q == sent[0] ? 0 : q == sent[1] ? 1 : 2);
  return idx;
}

}  // namespace

TEST(HcaFirmware, DefaultImageServesTheHigherDoorbellClassFirst) {
  // Seed 003 Sec. 3.3.1: the class-3 doorbell goes first although it arrived last.
  EXPECT_EQ(arrival_order(driver::default_firmware_image()), (std::vector<uint32_t>{2, 0, 1}));
}

TEST(HcaFirmware, ExampleImageServesDoorbellsInArrivalOrder) {
  EXPECT_EQ(arrival_order(IBVP_FW_FCFS_DOORBELLS_IMAGE), (std::vector<uint32_t>{0, 1, 2}));
}
