// Link data rates from width, speed and line encoding (IBA Vol. 2), and the time a packet
// occupies a link.
#include <gtest/gtest.h>

#include "models/link/link_rate.h"

using namespace ibvp::link;

namespace {
LinkRate rate(Width w, Speed s, double length_m = 1.0) {
  LinkConfig c;
  c.width = w;
  c.speed = s;
  c.length_m = length_m;
  return LinkRate(c);
}
}  // namespace

TEST(LinkRate, DataRateIsLanesTimesSignallingTimesEncoding) {
  // Well-known data rates of 4X links: 8, 16, 32, 40, 54.55, 100, 200, 400 Gb/s.
  EXPECT_DOUBLE_EQ(rate(Width::x4, Speed::sdr).data_bits_per_s(), 8e9);
  EXPECT_DOUBLE_EQ(rate(Width::x4, Speed::ddr).data_bits_per_s(), 16e9);
  EXPECT_DOUBLE_EQ(rate(Width::x4, Speed::qdr).data_bits_per_s(), 32e9);
  EXPECT_DOUBLE_EQ(rate(Width::x4, Speed::fdr10).data_bits_per_s(), 40e9);
  EXPECT_NEAR(rate(Width::x4, Speed::fdr).data_bits_per_s(), 54.5454545e9, 1e3);
  EXPECT_DOUBLE_EQ(rate(Width::x4, Speed::edr).data_bits_per_s(), 100e9);
  EXPECT_DOUBLE_EQ(rate(Width::x4, Speed::hdr).data_bits_per_s(), 200e9);
  EXPECT_DOUBLE_EQ(rate(Width::x4, Speed::ndr).data_bits_per_s(), 400e9);
  EXPECT_DOUBLE_EQ(rate(Width::x1, Speed::sdr).data_bits_per_s(), 2e9);
  EXPECT_DOUBLE_EQ(rate(Width::x12, Speed::qdr).data_bits_per_s(), 96e9);
}

TEST(LinkRate, SerializationIsExactPicosecondsRoundedUp) {
  // 4X SDR moves one byte per nanosecond (seed 004 Table 1: 1 GB/s, 2.068 us for 2068 bytes).
  EXPECT_EQ(rate(Width::x4, Speed::sdr).serialization_ps(2068), 2'068'000u);
  EXPECT_EQ(rate(Width::x4, Speed::qdr).serialization_ps(2082), 520'500u);
  // 4X FDR: 1 byte = 8 / 54.5454... ns = 146.666.. ps -> 3 bytes are exactly 440 ps.
  EXPECT_EQ(rate(Width::x4, Speed::fdr).serialization_ps(3), 440u);
  EXPECT_EQ(rate(Width::x4, Speed::fdr).serialization_ps(1), 147u);
  EXPECT_EQ(rate(Width::x1, Speed::sdr).serialization_ps(64), 256'000u);
}

TEST(LinkRate, PropagationFollowsCableLength) {
  EXPECT_EQ(rate(Width::x4, Speed::sdr, 1.0).propagation().value(), 5'000u);
  EXPECT_EQ(rate(Width::x4, Speed::sdr, 20.0).propagation().value(), 100'000u);
  EXPECT_EQ(rate(Width::x4, Speed::sdr, 0.0).propagation().value(), 0u);
}

TEST(LinkRate, WidthAndSpeedNamesParse) {
  Width w;
  Speed s;
  ASSERT_TRUE(parse_width("12x", w));
  EXPECT_EQ(w, Width::x12);
  ASSERT_TRUE(parse_speed("fdr10", s));
  EXPECT_EQ(s, Speed::fdr10);
  EXPECT_FALSE(parse_width("3X", w));
  EXPECT_FALSE(parse_speed("XDR", s));
}
