#pragma once
// Endpoint: a listener as Kafka writes it, "NAME://host:port".
//
//   PLAINTEXT://127.0.0.1:9092   name PLAINTEXT, host 127.0.0.1, port 9092
//   PLAINTEXT://:9092            empty host = all interfaces (Kafka's meaning)
//   PLAINTEXT://[::1]:9092       IPv6 literal in brackets
//   INTERNAL://0.0.0.0:0         port 0 = ephemeral (tests)
//
// The name is upper-cased (Kafka treats listener names case-insensitively and
// maps them through listener.security.protocol.map).

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace samsa {

struct Endpoint {
  std::string name;
  std::string host;
  uint16_t port = 0;

  // "NAME://host:port" (IPv6 hosts in brackets).
  std::string to_string() const;
};

Result<Endpoint> parse_endpoint(std::string_view text);

// "host:port" or "[v6]:port"; port required.
Status parse_host_port(std::string_view text, std::string* host, uint16_t* port);

}  // namespace samsa
