#pragma once
// Whether a listener deserves a warning at startup: Samsa has no
// authentication yet, so a plaintext listener reachable from other machines
// lets anyone who can connect read, write and delete every topic. Loopback
// listeners (the default) are reachable from this machine only.
//
// Pure: decides from the configured host, without resolving names (any name
// but "localhost" counts as reachable from elsewhere).

#include <optional>
#include <string>
#include <string_view>

#include "config/broker_config.h"

namespace samsa {

// 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) and "localhost". The empty
// host, 0.0.0.0 and :: mean all interfaces: not loopback.
bool is_loopback_host(std::string_view host);

// The WARN line for a plaintext listener on a non-loopback address, else
// nullopt.
std::optional<std::string> exposure_warning(const ListenerConfig& listener);

}  // namespace samsa
