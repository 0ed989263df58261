#include "platform/workload/video_frames.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "platform/params/config_error.h"
#include "platform/params/input_file.h"

namespace ibvp::workload {

namespace {

constexpr double kPi = 3.141592653589793;

// Fields of one line: separated by spaces, tabs or commas (traces come as both).
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : line) {
    if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else cur += c;
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// A decimal integer (optional sign) filling the whole field; false otherwise or on overflow.
bool parse_int(const std::string& s, long long& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

}  // namespace

std::vector<VideoFrame> parse_video_frames(const std::string& text, const std::string& file) {
  std::vector<VideoFrame> frames;
  const std::string line_fix = "write one frame per line as \"frame_number type size_bytes\", e.g. \"0 I 41250\"";
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> f = fields_of(line);
    if (f.empty()) continue;
    if (f.size() != 3)
      throw ConfigError(file, "", line_no,
                        "a frame line has " + std::to_string(f.size()) + " fields, not 3", line_fix);
    long long number = 0;
    if (!parse_int(f[0], number) || number < 0)
      throw ConfigError(file, "frame_number", line_no, "'" + f[0] + "' is not a frame number",
                        "give a whole number >= 0 in the first field");
    if (!frames.empty() && static_cast<uint64_t>(number) <= frames.back().number)
      throw ConfigError(file, "frame_number", line_no,
                        "frame " + f[0] + " follows frame " + std::to_string(frames.back().number),
                        "list frames in display order with increasing frame numbers");
    if (f[1] != "I" && f[1] != "P" && f[1] != "B")
      throw ConfigError(file, "type", line_no, "unknown frame type '" + f[1] + "'",
                        "give I, P or B (upper case) in the second field");
    long long size = 0;
    if (!parse_int(f[2], size))
      throw ConfigError(file, "size_bytes", line_no, "'" + f[2] + "' is not a size in bytes",
                        "give the frame's size as a whole number of bytes in the third field");
    if (size <= 0 || size > static_cast<long long>(kMaxVideoFrameBytes))
      throw ConfigError(file, "size_bytes", line_no,
                        "frame size " + f[2] + " is outside 1 .. " + std::to_string(kMaxVideoFrameBytes) + " bytes",
                        "give the size in bytes (not bits or kB); drop empty frames from the trace");
    frames.push_back(VideoFrame{static_cast<uint64_t>(number), static_cast<FrameType>(f[1][0]),
                                static_cast<uint32_t>(size)});
  }
  if (frames.empty())
    throw ConfigError(file, "", 0, "the video trace lists no frames", line_fix);
  return frames;
}

std::vector<VideoFrame> read_video_frames(const std::string& path) {
  const std::string text = read_input_file(path, "video trace",
                                           "give a path relative to the scenario file's directory or an absolute one");
  return parse_video_frames(text, path);
}

double mean_bit_rate_bps(const std::vector<VideoFrame>& frames, double frames_per_second) {
  if (frames.empty()) return 0.0;
  double bytes = 0.0;
  for (const VideoFrame& fr : frames) bytes += fr.size_bytes;
  return 8.0 * bytes * frames_per_second / static_cast<double>(frames.size());
}

std::string Mpeg2FrameGenerator::gop_problem(const std::string& gop) {
  if (gop.empty()) return "the GOP pattern is empty";
  if (gop.front() != 'I') return "the GOP pattern '" + gop + "' does not start with an I frame";
  for (const char c : gop)
    if (c != 'I' && c != 'P' && c != 'B')
      return "the GOP pattern '" + gop + "' holds '" + std::string(1, c) + "', not I, P or B";
  return "";
}

Mpeg2FrameGenerator::Mpeg2FrameGenerator(double bit_rate_bps, uint64_t seed, const std::string& component,
                                         std::string gop)
    : gop_(std::move(gop)), unit_bytes_(0.0), rng_(seed, component) {
  if (!(bit_rate_bps > 0.0 && bit_rate_bps <= kMaxBitRateBps))
    throw ConfigError("", "bit_rate_bps", 0, "video bit rate " + std::to_string(bit_rate_bps) + " b/s is outside (0, 4e8]",
                      "give the mean rate in bits per second, e.g. 6e6 for 6 Mb/s");
  const std::string problem = gop_problem(gop_);
  if (!problem.empty())
    throw ConfigError("", "gop", 0, problem, "give a pattern of I, P and B starting with I, e.g. " +
                                                  std::string(kDefaultGop));
  // Bytes a GOP must carry at the requested rate, shared out in the types' mean ratios.
  double relative = 0.0;
  for (const char c : gop_)
    relative += c == 'I' ? kRelativeMeanI : c == 'P' ? kRelativeMeanP : kRelativeMeanB;
  const double gop_bytes = bit_rate_bps / 8.0 / kVideoFramesPerSecond * static_cast<double>(gop_.size());
  unit_bytes_ = gop_bytes / relative;
}

double Mpeg2FrameGenerator::mean_bytes(FrameType type) const {
  switch (type) {
    case FrameType::I: return kRelativeMeanI * unit_bytes_;
    case FrameType::P: return kRelativeMeanP * unit_bytes_;
    case FrameType::B: return kRelativeMeanB * unit_bytes_;
  }
  return unit_bytes_;
}

VideoFrame Mpeg2FrameGenerator::next() {
  const FrameType type = static_cast<FrameType>(gop_[number_ % gop_.size()]);
  const double cv = type == FrameType::I ? kCvI : type == FrameType::P ? kCvP : kCvB;
  // Lognormal with mean m and coefficient of variation cv: sigma^2 = ln(1 + cv^2),
  // mu = ln(m) - sigma^2 / 2. The normal deviate comes from Box-Muller on two uniforms
  // (1 - u keeps the logarithm's argument in (0, 1]), spelled out for determinism.
  const double sigma2 = std::log1p(cv * cv);
  const double mu = std::log(mean_bytes(type)) - sigma2 / 2.0;
  const double u1 = rng_.uniform(), u2 = rng_.uniform();
  const double z = std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * kPi * u2);
  const double size = std::floor(std::exp(mu + std::sqrt(sigma2) * z) + 0.5);
  // A draw far in the tail is clamped to a valid frame (never happens at sane rates).
  const uint32_t bytes = size < 1.0 ? 1u
                         : size > static_cast<double>(kMaxVideoFrameBytes) ? kMaxVideoFrameBytes
                                                                            : static_cast<uint32_t>(size);
  return VideoFrame{number_++, type, bytes};
}

FrameSplit split_frame(uint32_t frame_bytes, uint32_t mtu_bytes) {
  if (mtu_bytes == 0) throw std::invalid_argument("split_frame: MTU of 0 bytes");
  FrameSplit s;
  if (frame_bytes == 0) return s;
  s.packets = (frame_bytes - 1) / mtu_bytes + 1;
  s.full_packet_bytes = mtu_bytes;
  s.last_packet_bytes = frame_bytes - (s.packets - 1) * mtu_bytes;
  return s;
}

std::vector<uint32_t> packet_sizes(uint32_t frame_bytes, uint32_t mtu_bytes) {
  const FrameSplit s = split_frame(frame_bytes, mtu_bytes);
  std::vector<uint32_t> out(s.packets, s.full_packet_bytes);
  if (s.packets > 0) out.back() = s.last_packet_bytes;
  return out;
}

}  // namespace ibvp::workload
