#include "platform/metrics/parquet_writer.h"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibvp::metrics {

namespace {

// Thrift compact protocol (thrift/doc/specs/thrift-compact-protocol.md): a field is a byte
// holding the delta to the previous field id (high nibble) and the type (low nibble), or
// the type alone followed by the zigzag varint id; integers are zigzag varints; a struct
// ends with a zero byte.
enum CompactType : uint8_t { kI16 = 4, kI32 = 5, kI64 = 6, kBinary = 8, kList = 9, kStruct = 12 };

class CompactWriter {
 public:
  std::string bytes;

  void begin_struct() {
    outer_ids_.push_back(last_id_);
    last_id_ = 0;
  }
  void end_struct() {
    bytes += '\0';  // field stop
    last_id_ = outer_ids_.back();
    outer_ids_.pop_back();
  }
  void i16(int16_t id, int16_t v) {
    field(id, kI16);
    varint(zigzag(v));
  }
  void i32(int16_t id, int32_t v) {
    field(id, kI32);
    varint(zigzag(v));
  }
  void i64(int16_t id, int64_t v) {
    field(id, kI64);
    varint(zigzag(v));
  }
  void binary(int16_t id, const std::string& s) {
    field(id, kBinary);
    binary_value(s);
  }
  void struct_field(int16_t id) {  // then the members, then end_struct()
    field(id, kStruct);
    begin_struct();
  }
  void list(int16_t id, CompactType element, size_t n) {  // then n elements
    field(id, kList);
    if (n < 15) {
      bytes += static_cast<char>((n << 4) | element);
    } else {
      bytes += static_cast<char>(0xF0 | element);
      varint(n);
    }
  }
  void i32_element(int32_t v) { varint(zigzag(v)); }
  void binary_value(const std::string& s) {
    varint(s.size());
    bytes += s;
  }

 private:
  static uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      bytes += static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    bytes += static_cast<char>(v);
  }
  void field(int16_t id, CompactType type) {
    const int delta = id - last_id_;
    if (delta > 0 && delta <= 15) {
      bytes += static_cast<char>((delta << 4) | type);
    } else {
      bytes += static_cast<char>(type);
      varint(zigzag(id));
    }
    last_id_ = id;
  }

  int16_t last_id_ = 0;
  std::vector<int16_t> outer_ids_;
};

// parquet.thrift enums.
constexpr int32_t kTypeInt32 = 1, kTypeInt64 = 2, kTypeDouble = 5, kTypeByteArray = 6;  // Type
constexpr int32_t kRequired = 0;                                                      // FieldRepetitionType
constexpr int32_t kConvertedUtf8 = 0;                                                 // ConvertedType
constexpr int32_t kPlain = 0, kRle = 3;                                               // Encoding
constexpr int32_t kUncompressed = 0;                                                  // CompressionCodec
constexpr int32_t kDataPage = 0;                                                      // PageType

// A page is cut after about this many bytes of values, as parquet-mr and Arrow do (1 MiB),
// so a reader never needs a whole column of a large table in one buffer.
constexpr size_t kPageBytes = 1 << 20;

int32_t physical_type(ColumnType t) {
  switch (t) {
    case ColumnType::int32: return kTypeInt32;
    case ColumnType::int64: return kTypeInt64;
    case ColumnType::float64: return kTypeDouble;
    case ColumnType::text: return kTypeByteArray;
  }
  return kTypeByteArray;
}

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// PLAIN encoding (Encodings.md): INT32 and INT64 little-endian, DOUBLE as IEEE 754 bits
// little-endian, BYTE_ARRAY as a 4-byte little-endian length and the bytes.
void append_plain(const Column& c, size_t row, std::string& out) {
  switch (c.type) {
    case ColumnType::int32: {
      const int64_t v = c.integer(row);
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
        throw std::logic_error("parquet: column " + c.name + ": " + std::to_string(v) + " does not fit INT32");
      put_le(out, static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
      break;
    }
    case ColumnType::int64: put_le(out, static_cast<uint64_t>(c.integer(row)), 8); break;
    case ColumnType::float64: {
      const double v = c.real(row);
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      put_le(out, bits, 8);
      break;
    }
    case ColumnType::text: {
      const std::string_view s = c.text(row);
      put_le(out, s.size(), 4);
      out.append(s.data(), s.size());
      break;
    }
  }
}

// PageHeader with its DataPageHeader (v1): the levels of a REQUIRED top-level column have
// a maximum of 0 and take no bytes, so the page is the values alone.
std::string page_header(size_t values, size_t data_bytes) {
  CompactWriter w;
  w.begin_struct();
  w.i32(1, kDataPage);                                // type
  w.i32(2, static_cast<int32_t>(data_bytes));          // uncompressed_page_size
  w.i32(3, static_cast<int32_t>(data_bytes));          // compressed_page_size
  w.struct_field(5);                                   // data_page_header
  w.i32(1, static_cast<int32_t>(values));              //   num_values
  w.i32(2, kPlain);                                    //   encoding
  w.i32(3, kRle);                                      //   definition_level_encoding
  w.i32(4, kRle);                                      //   repetition_level_encoding
  w.end_struct();
  w.end_struct();
  return w.bytes;
}

struct ChunkInfo {
  int64_t data_page_offset = 0;
  int64_t bytes = 0;  // headers and values
};

}  // namespace

