#pragma once
// Plain bytes for a run split across processes (docs/parallel.md): each process's counts go
// to rank 0 as one buffer, written and read field by field in the same order. Every process
// is the same build on the same kind of machine, so values go as their memory bytes.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ibvp::metrics {

template <class T>
void put(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
void put_vector(std::string& out, const std::vector<T>& v) {
  put(out, static_cast<uint64_t>(v.size()));
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Reads what put() wrote; a short buffer is a broken run, not bad input.
class ByteReader {
 public:
  explicit ByteReader(const std::string& s) : p_(s.data()), end_(s.data() + s.size()) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    take(&v, sizeof v);
    return v;
  }
  template <class T>
  std::vector<T> get_vector() {
    std::vector<T> v(get<uint64_t>());
    if (!v.empty()) take(v.data(), v.size() * sizeof(T));
    return v;
  }
  bool done() const { return p_ == end_; }

 private:
  void take(void* to, size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) throw std::logic_error("split run: a rank's results end early");
    std::memcpy(to, p_, n);
    p_ += n;
  }
  const char* p_;
  const char* end_;
};

}  // namespace ibvp::metrics
