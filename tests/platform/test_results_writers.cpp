// The results writers: CSV per RFC 4180, numbers that read back exactly, names made valid
// UTF-8 as the JSON writer makes them, and the Parquet file's framing (magic, v1 data page
// header, footer length). tests/python/test_api_result_names.py reads the files of a whole run
// back with pyarrow, the csv module and pandas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/metrics/csv.h"
#include "platform/metrics/parquet_writer.h"
#include "platform/metrics/table.h"

namespace ibvp::metrics {
namespace {

TEST(Csv, FieldsWithCommaQuoteCrOrLfAreQuotedAndTheirQuotesDoubled) {
  EXPECT_EQ(csv_field("plain name"), "plain name");
  EXPECT_EQ(csv_field("tab\tand é 中文"), "tab\tand é 中文");  // RFC 4180 quotes only , " CR LF
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(csv_field("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(Csv, NumbersReadBackAsTheSameDoubleAndNanIsAnEmptyField) {
  for (double v : {0.0, 0.1, 1.0 / 3.0, 2e-05, 123456789.123456789, 1e300, -4.9e-324, 6.02214076e23}) {
    const std::string s = csv_number(v);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
  EXPECT_EQ(csv_number(0.1), "0.1");  // shortest, not 0.10000000000000001
  EXPECT_EQ(csv_number(std::numeric_limits<double>::quiet_NaN()), "");
  EXPECT_EQ(csv_number(std::numeric_limits<double>::infinity()), "");
}

TEST(Csv, ATableWritesAHeaderAndOneRecordPerRowWithColumnsInPlace) {
  const std::vector<std::string> names = {"a,\"b\"", "c\r\nd"};
  Table t(2);
  t.text("name", [&](size_t r) -> std::string_view { return names[r]; })
      .int64("n", [](size_t r) { return static_cast<int64_t>(r) - 1; })
      .real("x", [](size_t r) { return r ? 0.5 : std::nan(""); });
  std::ostringstream out;
  write_csv(t, out);
  EXPECT_EQ(out.str(), "name,n,x\n\"a,\"\"b\"\"\",-1,\n\"c\r\nd\",0,0.5\n");
}

TEST(Utf8, InvalidSequencesBecomeTheReplacementCharacterAsInTheJsonFiles) {
  EXPECT_EQ(utf8_valid("é 中文 ok"), "é 中文 ok");
  EXPECT_EQ(utf8_valid("tab\there"), "tab\there");  // control characters are valid UTF-8
  const std::string bad = std::string("f2") + '\xff' + "x";
  EXPECT_EQ(utf8_valid(bad), "f2\xEF\xBF\xBDx");
  const std::string json = nlohmann::json(bad).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  EXPECT_EQ(nlohmann::json::parse(json).get<std::string>(), utf8_valid(bad));
}

std::string tiny_parquet() {
  Table t(2);
  t.int64("id", [](size_t r) { return r ? int64_t{0x0102030405060708} : int64_t{-1}; })
      .int32("port", [](size_t r) { return static_cast<int64_t>(r + 7); })
      .real("x", [](size_t r) { return r ? 0.5 : 2.0; })
      .text("name", [](size_t r) -> std::string_view { return r ? "b\"," : "é"; });
  std::ostringstream out;
  write_parquet(t, out, "ibvp test");
  return out.str();
}

uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

TEST(Parquet, AFileIsMagicColumnPagesFooterFooterLengthMagic) {
  const std::string f = tiny_parquet();
  ASSERT_GT(f.size(), 12u);
  EXPECT_EQ(f.substr(0, 4), "PAR1");
  EXPECT_EQ(f.substr(f.size() - 4), "PAR1");
  // The 4-byte little-endian footer length, before the closing magic.
  const uint32_t footer = le32(f, f.size() - 8);
  ASSERT_LT(footer, f.size() - 12);
  const size_t footer_at = f.size() - 8 - footer;
  // FileMetaData opens with field 1 (version, i32): compact header 0x15, zigzag(1) = 2.
  EXPECT_EQ(static_cast<unsigned char>(f[footer_at]), 0x15);
  EXPECT_EQ(static_cast<unsigned char>(f[footer_at + 1]), 0x02);
  // The footer names the writer and every column.
  const std::string meta = f.substr(footer_at, footer);
  for (const char* s : {"ibvp test", "id", "port", "x", "name", "schema"}) EXPECT_NE(meta.find(s), std::string::npos) << s;
  // The first page header follows the magic: PageHeader.type (field 1, i32) = DATA_PAGE (0),
  // then both sizes: 16 bytes of two PLAIN INT64 values, zigzag(16) = 32.
  EXPECT_EQ(static_cast<unsigned char>(f[4]), 0x15);
  EXPECT_EQ(static_cast<unsigned char>(f[5]), 0x00);
  EXPECT_EQ(static_cast<unsigned char>(f[6]), 0x15);
  EXPECT_EQ(static_cast<unsigned char>(f[7]), 32);
  // PLAIN values are little-endian: -1, then 0x0102030405060708 as 08 07 ... 01.
  EXPECT_NE(f.find(std::string(8, '\xff') + "\x08\x07\x06\x05\x04\x03\x02\x01"), std::string::npos);
  // INT32 takes 4 bytes, a string its 4-byte length and its bytes.
  EXPECT_NE(f.find(std::string("\x07\0\0\0\x08\0\0\0", 8)), std::string::npos);
  EXPECT_NE(f.find(std::string("\x02\0\0\0é\x03\0\0\0b\",", 13)), std::string::npos);
}

TEST(Parquet, TheSameTableGivesTheSameBytes) { EXPECT_EQ(tiny_parquet(), tiny_parquet()); }

TEST(Parquet, AnEmptyTableIsStillAFileWithOnePagePerColumn) {
  Table t(0);
  t.int64("id", [](size_t) { return int64_t{0}; });
  std::ostringstream out;
  write_parquet(t, out, "ibvp test");
  const std::string f = out.str();
  EXPECT_EQ(f.substr(0, 4), "PAR1");
  EXPECT_EQ(f.substr(f.size() - 4), "PAR1");
  // An empty page: type 0, sizes 0, then the DataPageHeader with num_values 0.
  EXPECT_EQ(f.substr(4, 6), std::string("\x15\x00\x15\x00\x15\x00", 6));
}

}  // namespace
}  // namespace ibvp::metrics
