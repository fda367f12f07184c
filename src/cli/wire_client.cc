#include "cli/wire_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "protocol/error_code.h"
#include "protocol/generated/api_versions.h"
#include "protocol/request_header.h"
#include "protocol/response_header.h"

namespace samsa::cli {
namespace {

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// Waits until fd is ready for `events` or the deadline passes.
Status wait_ready(int fd, short events, int64_t deadline_ms, const std::string& what) {
  for (;;) {
    int64_t left = deadline_ms - now_ms();
    if (left <= 0) return Error(ErrorKind::kTimedOut, what + ": timed out");
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, int(left));
    if (n > 0) return ok_status();
    if (n < 0 && errno != EINTR) return errno_error(what, errno);
  }
}

Result<int> connect_socket(const HostPort& address, int64_t deadline_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(address.port);
  int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) return Error(ErrorKind::kIo, "cannot resolve " + address.host + ": " + ::gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
      Status ready = wait_ready(fd, POLLOUT, deadline_ms, "connect to " + address.to_string());
      int err = 0;
      socklen_t len = sizeof err;
      if (ready.ok() && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        ::freeaddrinfo(found);
        return fd;
      }
      last_error = ready.ok() ? std::strerror(err) : ready.error().message();
    } else {
      last_error = std::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return Error(ErrorKind::kIo, "cannot connect to " + address.to_string() + ": " + last_error);
}

Status send_all(int fd, const uint8_t* data, size_t size, int64_t deadline_ms, const std::string& peer) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= size_t(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return errno_error("send to " + peer, errno);
    RETURN_IF_ERROR(wait_ready(fd, POLLOUT, deadline_ms, "send to " + peer));
  }
  return ok_status();
}

Status recv_all(int fd, uint8_t* data, size_t size, int64_t deadline_ms, const std::string& peer) {
  while (size > 0) {
    ssize_t n = ::recv(fd, data, size, 0);
    if (n > 0) {
      data += n;
      size -= size_t(n);
      continue;
    }
    if (n == 0) return Error(ErrorKind::kClosed, peer + " closed the connection");
    if (errno != EAGAIN && errno != EINTR) return errno_error("receive from " + peer, errno);
    RETURN_IF_ERROR(wait_ready(fd, POLLIN, deadline_ms, "receive from " + peer));
  }
  return ok_status();
}

}  // namespace

Result<HostPort> parse_host_port(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Error(ErrorKind::kInvalidArgument, "expected HOST:PORT, got '" + std::string(text) + "'");
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  uint32_t port = 0;
  for (char c : text.substr(colon + 1)) {
    if (c < '0' || c > '9' || (port = port * 10 + uint32_t(c - '0')) > 65535) {
      return Error(ErrorKind::kInvalidArgument, "bad port in '" + std::string(text) + "'");
    }
  }
  if (port == 0) return Error(ErrorKind::kInvalidArgument, "bad port in '" + std::string(text) + "'");
  return HostPort{std::string(host), uint16_t(port)};
}

Result<std::vector<HostPort>> parse_host_port_list(std::string_view text) {
  std::vector<HostPort> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      ASSIGN_OR_RETURN(HostPort hp, parse_host_port(item));
      out.push_back(std::move(hp));
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (out.empty()) return Error(ErrorKind::kInvalidArgument, "no HOST:PORT given");
  return out;
}

Result<WireClient> WireClient::connect(const HostPort& address, int timeout_ms) {
  ASSIGN_OR_RETURN(int fd, connect_socket(address, now_ms() + timeout_ms));
  WireClient client(fd, address, timeout_ms);
  RETURN_IF_ERROR(client.learn_versions());
  return client;
}

Result<WireClient> WireClient::connect_any(const std::vector<HostPort>& addresses, int timeout_ms) {
  std::string errors;
  for (const HostPort& address : addresses) {
    auto client = connect(address, timeout_ms);
    if (client.ok()) return client;
    errors += (errors.empty() ? "" : "; ") + client.error().message();
  }
  return Error(ErrorKind::kIo, errors.empty() ? "no address to connect to" : errors);
}

