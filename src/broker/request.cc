#include "broker/request.h"

#include "protocol/generated/apis.h"

namespace samsa {

void Request::close(const std::string& reason) {
  LOG_WARN("broker", "closing connection from {} (client {}): {} in {} v{}", peer(), client_id(), reason,
           protocol::api_name(header_.api_key), header_.api_version);
  reply_(Reply{ReplyKind::kClose, {}});
}

}  // namespace samsa
