// Hostile input documents are refused before a YAML tree is built, each with the line and a
// fix (platform/params/input_text.h). tests/python/test_cli_hostile_inputs.py holds the Python
// front end to the same messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/params/config_error.h"
#include "platform/params/input_text.h"
#include "platform/params/validate.h"
#include "platform/scenario/scenario_loader.h"

namespace ibvp::params {
namespace {

ConfigError parse_error(const std::string& text) {
  try {
    Document::parse(text, "doc.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  return ConfigError("", "", 0, "", "");
}

std::string nested_lists(int depth) { return "k: " + std::string(depth, '[') + std::string(depth, ']') + "\n"; }

TEST(InputText, NestingIsRefusedJustPastTheLimitAtItsLine) {
  EXPECT_NO_THROW(Document::parse(nested_lists(kMaxNesting - 1), "doc.yaml"));  // + the top mapping
  const ConfigError e = parse_error("a: 1\n" + nested_lists(1000));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.problem(), "mappings and lists nested more than 64 deep");
  EXPECT_FALSE(e.fix().empty());
}

TEST(InputText, AliasBombIsRefusedAtTheAliasThatCrossesTheLimit) {
  // Billion laughs: each level repeats the one before nine times, 9^9 values at the top.
  std::string text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) text += std::string(i ? ", " : "") + "*" + static_cast<char>(c - 1);
    text += "]\n";
  }
  const ConfigError e = parse_error(text);
  EXPECT_EQ(e.problem(), "aliases expand the document to more than 1000000 values");
  EXPECT_EQ(e.line(), 7);  // g: 9^7 > 10^6 values so far
  // Aliases that expand to little are fine.
  EXPECT_NO_THROW(Document::parse("a: &x [1, 2]\nb: *x\nc: *x\n", "doc.yaml"));
}

TEST(InputText, AliasInsideItsOwnAnchorIsRefused) {
  EXPECT_EQ(parse_error("a: &x [1, *x]\n").problem(), "an alias inside the value of its own anchor");
}

TEST(InputText, BytesThatAreNotUtf8AreRefusedWithLineAndColumn) {
  const ConfigError e = parse_error("name: r\xc3\xa9seau\nseed: \xff\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.problem(), "invalid UTF-8 byte 0xff at column 7");
  // Overlong, surrogate and truncated sequences (Unicode Table 3-7).
  EXPECT_EQ(parse_error("a: \xc0\xaf\n").problem(), "invalid UTF-8 byte 0xc0 at column 4");
  EXPECT_EQ(parse_error("a: \xed\xa0\x80\n").problem(), "invalid UTF-8 byte 0xed at column 4");
  EXPECT_EQ(parse_error("a: \xe2\x82").problem(), "invalid UTF-8 byte 0xe2 at column 4");
  EXPECT_NO_THROW(Document::parse("a: \xf0\x9f\x9a\x80 \xe7\xbd\x91\n", "doc.yaml"));
}

TEST(InputText, ControlCharactersAreRefusedTabsAreNot) {
  const ConfigError e = parse_error(std::string("name: x\0y\n", 10));
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.problem(), "character U+0000 at column 8 is not allowed in YAML");
  EXPECT_EQ(parse_error("a: \x7f\n").problem(), "character U+007F at column 4 is not allowed in YAML");
  EXPECT_NO_THROW(Document::parse("a:\tb\r\n", "doc.yaml"));
}

TEST(InputText, LongScalarsAndLongDocumentsAreRefused) {
  EXPECT_NO_THROW(Document::parse("a: " + std::string(kMaxScalarBytes, 'x') + "\n", "doc.yaml"));
  const ConfigError e = parse_error("b: 1\na: " + std::string(kMaxScalarBytes + 1, 'x') + "\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.problem(), "a value of 4097 bytes, more than the limit of 4096");
  std::string big;
  while (big.size() <= kMaxDocumentBytes) big += "k" + std::to_string(big.size()) + ": 1\n";
  EXPECT_NE(parse_error(big).problem().find("more than the limit of 1048576"), std::string::npos);
}

TEST(InputText, EchoedControlCharactersAreEscapedSoTheMessageIsOneWholeLine) {
  // A NUL echoed from a value cut the printed message before its fix (found by tests/fuzz).
  const ConfigError e("f.yaml", "k", 3, std::string("unknown value \"a\nb\0c\tz\"", 23), "give x");
  EXPECT_STREQ(e.what(), "f.yaml:3: k: unknown value \"a\\nb\\x00c\tz\" (fix: give x)");
  EXPECT_EQ(e.problem(), std::string("unknown value \"a\nb\0c\tz\"", 23));
}

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ibvp-input-text-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  ConfigError error_of(const std::string& path) {
    try {
      load_scenario(path);
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << "accepted " << path;
    return ConfigError("", "", 0, "", "");
  }
  std::filesystem::path dir_;
};

bool holds(const ConfigError& e, const std::string& words) { return e.problem().find(words) != std::string::npos; }

TEST_F(InputFile, DirectoriesDevicesAndFifosAreRefusedUnread) {
  EXPECT_TRUE(holds(error_of(dir_.string()), "directory"));
  EXPECT_TRUE(holds(error_of("/dev/zero"), "not a regular file"));
  const std::string fifo = (dir_ / "fifo.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(holds(error_of(fifo), "not a regular file"));  // and does not block
  EXPECT_TRUE(holds(error_of((dir_ / "missing.yaml").string()), "scenario file"));
}

TEST_F(InputFile, FilesOverTheLimitAreRefusedBySize) {
  const std::string path = (dir_ / "big.yaml").string();
  std::ofstream(path) << "name: " << std::string(kMaxDocumentBytes, 'a') << "\n";
  const ConfigError e = error_of(path);
  EXPECT_EQ(e.file(), path);
  EXPECT_TRUE(holds(e, "1048583 bytes, more than the limit of 1048576"));
}

}  // namespace
}  // namespace ibvp::params
