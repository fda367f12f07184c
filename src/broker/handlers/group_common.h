#pragma once
// Small helpers shared by the group API handlers.

#include <string>

#include "broker/broker.h"
#include "broker/group_manager.h"
#include "broker/request.h"

namespace samsa {

// Kafka reports a member's host as InetAddress.toString(): "/127.0.0.1".
inline std::string client_host_of(const Request& request) {
  const std::string& peer = request.peer();
  size_t colon = peer.rfind(':');
  std::string host = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return "/" + host;
}

}  // namespace samsa