WireClient::WireClient(WireClient&& other) noexcept { *this = std::move(other); }

WireClient& WireClient::operator=(WireClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    address_ = std::move(other.address_);
    timeout_ms_ = other.timeout_ms_;
    next_correlation_id_ = other.next_correlation_id_;
    expected_correlation_id_ = other.expected_correlation_id_;
    peer_versions_ = std::move(other.peer_versions_);
  }
  return *this;
}

WireClient::~WireClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<int16_t> WireClient::common_version(protocol::ApiKey key, int16_t min, int16_t max) const {
  auto it = peer_versions_.find(int16_t(key));
  if (it == peer_versions_.end()) return std::nullopt;
  int16_t high = std::min(max, it->second.second);
  if (high < std::max(min, it->second.first)) return std::nullopt;
  return high;
}

Status WireClient::learn_versions() {
  // v0: every broker answers it (KIP-511 keeps it), so no fallback is needed.
  protocol::ApiVersionsRequest request;
  OutBuffer body;
  protocol::Encoder w(body);
  request.encode(w, 0);
  ASSIGN_OR_RETURN(Bytes frame, roundtrip(int16_t(protocol::ApiKey::kApiVersions), 0, body.bytes()));
  ByteReader r(frame);
  protocol::ApiVersionsResponse response;
  if (!skip_response_header(r, int16_t(protocol::ApiKey::kApiVersions), 0) || !response.decode(r, 0) || !r.ok()) {
    return malformed(protocol::ApiKey::kApiVersions);
  }
  if (response.error_code != 0) {
    return Error(ErrorKind::kIo, address_.to_string() + " answered ApiVersions with " +
                                     protocol::error_name(response.error_code));
  }
  for (const auto& v : response.api_keys) peer_versions_[v.api_key] = {v.min_version, v.max_version};
  return ok_status();
}

Result<Bytes> WireClient::roundtrip(int16_t api_key, int16_t version, const Bytes& body) {
  int64_t deadline_ms = now_ms() + timeout_ms_;
  std::string peer = address_.to_string();
  protocol::RequestHeader header;
  header.api_key = api_key;
  header.api_version = version;
  header.correlation_id = expected_correlation_id_ = next_correlation_id_++;
  header.client_id = "samsa-cli";
  OutBuffer out;
  out.bytes().resize(4);  // the size, patched below
  header.encode(out);
  out.bytes().insert(out.bytes().end(), body.begin(), body.end());
  store_be32(out.bytes().data(), uint32_t(out.bytes().size() - 4));
  RETURN_IF_ERROR(send_all(fd_, out.bytes().data(), out.bytes().size(), deadline_ms, peer));

  uint8_t size_bytes[4];
  RETURN_IF_ERROR(recv_all(fd_, size_bytes, 4, deadline_ms, peer));
  int32_t size = int32_t(load_be32(size_bytes));
  if (size < 4 || size > kMaxResponseBytes) {
    return Error(ErrorKind::kCorrupt, peer + " sent a response of " + std::to_string(size) + " bytes (at most " +
                                          std::to_string(kMaxResponseBytes) + " accepted)");
  }
  Bytes frame(size_t(size), 0);
  RETURN_IF_ERROR(recv_all(fd_, frame.data(), frame.size(), deadline_ms, peer));
  return frame;
}

bool WireClient::skip_response_header(ByteReader& r, int16_t api_key, int16_t version) const {
  if (r.read_i32() != expected_correlation_id_ || !r.ok()) return false;
  return protocol::response_header_version(api_key, version) == 0 || protocol::skip_tagged_fields(r);
}

Error WireClient::unsupported(protocol::ApiKey key) const {
  return Error(ErrorKind::kUnsupported,
               address_.to_string() + " does not serve " + protocol::api_name(int16_t(key)));
}

Error WireClient::malformed(protocol::ApiKey key) const {
  return Error(ErrorKind::kCorrupt,
               "malformed " + std::string(protocol::api_name(int16_t(key))) + " response from " + address_.to_string());
}

}  // namespace samsa::cli