void write_parquet(const Table& t, std::ostream& out, const std::string& created_by) {
  int64_t pos = 0;
  auto emit = [&](const std::string& s) {
    out.write(s.data(), static_cast<std::streamsize>(s.size()));
    pos += static_cast<int64_t>(s.size());
  };
  emit("PAR1");

  // The column chunks, one after the other; each is a run of data pages.
  std::vector<ChunkInfo> chunks;
  std::string values;
  for (const Column& c : t.columns) {
    ChunkInfo info;
    info.data_page_offset = pos;
    size_t row = 0;
    do {  // an empty table still gets one (empty) page per column
      values.clear();
      const size_t first = row;
      while (row < t.rows && values.size() < kPageBytes) append_plain(c, row++, values);
      if (values.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
        throw std::length_error("parquet: column " + c.name + ": a value over 2 GiB");
      const std::string header = page_header(row - first, values.size());
      emit(header);
      emit(values);
      info.bytes += static_cast<int64_t>(header.size() + values.size());
    } while (row < t.rows);
    chunks.push_back(info);
  }

  // FileMetaData (parquet.thrift), field ids as there.
  CompactWriter w;
  w.begin_struct();
  w.i32(1, 1);  // version
  w.list(2, kStruct, t.columns.size() + 1);  // schema: the root group, then the leaves
  w.begin_struct();
  w.binary(4, "schema");                              // name
  w.i32(5, static_cast<int32_t>(t.columns.size()));   // num_children
  w.end_struct();
  for (const Column& c : t.columns) {
    w.begin_struct();
    w.i32(1, physical_type(c.type));  // type
    w.i32(3, kRequired);              // repetition_type
    w.binary(4, c.name);              // name
    if (c.type == ColumnType::text) {
      w.i32(6, kConvertedUtf8);  // converted_type, for readers before LogicalType
      w.struct_field(10);        // logicalType: the union's STRING (1), an empty StringType
      w.struct_field(1);
      w.end_struct();
      w.end_struct();
    }
    w.end_struct();
  }
  w.i64(3, static_cast<int64_t>(t.rows));  // num_rows
  w.list(4, kStruct, 1);                    // row_groups: one
  w.begin_struct();
  w.list(1, kStruct, t.columns.size());  // columns
  int64_t total = 0;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const Column& c = t.columns[i];
    w.begin_struct();           // ColumnChunk
    w.i64(2, 0);                // file_offset: no ColumnMetaData outside the footer
    w.struct_field(3);          // meta_data
    w.i32(1, physical_type(c.type));  // type
    w.list(2, CompactType(kI32), 1);  // encodings
    w.i32_element(kPlain);
    w.list(3, kBinary, 1);  // path_in_schema
    w.binary_value(c.name);
    w.i32(4, kUncompressed);                    // codec
    w.i64(5, static_cast<int64_t>(t.rows));     // num_values
    w.i64(6, chunks[i].bytes);                  // total_uncompressed_size
    w.i64(7, chunks[i].bytes);                  // total_compressed_size
    w.i64(9, chunks[i].data_page_offset);       // data_page_offset
    w.end_struct();
    w.end_struct();
    total += chunks[i].bytes;
  }
  w.i64(2, total);                                              // total_byte_size
  w.i64(3, static_cast<int64_t>(t.rows));                       // num_rows
  w.i64(5, chunks.empty() ? 4 : chunks.front().data_page_offset);  // file_offset
  w.i64(6, total);                                              // total_compressed_size
  w.i16(7, 0);                                                  // ordinal
  w.end_struct();
  w.binary(6, created_by);  // created_by
  w.end_struct();

  emit(w.bytes);
  std::string tail;
  put_le(tail, w.bytes.size(), 4);  // footer length, then the magic again
  emit(tail + "PAR1");
}

}  // namespace ibvp::metrics
