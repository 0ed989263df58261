// Video frame sizes (issue 11): the trace reader, the MPEG-2 generator, the MTU splitter,
// and the shipped traces of configs/traces/video/.
#include "platform/workload/video_frames.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>

#include "platform/params/config_error.h"

namespace ibvp::workload {
namespace {

std::string tmp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("ibvp_video_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Removes a file of tmp_file and, once empty, its directory.
void remove_tmp(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  std::filesystem::remove(std::filesystem::path(path).parent_path(), ec);
}

// The ConfigError thrown by parsing `text`; fails the test when none is thrown.
ConfigError parse_error(const std::string& text) {
  try {
    parse_video_frames(text, "t.txt");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for: " << text;
  return ConfigError("", "", 0, "", "");
}

TEST(VideoFrames, ReaderReturnsTheListedFramesSkippingCommentsBlankLinesAndCommas) {
  const std::string path = tmp_file("small.txt",
                                    "# frame type size\n"
                                    "\n"
                                    "0 I 40000\n"
                                    "1\tB  3000   # trailing comment\n"
                                    "2,B,3100\r\n"
                                    "5 P 8000\n");
  const std::vector<VideoFrame> f = read_video_frames(path);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].number, 0u); EXPECT_EQ(f[0].type, FrameType::I); EXPECT_EQ(f[0].size_bytes, 40000u);
  EXPECT_EQ(f[1].number, 1u); EXPECT_EQ(f[1].type, FrameType::B); EXPECT_EQ(f[1].size_bytes, 3000u);
  EXPECT_EQ(f[2].number, 2u); EXPECT_EQ(f[2].type, FrameType::B); EXPECT_EQ(f[2].size_bytes, 3100u);
  EXPECT_EQ(f[3].number, 5u); EXPECT_EQ(f[3].type, FrameType::P); EXPECT_EQ(f[3].size_bytes, 8000u);
  // 54,100 bytes over 4 frames at 30 frames/s.
  EXPECT_DOUBLE_EQ(mean_bit_rate_bps(f), 8.0 * 54100 * 30 / 4);
  remove_tmp(path);
}

TEST(VideoFrames, EachBadLineIsAnErrorNamingFileLineFieldAndFix) {
  struct Case { std::string text; int line; std::string key; };
  const std::vector<Case> cases = {
      {"0 I 100\n1 X 100\n", 2, "type"},
      {"0 I 100\n\n1 i 100\n", 3, "type"},
      {"0 I -5\n", 1, "size_bytes"},
      {"0 I 0\n", 1, "size_bytes"},
      {"0 I 16777217\n", 1, "size_bytes"},  // kMaxVideoFrameBytes + 1
      {"0 I 99999999999999999999999\n", 1, "size_bytes"},
      {"0 I 12kB\n", 1, "size_bytes"},
      {"0 I 100\n1 P 100\n1 B 100\n", 3, "frame_number"},
      {"# c\n4 I 100\n2 P 100\n", 3, "frame_number"},
      {"-1 I 100\n", 1, "frame_number"},
      {"0 I 100\n1 P\n", 2, ""},
      {"0 I 100 7\n", 1, ""},
  };
  for (const Case& c : cases) {
    const ConfigError e = parse_error(c.text);
    EXPECT_EQ(e.file(), "t.txt") << c.text;
    EXPECT_EQ(e.line(), c.line) << c.text;
    EXPECT_EQ(e.key(), c.key) << c.text;
    EXPECT_FALSE(e.fix().empty()) << c.text;
    EXPECT_NE(std::string(e.what()).find("t.txt:" + std::to_string(c.line)), std::string::npos) << e.what();
  }
  EXPECT_EQ(kMaxVideoFrameBytes, 16777216u);
}

TEST(VideoFrames, AnEmptyTraceIsAnErrorNamingTheFile) {
  const ConfigError e = parse_error("# only a comment\n\n");
  EXPECT_EQ(e.file(), "t.txt");
  EXPECT_NE(std::string(e.what()).find("no frames"), std::string::npos) << e.what();
  // An empty file is refused by read_input_file already, naming the path.
  const std::string path = tmp_file("empty.txt", "");
  try {
    read_video_frames(path);
    ADD_FAILURE() << "empty file accepted";
  } catch (const ConfigError& err) {
    EXPECT_EQ(err.file(), path);
  }
  remove_tmp(path);
}

TEST(VideoFrames, GeneratorLongRunMeanRateIsTheRequestedRateWithin2Percent) {
  for (const double rate : {1.5e6, 6e6, 15e6}) {
    Mpeg2FrameGenerator g(rate, 7, "video/test");
    std::vector<VideoFrame> f;
    for (int i = 0; i < 12 * 2000; ++i) f.push_back(g.next());
    EXPECT_NEAR(mean_bit_rate_bps(f), rate, 0.02 * rate) << rate;
  }
}

TEST(VideoFrames, GeneratorIFramesAreLargerOnAverageThanPFramesThanBFrames) {
  Mpeg2FrameGenerator g(6e6, 11, "video/test");
  std::map<FrameType, double> sum, count;
  for (int i = 0; i < 12 * 1000; ++i) {
    const VideoFrame f = g.next();
    sum[f.type] += f.size_bytes;
    count[f.type] += 1;
  }
  const double i = sum[FrameType::I] / count[FrameType::I], p = sum[FrameType::P] / count[FrameType::P],
               b = sum[FrameType::B] / count[FrameType::B];
  EXPECT_GT(i, p);
  EXPECT_GT(p, b);
  // And near the model's 5:2:1 means: 6 Mb/s / 30 * 12 frames / 8 = 300,000 bytes per GOP, 19 units.
  EXPECT_NEAR(b, 300000.0 / 19, 0.03 * 300000.0 / 19);
  EXPECT_NEAR(i, 5 * 300000.0 / 19, 0.03 * 5 * 300000.0 / 19);
}

TEST(VideoFrames, GeneratorFollowsTheGopOrderAndNumbersFramesFromZero) {
  Mpeg2FrameGenerator g(2e6, 1, "video/test", "IPBB");
  const std::string want = "IPBBIPBBIPBB";
  for (size_t n = 0; n < want.size(); ++n) {
    const VideoFrame f = g.next();
    EXPECT_EQ(f.number, n);
    EXPECT_EQ(static_cast<char>(f.type), want[n]) << n;
    EXPECT_GE(f.size_bytes, 1u);
  }
  Mpeg2FrameGenerator d(2e6, 1, "video/test");
  EXPECT_EQ(d.gop(), "IBBPBBPBBPBB");
  for (char c : d.gop()) EXPECT_EQ(static_cast<char>(d.next().type), c);
}

TEST(VideoFrames, GeneratorSameSeedSameSizesOtherSeedOrComponentOtherSizes) {
  Mpeg2FrameGenerator a(4e6, 3, "video/x"), b(4e6, 3, "video/x"), c(4e6, 4, "video/x"), d(4e6, 3, "video/y");
  int differ_c = 0, differ_d = 0;
  for (int i = 0; i < 100; ++i) {
    const uint32_t sa = a.next().size_bytes;
    EXPECT_EQ(sa, b.next().size_bytes) << i;
    differ_c += sa != c.next().size_bytes;
    differ_d += sa != d.next().size_bytes;
  }
  EXPECT_GT(differ_c, 90);
  EXPECT_GT(differ_d, 90);
}

TEST(VideoFrames, GeneratorRefusesBadRatesAndGopPatternsAtTheirKeys) {
  for (const std::string gop : {"", "PBB", "IBX", "ibb", "I B"}) {
    try {
      Mpeg2FrameGenerator g(1e6, 1, "v", gop);
      ADD_FAILURE() << "accepted GOP '" << gop << "'";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "gop");
      EXPECT_FALSE(e.fix().empty());
    }
  }
  for (const double rate : {0.0, -1.0, 5e8, std::nan("")}) {
    try {
      Mpeg2FrameGenerator g(rate, 1, "v");
      ADD_FAILURE() << "accepted rate " << rate;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "bit_rate_bps");
    }
  }
  EXPECT_NO_THROW(Mpeg2FrameGenerator(Mpeg2FrameGenerator::kMaxBitRateBps, 1, "v", "I"));
}

