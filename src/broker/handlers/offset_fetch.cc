// OffsetFetch (v0-9): committed offsets, -1 where none. v0-1 have no
// top-level error (a group error goes into every partition); v2+ may ask
// for all partitions (null topics); v8+ ask for many groups at once.
#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/offset_fetch.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::OffsetFetchRequest;
using protocol::OffsetFetchResponse;

// One group's answer, in the v8+ shape (the older shape is copied from it).
struct TopicAsk {
  std::string name;
  std::vector<int32_t> partitions;
};

OffsetFetchResponse::OffsetFetchResponseGroup fetch_group(Broker& broker, const std::string& group_id,
                                                         const std::optional<std::vector<TopicAsk>>& topics) {
  OffsetFetchResponse::OffsetFetchResponseGroup out;
  out.group_id = group_id;
  ErrorCode error = broker.groups().check_coordinator(group_id);
  out.error_code = int16_t(error);
  auto& gc = broker.groups().coordinator();
  auto add = [&](const std::string& topic, int32_t partition, const std::optional<group::CommittedOffset>& c) {
    if (out.topics.empty() || out.topics.back().name != topic) {
      OffsetFetchResponse::OffsetFetchResponseTopics t;
      t.name = topic;
      out.topics.push_back(std::move(t));
    }
    OffsetFetchResponse::OffsetFetchResponsePartitions p;
    p.partition_index = partition;
    p.committed_offset = c ? c->offset : -1;
    p.committed_leader_epoch = c ? c->leader_epoch : -1;
    p.metadata = c ? c->metadata : std::string();
    p.error_code = int16_t(error);
    out.topics.back().partitions.push_back(std::move(p));
  };
  if (topics) {
    for (const auto& t : *topics) {
      for (int32_t p : t.partitions) {
        add(t.name, p, error == ErrorCode::kNone ? gc.committed(group_id, t.name, p) : std::nullopt);
      }
    }
  } else if (error == ErrorCode::kNone) {
    for (const auto& [tp, c] : gc.all_committed(group_id)) add(tp.first, tp.second, c);
  }
  return out;
}

}  // namespace

void handle_offset_fetch(Broker& broker, Request& request) {
  OffsetFetchRequest body;
  if (!request.decode(body)) return;
  int16_t version = request.version();
  OffsetFetchResponse response;
  if (version >= 8) {
    for (const auto& g : body.groups) {
      std::optional<std::vector<TopicAsk>> topics;
      if (g.topics) {
        topics.emplace();
        for (const auto& t : *g.topics) topics->push_back({t.name, t.partition_indexes});
      }
      response.groups.push_back(fetch_group(broker, g.group_id, topics));
    }
    request.respond(response);
    return;
  }
  std::optional<std::vector<TopicAsk>> topics;
  if (body.topics) {
    topics.emplace();
    for (const auto& t : *body.topics) topics->push_back({t.name, t.partition_indexes});
  }
  auto group = fetch_group(broker, body.group_id, topics);
  bool partition_errors = version < 2;
  if (!partition_errors) response.error_code = group.error_code;
  for (auto& t : group.topics) {
    OffsetFetchResponse::OffsetFetchResponseTopic out;
    out.name = t.name;
    for (auto& p : t.partitions) {
      OffsetFetchResponse::OffsetFetchResponsePartition part;
      part.partition_index = p.partition_index;
      part.committed_offset = p.committed_offset;
      part.committed_leader_epoch = p.committed_leader_epoch;
      part.metadata = p.metadata;
      part.error_code = partition_errors ? p.error_code : 0;
      out.partitions.push_back(std::move(part));
    }
    response.topics.push_back(std::move(out));
  }
  request.respond(response);
}

}  // namespace samsa
