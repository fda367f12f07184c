#pragma once
// Words: one scenario-script line split into words, read without exceptions.
// Like ByteReader, a read past the end or a malformed number sets a sticky
// failure and returns an empty/zero value; the caller checks ok() once.

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace samsa::sim {

class Words {
 public:
  explicit Words(std::vector<std::string> words) : words_(std::move(words)) {}

  size_t size() const { return words_.size(); }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }

  const std::string& str(size_t i) {
    static const std::string kEmpty;
    if (i >= words_.size()) {
      ok_ = false;
      return kEmpty;
    }
    return words_[i];
  }
  int64_t num(size_t i) {
    const std::string& s = str(i);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) ok_ = false;
    return v;
  }
  double real(size_t i) {
    const std::string& s = str(i);
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) ok_ = false;
    return v;
  }

 private:
  std::vector<std::string> words_;
  bool ok_ = true;
};

}  // namespace samsa::sim
