// OffsetDelete (KIP-496): removes committed offsets of partitions the group
// does not consume (all of them for an Empty group), writing tombstones.
#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/offset_delete.h"

namespace samsa {

void handle_offset_delete(Broker& broker, Request& request) {
  protocol::OffsetDeleteRequest body;
  if (!request.decode(body)) return;
  protocol::OffsetDeleteResponse response;
  protocol::ErrorCode error = broker.groups().check_coordinator(body.group_id);
  std::vector<group::TopicPartitionKey> tps;
  for (const auto& t : body.topics) {
    for (const auto& p : t.partitions) tps.push_back({t.name, p.partition_index});
  }
  std::vector<protocol::ErrorCode> errors(tps.size(), protocol::ErrorCode::kNone);
  if (error == protocol::ErrorCode::kNone) error = broker.groups().coordinator().delete_offsets(body.group_id, tps, errors);
  response.error_code = int16_t(error);
  if (error == protocol::ErrorCode::kNone) {
    size_t i = 0;
    for (const auto& t : body.topics) {
      protocol::OffsetDeleteResponse::OffsetDeleteResponseTopic out;
      out.name = t.name;
      for (const auto& p : t.partitions) {
        protocol::OffsetDeleteResponse::OffsetDeleteResponsePartition part;
        part.partition_index = p.partition_index;
        bool known = broker.image().topic(t.name) != nullptr;
        part.error_code = int16_t(known ? errors[i] : protocol::ErrorCode::kUnknownTopicOrPartition);
        ++i;
        out.partitions.push_back(part);
      }
      response.topics.push_back(std::move(out));
    }
  }
  request.respond(response);
}

}  // namespace samsa
