#pragma once
// A FIFO that keeps its elements in one std::vector, for per-VL queues of which most stay
// empty. std::deque allocates a 512-byte node and its map as soon as it is constructed: a
// switch port's 16 per-VL request queues cost 10 KB empty, half of a 4,096-host fat tree's
// memory (issue 17). An empty VectorQueue owns nothing; a used one keeps its capacity, so
// the hot path stops allocating once a queue has seen its deepest backlog.
//
// Elements live in [head_, items_.size()). pop_front() moves head_ on and the vector is
// compacted when the queue empties or the dead prefix outgrows the live part, so each
// element is moved O(1) times on average. Iterators are the vector's: push_back, insert,
// erase and pop_front invalidate them, as std::deque's insert and erase do.
#include <cstddef>
#include <iterator>
#include <vector>

namespace ibvp::sim {

template <class T>
class VectorQueue {
 public:
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;

  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }

  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  T& operator[](size_t i) { return items_[head_ + i]; }
  const T& operator[](size_t i) const { return items_[head_ + i]; }

  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return items_.end(); }

  void push_back(const T& x) { items_.push_back(x); }
  iterator insert(const_iterator at, const T& x) { return items_.insert(at, x); }

  void pop_front() {
    ++head_;
    compact();
  }
  iterator erase(const_iterator at) {
    if (at == begin()) {
      pop_front();
      return begin();
    }
    return items_.erase(at);
  }

 private:
  void compact() {
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 32 && head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  std::vector<T> items_;
  size_t head_ = 0;
};

}  // namespace ibvp::sim
