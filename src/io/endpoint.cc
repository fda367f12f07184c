#include "io/endpoint.h"

#include <algorithm>
#include <cctype>

namespace samsa {
namespace {

Error bad(std::string_view text, std::string_view why) {
  return Error(ErrorKind::kInvalidArgument, "invalid endpoint '" + std::string(text) + "': " + std::string(why));
}

}  // namespace

std::string Endpoint::to_string() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return name + "://" + h + ":" + std::to_string(port);
}

Status parse_host_port(std::string_view text, std::string* host, uint16_t* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad(text, "missing ':port'");
  std::string_view h = text.substr(0, colon);
  std::string_view p = text.substr(colon + 1);
  if (!h.empty() && h.front() == '[') {
    if (h.size() < 2 || h.back() != ']') return bad(text, "unterminated '[' in host");
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return bad(text, "IPv6 host must be in brackets");
  }
  if (p.empty() || p.size() > 5 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad(text, "port is not a number");
  }
  unsigned long value = std::stoul(std::string(p));
  if (value > 65535) return bad(text, "port out of range 0..65535");
  *host = std::string(h);
  *port = uint16_t(value);
  return ok_status();
}

Result<Endpoint> parse_endpoint(std::string_view text) {
  size_t sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) return bad(text, "expected NAME://host:port");
  Endpoint ep;
  ep.name = std::string(text.substr(0, sep));
  for (char& c : ep.name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return bad(text, "bad listener name");
    c = char(std::toupper(static_cast<unsigned char>(c)));
  }
  RETURN_IF_ERROR(parse_host_port(text.substr(sep + 3), &ep.host, &ep.port));
  return ep;
}

}  // namespace samsa