TEST(VideoFrames, SplitterConservesBytesAndNoPacketExceedsTheMtu) {
  for (const uint32_t mtu : {256u, 2048u, 4096u}) {
    for (const uint32_t bytes : {1u, 255u, 256u, 257u, 2048u, 4095u, 4096u, 4097u, 41250u, 16777216u}) {
      const std::vector<uint32_t> p = packet_sizes(bytes, mtu);
      const FrameSplit s = split_frame(bytes, mtu);
      EXPECT_EQ(p.size(), s.packets);
      EXPECT_EQ(s.packets, (bytes + mtu - 1) / mtu);  // the fewest packets that can carry it
      EXPECT_EQ(std::accumulate(p.begin(), p.end(), uint64_t{0}), bytes);
      for (size_t k = 0; k < p.size(); ++k) {
        EXPECT_GE(p[k], 1u);
        EXPECT_LE(p[k], mtu);
        if (k + 1 < p.size()) {
          EXPECT_EQ(p[k], mtu);  // only the last one is short
        }
      }
    }
  }
  EXPECT_EQ(split_frame(0, 2048).packets, 0u);
  EXPECT_THROW(split_frame(100, 0), std::invalid_argument);
  const FrameSplit s = split_frame(5000, 2048);
  EXPECT_EQ(s.packets, 3u);
  EXPECT_EQ(s.last_packet_bytes, 904u);
}

