#pragma once
// Frame sizes of real-time video streams (issue 11): the VBR traffic of seed 000 Sec. 4 and
// seed 003 Sec. 4.2, 30 frames/s from seven MPEG-2 traces of different bit rates, each
// frame cut into MTU-sized packets (or messages on HCA hosts). This module only produces
// frame sizes and splits frames; the scenario wiring (keys, sources, deadlines) comes later.
#include <cstdint>
#include <string>
#include <vector>

#include "models/sim/rng.h"

namespace ibvp::workload {

// Both seeds use 30 frames/s (seed 000 Sec. 4, seed 003 Sec. 4.2).
inline constexpr double kVideoFramesPerSecond = 30.0;

// The largest frame accepted, read or generated. An MPEG-2 I frame at 15 Mb/s is about
// 150 KB, and even an uncompressed 1080p frame is 6 MB; a larger size in a trace is a
// wrong column or unit, and a frame must fit the 32-bit byte counts of packets and
// messages downstream.
inline constexpr uint32_t kMaxVideoFrameBytes = uint32_t{16} << 20;  // 16 MiB

enum class FrameType : char { I = 'I', P = 'P', B = 'B' };

struct VideoFrame {
  uint64_t number;      // as listed in the trace (increasing) or counted from 0 (generator)
  FrameType type;
  uint32_t size_bytes;  // 1 .. kMaxVideoFrameBytes
};

// Frames of a trace in the common text form: one frame per line, "frame_number type
// size_bytes" (type I, P or B), fields separated by whitespace or commas; '#' starts a
// comment, blank lines are skipped. `file` names the text in errors. Throws ConfigError
// (file, line, field, fix) on a malformed line, an unknown type, a size of 0 or above
// kMaxVideoFrameBytes, frame numbers that do not increase, or no frames at all.
std::vector<VideoFrame> parse_video_frames(const std::string& text, const std::string& file);

// The same, reading the file through read_input_file (bounded size, regular files only).
std::vector<VideoFrame> read_video_frames(const std::string& path);

// Mean bit rate of frames played at `frames_per_second`: 8 * total bytes / duration.
double mean_bit_rate_bps(const std::vector<VideoFrame>& frames,
                         double frames_per_second = kVideoFramesPerSecond);

// A synthetic MPEG-2 stream: frame types follow a GOP pattern, each frame's size is drawn
// from a lognormal distribution of its type, and the sizes are scaled so the mean bit
// rate over a GOP equals the requested rate at 30 frames/s. It is a model, not a measured
// trace; docs/video.md gives the parameters and where they come from.
class Mpeg2FrameGenerator {
 public:
  // The usual MPEG-2 broadcast GOP: N = 12 frames, an anchor (I or P) every M = 3.
  static constexpr const char* kDefaultGop = "IBBPBBPBBPBB";

  // Mean size relative to a B frame, and the coefficient of variation (std/mean), per
  // type. Lognormal frame sizes per type follow Krunz and Tripathi, "On the
  // characterization of VBR MPEG streams" (ACM SIGMETRICS 1997). The 5:2:1 I:P:B ratio
  // is the round value commonly quoted for MPEG-2 at broadcast quality, and the CVs are
  // moderate round values (I frames vary least, being coded without prediction): both
  // are this model's choices, not numbers fitted to a trace.
  static constexpr double kRelativeMeanI = 5.0, kRelativeMeanP = 2.0, kRelativeMeanB = 1.0;
  static constexpr double kCvI = 0.2, kCvP = 0.35, kCvB = 0.35;

  // Rates above this make mean I frames approach kMaxVideoFrameBytes at 30 frames/s
  // (and are 20 times HDTV broadcast rates): a unit mistake (kb/s for b/s).
  static constexpr double kMaxBitRateBps = 400e6;

  // Throws ConfigError (no file; key "bit_rate_bps" or "gop") for a rate not in
  // (0, kMaxBitRateBps] or a GOP that is empty, does not start with I, or holds a letter
  // other than I, P, B; callers with a document rethrow at their key.
  Mpeg2FrameGenerator(double bit_rate_bps, uint64_t seed, const std::string& component,
                      std::string gop = kDefaultGop);

  // The next frame, numbered from 0; the GOP pattern repeats.
  VideoFrame next();

  // Mean size of frames of `type` in bytes (before drawing and rounding).
  double mean_bytes(FrameType type) const;
  const std::string& gop() const { return gop_; }

  // Empty when `gop` is a valid pattern, else what is wrong with it.
  static std::string gop_problem(const std::string& gop);

 private:
  std::string gop_;
  double unit_bytes_;  // the mean size of a B frame
  sim::Rng rng_;
  uint64_t number_ = 0;
};

// A frame of `frame_bytes` cut into packets of at most `mtu_bytes` payload each: all full
// but the last, which carries the remainder (seed 000 Sec. 4: "each frame is divided into
// fixed-size packets ... the MTU"). A frame of 0 bytes has no packets.
struct FrameSplit {
  uint32_t packets = 0;
  uint32_t full_packet_bytes = 0;  // = mtu_bytes when packets > 0
  uint32_t last_packet_bytes = 0;  // in 1 .. mtu_bytes when packets > 0
};
// Throws std::invalid_argument when mtu_bytes is 0 (callers validate the MTU first).
FrameSplit split_frame(uint32_t frame_bytes, uint32_t mtu_bytes);
// The packet sizes in order (sums to frame_bytes).
std::vector<uint32_t> packet_sizes(uint32_t frame_bytes, uint32_t mtu_bytes);

}  // namespace ibvp::workload
