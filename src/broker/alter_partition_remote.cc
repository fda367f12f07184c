#include "broker/alter_partition_remote.h"

#include "base/log.h"
#include "protocol/error_code.h"

namespace samsa {
namespace {

class RemoteAlterPartition : public std::enable_shared_from_this<RemoteAlterPartition> {
 public:
  RemoteAlterPartition(Runtime& runtime, RemoteAlterPartitionOptions options, std::function<NodeId()> leader_hint)
      : runtime_(runtime), request_timeout_ms_(options.request_timeout_ms),
        channel_(runtime, "broker-" + std::to_string(options.self.value()) + "-alter-partition",
                 std::move(options.controllers), options.connect_timeout_ms, std::move(leader_hint)) {}

  void send(const protocol::AlterPartitionRequest& request, int16_t version, AlterPartitionReply reply) {
    const ControllerAddress target = channel_.target();
    // One answer per request: the first of the response, the failure, the
    // timeout.
    auto pending = std::make_shared<AlterPartitionReply>(std::move(reply));
    std::weak_ptr<RemoteAlterPartition> self = weak_from_this();
    TimerId timer = runtime_.add_timer(request_timeout_ms_, [self, pending, id = target.id] {
      auto me = self.lock();
      if (!me || !*pending) return;
      LOG_DEBUG("replicas", "AlterPartition to the controller (node {}) unanswered: trying another", id.value());
      AlterPartitionReply done = std::move(*pending);
      *pending = nullptr;
      me->channel_.failed(id);
      done(Error(ErrorKind::kTimedOut, "AlterPartition unanswered"));
    });
    channel_.client_for(target).call<protocol::AlterPartitionRequest, protocol::AlterPartitionResponse>(
        request, version, [self, pending, timer, id = target.id](Result<protocol::AlterPartitionResponse> answer) {
          auto me = self.lock();
          if (!me || !*pending) return;
          me->runtime_.cancel_timer(timer);
          if (!answer.ok() || protocol::ErrorCode(answer->error_code) == protocol::ErrorCode::kNotController) {
            me->channel_.failed(id);
          } else {
            me->channel_.succeeded();
          }
          AlterPartitionReply done = std::move(*pending);
          *pending = nullptr;
          done(std::move(answer));
        });
  }

 private:
  Runtime& runtime_;
  int64_t request_timeout_ms_;
  ControllerChannel channel_;
};

}  // namespace

AlterPartitionSender remote_alter_partition_sender(Runtime& runtime, RemoteAlterPartitionOptions options,
                                                   std::function<NodeId()> leader_hint) {
  auto channel = std::make_shared<RemoteAlterPartition>(runtime, std::move(options), std::move(leader_hint));
  return [channel](const protocol::AlterPartitionRequest& request, int16_t version, AlterPartitionReply reply) {
    channel->send(request, version, std::move(reply));
  };
}

}  // namespace samsa
