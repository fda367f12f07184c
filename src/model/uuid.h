#pragma once
// Uuid: Kafka's 128-bit ids (topic ids, cluster id, directory ids). The
// all-zero value means "none". Text form is Kafka's: URL-safe base64 without
// padding (22 characters), as in meta.properties and kafka-topics output.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace samsa {

class Rng;

struct Uuid {
  std::array<uint8_t, 16> bytes{};

  bool is_zero() const;
  bool operator==(const Uuid&) const = default;
  auto operator<=>(const Uuid&) const = default;

  std::string to_string() const;
  static std::optional<Uuid> parse(std::string_view text);
  // A random (version 4) uuid from rng; never zero.
  static Uuid random(Rng& rng);
};

}  // namespace samsa
