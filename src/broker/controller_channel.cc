#include "broker/controller_channel.h"

#include "base/assert.h"

namespace samsa {

ControllerChannel::ControllerChannel(Runtime& runtime, std::string client_id, std::vector<ControllerAddress> controllers,
                                     int64_t connect_timeout_ms, std::function<NodeId()> leader_hint)
    : runtime_(runtime), client_id_(std::move(client_id)), controllers_(std::move(controllers)),
      connect_timeout_ms_(connect_timeout_ms), leader_hint_(std::move(leader_hint)) {
  ASSERT_MSG(!controllers_.empty(), "a broker of a quorum knows its controllers");
}

ControllerChannel::~ControllerChannel() = default;

const ControllerAddress& ControllerChannel::target() {
  NodeId hint = leader_hint_();
  if (hint != kNoNode && hint != avoid_) {
    for (const ControllerAddress& c : controllers_) {
      if (c.id == hint) return c;
    }
  }
  return controllers_[next_voter_ % controllers_.size()];
}

KafkaClient& ControllerChannel::client_for(const ControllerAddress& target) {
  if (!client_ || client_target_ != target.id) {
    client_ = std::make_unique<KafkaClient>(runtime_, client_id_);
    client_target_ = target.id;
    client_->connect(target.host, target.port, connect_timeout_ms_, [](Status) {});
  }
  return *client_;
}

void ControllerChannel::failed(NodeId target) {
  avoid_ = target;
  for (size_t i = 0; i < controllers_.size(); ++i) {
    if (controllers_[i].id == target) next_voter_ = i + 1;
  }
  if (client_ && client_target_ == target) {
    // Dropped from a posted task: this may run inside the client's callback.
    runtime_.post([dropped = std::shared_ptr<KafkaClient>(std::move(client_))] {});
    client_target_ = kNoNode;
  }
}

void ControllerChannel::close() {
  if (client_) client_->close();
}

}  // namespace samsa
