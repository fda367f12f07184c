#pragma once
// StrongInt<Tag, Rep>: an integer with a meaning (an offset, an epoch, a node
// id). Two StrongInts with different tags never convert into each other or
// into a plain integer silently; .value() is the explicit way out.
//
// Arithmetic allowed: id + delta -> id, id - delta -> id, id - id -> delta,
// ++id. Anything else goes through .value() and says why it is sound.

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>

namespace samsa {

template <typename Tag, typename Rep>
class StrongInt {
 public:
  using rep = Rep;
  constexpr StrongInt() = default;
  constexpr explicit StrongInt(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }

  constexpr auto operator<=>(const StrongInt&) const = default;

  constexpr StrongInt operator+(Rep delta) const { return StrongInt(v_ + delta); }
  constexpr StrongInt operator-(Rep delta) const { return StrongInt(v_ - delta); }
  constexpr Rep operator-(StrongInt other) const { return v_ - other.v_; }
  constexpr StrongInt& operator+=(Rep delta) {
    v_ += delta;
    return *this;
  }
  constexpr StrongInt& operator++() {
    ++v_;
    return *this;
  }
  constexpr StrongInt operator++(int) {
    StrongInt old = *this;
    ++v_;
    return old;
  }

 private:
  Rep v_{};
};

template <typename Tag, typename Rep>
std::ostream& operator<<(std::ostream& os, StrongInt<Tag, Rep> v) {
  return os << v.value();
}

}  // namespace samsa

template <typename Tag, typename Rep>
struct std::hash<samsa::StrongInt<Tag, Rep>> {
  size_t operator()(samsa::StrongInt<Tag, Rep> v) const noexcept { return std::hash<Rep>{}(v.value()); }
};
