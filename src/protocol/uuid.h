#pragma once
// Uuid: Kafka's UUID wire type (topic ids, directory ids): 16 raw bytes.
// All-zero is Kafka's "null/unset" id (Uuid.ZERO_UUID).

#include <array>
#include <cstdint>
#include <string>

namespace samsa::protocol {

struct Uuid {
  std::array<uint8_t, 16> bytes{};

  bool is_zero() const {
    for (uint8_t b : bytes) {
      if (b != 0) return false;
    }
    return true;
  }
  bool operator==(const Uuid& o) const = default;

  // Kafka's text form: URL-safe base64 without padding (22 characters).
  std::string to_string() const;
};

}  // namespace samsa::protocol
