#include "broker/alter_partition_local.h"

#include <memory>

#include "broker/broker.h"
#include "broker/cluster_membership.h"
#include "controller/alter_partition.h"

namespace samsa {

void serve_alter_partition(Broker& broker, const protocol::AlterPartitionRequest& request, int16_t version,
                           AlterPartitionReply reply) {
  auto plan = std::make_shared<AlterPartitionPlan>();
  broker.submit_change(
      "an AlterPartition from broker " + std::to_string(request.broker_id),
      [plan, request, version, policy = election_policy(broker.config())](const MetadataImage& view) {
        *plan = plan_alter_partition(view, request, version, policy);
        return Plan(plan->records);
      },
      kLocalAlterPartitionTimeoutMs,
      [plan, reply = std::move(reply)](std::optional<ControllerError> failed) {
        if (failed) {
          // Nothing (or not everything) committed: the whole request fails
          // with the controller's error, as Kafka's controller answers.
          protocol::AlterPartitionResponse response;
          response.error_code = int16_t(failed->code);
          reply(std::move(response));
          return;
        }
        reply(plan->response);
      });
}

AlterPartitionSender local_alter_partition_sender(Broker& broker) {
  return [&broker](const protocol::AlterPartitionRequest& request, int16_t version, AlterPartitionReply reply) {
    serve_alter_partition(broker, request, version, std::move(reply));
  };
}

}  // namespace samsa
