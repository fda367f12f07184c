#pragma once
// WireClient: one blocking connection to one Kafka listener that speaks the
// wire protocol through protocol/'s generated codecs. It carries the
// requests librdkafka 2.0 cannot make or does not decode in full:
// DescribeQuorum (no librdkafka API), Metadata v9+'s offline replicas and
// topic ids. Used by `samsa cluster describe`, `samsa topic describe` and
// `samsa dev cluster` (readiness).
//
// Bounds: every wait (connect, each send, each receive) ends at the
// deadline given to connect (timeout_ms from then, per call); a response
// frame larger than kMaxResponseBytes is refused before it is allocated;
// decoding never throws and must consume the frame exactly. One request in
// flight; the versions used are the highest both sides know (ApiVersions v0
// at connect, which every Kafka broker answers).
//
// Ownership: the client owns its socket (closed by the destructor); movable,
// not copyable. Single-threaded.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/byte_reader.h"
#include "base/out_buffer.h"
#include "base/result.h"
#include "protocol/codec.h"
#include "protocol/generated/apis.h"

namespace samsa::cli {

// The largest response the tools accept (Metadata of a large cluster fits).
inline constexpr int32_t kMaxResponseBytes = 64 << 20;

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

// "host:port" (an IPv6 host in brackets: "[::1]:9092").
Result<HostPort> parse_host_port(std::string_view text);
// A comma-separated list of host:port, as bootstrap.servers; at least one.
Result<std::vector<HostPort>> parse_host_port_list(std::string_view text);

template <typename Response>
struct Versioned {
  Response body;
  int16_t version = 0;
};

class WireClient {
 public:
  // Connects and learns the peer's API versions.
  static Result<WireClient> connect(const HostPort& address, int timeout_ms);
  // The first address of the list that connects and answers ApiVersions;
  // the error names every address tried.
  static Result<WireClient> connect_any(const std::vector<HostPort>& addresses, int timeout_ms);

  WireClient(WireClient&& other) noexcept;
  WireClient& operator=(WireClient&& other) noexcept;
  WireClient(const WireClient&) = delete;
  WireClient& operator=(const WireClient&) = delete;
  ~WireClient();

  const HostPort& address() const { return address_; }
  // The highest version of `key` within [min, max] the peer also serves.
  std::optional<int16_t> common_version(protocol::ApiKey key, int16_t min, int16_t max) const;
  bool serves(protocol::ApiKey key) const { return peer_versions_.count(int16_t(key)) > 0; }

  // Sends `request` at the highest common version and decodes the answer.
  // Fails with kUnsupported when the peer does not serve the API.
  template <typename Response, typename Request>
  Result<Versioned<Response>> call(const Request& request) {
    std::optional<int16_t> version =
        common_version(Request::kApiKey, Request::kMinVersion, Request::kMaxVersion);
    if (!version) return unsupported(Request::kApiKey);
    OutBuffer body;
    protocol::Encoder w(body);
    request.encode(w, *version);
    ASSIGN_OR_RETURN(Bytes frame, roundtrip(int16_t(Request::kApiKey), *version, body.bytes()));
    ByteReader r(frame);
    if (!skip_response_header(r, int16_t(Request::kApiKey), *version)) return malformed(Request::kApiKey);
    Versioned<Response> out;
    out.version = *version;
    if (!out.body.decode(r, *version) || !r.ok() || !r.at_end()) return malformed(Request::kApiKey);
    return out;
  }

 private:
  WireClient(int fd, HostPort address, int timeout_ms) : fd_(fd), address_(std::move(address)), timeout_ms_(timeout_ms) {}

  Status learn_versions();
  // Sends one request (header + body) and returns the response frame's
  // bytes after the size prefix.
  Result<Bytes> roundtrip(int16_t api_key, int16_t version, const Bytes& body);
  bool skip_response_header(ByteReader& r, int16_t api_key, int16_t version) const;
  Error unsupported(protocol::ApiKey key) const;
  Error malformed(protocol::ApiKey key) const;

  int fd_ = -1;
  HostPort address_;
  int timeout_ms_ = 0;
  int32_t next_correlation_id_ = 1;
  int32_t expected_correlation_id_ = 0;
  std::map<int16_t, std::pair<int16_t, int16_t>> peer_versions_;  // key -> [min, max]
};

}  // namespace samsa::cli
