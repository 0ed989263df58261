#pragma once
// A results table as its writers see it: a row count and typed columns whose cells are
// read through getters. The writers read it row by row (CSV) or column by column
// (Parquet) straight from the recorder's data, so a table of millions of packets is never
// copied. Every cell has a value: a missing number is NaN (an empty CSV cell).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibvp::metrics {

enum class ColumnType { int32, int64, float64, text };

struct Column {
  std::string name;
  ColumnType type;
  std::function<int64_t(size_t)> integer;      // int32, int64
  std::function<double(size_t)> real;          // float64
  std::function<std::string_view(size_t)> text;  // text: valid UTF-8 (see utf8_valid)
};

struct Table {
  size_t rows = 0;
  std::vector<Column> columns;

  explicit Table(size_t n = 0) : rows(n) {}
  Table& int32(std::string name, std::function<int64_t(size_t)> f) {
    columns.push_back({std::move(name), ColumnType::int32, std::move(f), {}, {}});
    return *this;
  }
  Table& int64(std::string name, std::function<int64_t(size_t)> f) {
    columns.push_back({std::move(name), ColumnType::int64, std::move(f), {}, {}});
    return *this;
  }
  Table& real(std::string name, std::function<double(size_t)> f) {
    columns.push_back({std::move(name), ColumnType::float64, {}, std::move(f), {}});
    return *this;
  }
  Table& text(std::string name, std::function<std::string_view(size_t)> f) {
    columns.push_back({std::move(name), ColumnType::text, {}, {}, std::move(f)});
    return *this;
  }
};

// `s` with every invalid UTF-8 sequence replaced by U+FFFD, exactly as the JSON writer
// (nlohmann::json's error_handler_t::replace) does, so a name reads the same from every
// file of a run.
std::string utf8_valid(std::string_view s);

}  // namespace ibvp::metrics