// The header value `key: N` of a shipped trace.
double header_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("# " + key + ": ");
    if (at == 0) return std::stod(line.substr(key.size() + 4));
  }
  ADD_FAILURE() << path << " has no '" << key << "'";
  return 0.0;
}

TEST(VideoFrames, EveryShippedTraceLoadsWithTheMeanRateItsHeaderStates) {
  const std::filesystem::path dir = std::filesystem::path(IBVP_SOURCE_DIR) / "configs/traces/video";
  std::vector<double> targets;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string path = entry.path().string();
    const std::vector<VideoFrame> f = read_video_frames(path);
    EXPECT_EQ(f.size(), 900u) << path;  // 30 s at 30 frames/s
    const double target = header_value(path, "target_bit_rate_bps");
    const double mean = header_value(path, "mean_bit_rate_bps");
    EXPECT_NEAR(mean_bit_rate_bps(f), mean, 1.0) << path;  // the script's stated mean, to the bit
    EXPECT_NEAR(mean, target, 0.03 * target) << path;       // 75 GOPs: within 3 % of the target
    // The script runs the C++ model's arithmetic on the same stream (docs/video.md).
    const std::string stem = entry.path().stem().string();
    Mpeg2FrameGenerator g(target, 2026, "video/" + stem);
    for (size_t n = 0; n < f.size(); ++n) {
      const VideoFrame v = g.next();
      ASSERT_EQ(v.type, f[n].type) << path << " frame " << n;
      ASSERT_EQ(v.size_bytes, f[n].size_bytes) << path << " frame " << n;
    }
    targets.push_back(target);
  }
  std::sort(targets.begin(), targets.end());
  EXPECT_EQ(targets.size(), 7u);  // seven traces of different rates (seed 000 Sec. 4)
  EXPECT_EQ(std::adjacent_find(targets.begin(), targets.end()), targets.end());
}

}  // namespace
}  // namespace ibvp::workload
