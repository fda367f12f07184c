#pragma once
// Clock: time is injected so that pure cores and simulations are
// deterministic. SystemClock is the real one: the real runtime owns one
// (io/posix_runtime.h) and tools build their own; there is no process-wide
// instance.

#include <cstdint>

namespace samsa {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock milliseconds since the Unix epoch (record timestamps).
  virtual int64_t wall_ms() const = 0;
  // Monotonic milliseconds (timeouts, intervals); never goes backwards.
  virtual int64_t monotonic_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t wall_ms() const override;
  int64_t monotonic_ms() const override;
};

// A clock a test or simulation moves by hand.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 0) : now_ms_(start_ms) {}
  int64_t wall_ms() const override { return now_ms_; }
  int64_t monotonic_ms() const override { return now_ms_; }
  void advance_ms(int64_t ms) { now_ms_ += ms; }
  void set_ms(int64_t ms) { now_ms_ = ms; }

 private:
  int64_t now_ms_;
};

}  // namespace samsa
