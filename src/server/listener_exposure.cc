#include "server/listener_exposure.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace samsa {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

bool is_loopback_v4(const in_addr& a) { return (ntohl(a.s_addr) >> 24) == 127; }

}  // namespace

bool is_loopback_host(std::string_view host) {
  if (equals_ignoring_case(host, "localhost")) return true;
  std::string text(host);
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) return is_loopback_v4(v4);
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      in_addr mapped{};
      std::copy(v6.s6_addr + 12, v6.s6_addr + 16, reinterpret_cast<uint8_t*>(&mapped.s_addr));
      return is_loopback_v4(mapped);
    }
  }
  return false;  // all interfaces, another address, or a name we do not resolve
}

std::optional<std::string> exposure_warning(const ListenerConfig& listener) {
  if (listener.security_protocol != "PLAINTEXT" || is_loopback_host(listener.endpoint.host)) return std::nullopt;
  std::string where = listener.endpoint.host.empty() ? "all interfaces" : listener.endpoint.host;
  return "listener " + listener.endpoint.to_string() + " accepts unauthenticated plaintext connections on " + where +
         ", not only loopback: Samsa has no authentication yet, so anyone who can reach this port can read, write "
         "and delete every topic. Bind it to 127.0.0.1, or restrict access with a firewall.";
}

}  // namespace samsa
