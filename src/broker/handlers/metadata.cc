#include "base/log.h"
#include "broker/authorized_operations.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "controller/topic_planner.h"
#include "controller/topic_rules.h"
#include "protocol/error_code.h"
#include "protocol/generated/metadata.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::MetadataRequest;
using protocol::MetadataResponse;

std::vector<int32_t> node_ids(const std::vector<NodeId>& ids) {
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (NodeId id : ids) out.push_back(id.value());
  return out;
}

// Kafka's KRaftMetadataCache.getOfflineReplicas: replicas on a broker that
// is not registered or is fenced.
std::vector<int32_t> offline_replicas(const MetadataImage& image, const std::vector<NodeId>& replicas) {
  std::vector<int32_t> out;
  for (NodeId id : replicas) {
    const BrokerState* b = image.broker(id);
    if (!b || b->fenced) out.push_back(id.value());
  }
  return out;
}

MetadataResponse::MetadataResponseTopic describe_topic(const MetadataImage& image, const TopicState& topic) {
  MetadataResponse::MetadataResponseTopic out;
  out.name = topic.name;
  out.topic_id = topic.id;
  out.is_internal = is_internal_topic(topic.name);
  for (const PartitionState& p : topic.partitions) {
    MetadataResponse::MetadataResponsePartition part;
    part.partition_index = p.partition.value();
    part.leader_id = p.leader.value();
    part.leader_epoch = p.leader_epoch.value();
    part.replica_nodes = node_ids(p.replicas);
    part.isr_nodes = node_ids(p.isr);
    part.offline_replicas = offline_replicas(image, p.replicas);
    if (p.leader == kNoNode) part.error_code = int16_t(ErrorCode::kLeaderNotAvailable);
    out.partitions.push_back(std::move(part));
  }
  return out;
}

MetadataResponse::MetadataResponseTopic topic_error(const std::optional<std::string>& name, ErrorCode code) {
  MetadataResponse::MetadataResponseTopic out;
  out.name = name;
  out.error_code = int16_t(code);
  return out;
}

// A topic the client asked for by name: described, auto-created, or an error.
// `creations_left` counts down auto.create.topics.max.per.request: past it a
// topic is answered LEADER_NOT_AVAILABLE, what Kafka answers while a topic is
// being created, so the client asks again and a later request creates it.
MetadataResponse::MetadataResponseTopic resolve_by_name(Broker& broker, const std::string& name, bool may_create,
                                                        int32_t& creations_left) {
  if (const TopicState* topic = broker.image().topic(name)) return describe_topic(broker.image(), *topic);
  if (invalid_topic_name_reason(name)) return topic_error(name, ErrorCode::kInvalidTopicException);
  if (!may_create || !broker.config().auto_create_topics_enable || is_internal_topic(name)) {
    return topic_error(name, ErrorCode::kUnknownTopicOrPartition);
  }
  if (creations_left <= 0) return topic_error(name, ErrorCode::kLeaderNotAvailable);
  --creations_left;
  ErrorCode created = broker.auto_create_topic(name);
  if (created != ErrorCode::kNone) return topic_error(name, created);
  // Kafka (KafkaApis + AutoTopicCreationManager, 2.x-4.x) answers the call
  // that creates the topic with LEADER_NOT_AVAILABLE and no partitions; the
  // topic shows from the next call on. Clients retry on that error (it is
  // retriable), and a client checking whether a deleted topic is gone reads
  // this answer as "not there (yet)", not as a topic that survived.
  return topic_error(name, ErrorCode::kLeaderNotAvailable);
}

}  // namespace

void handle_metadata(Broker& broker, Request& request) {
  MetadataRequest body;
  if (!request.decode(body)) return;
  int16_t version = request.version();

  MetadataResponse response;
  for (const auto& [id, b] : broker.image().brokers()) {
    if (b.fenced) continue;  // Kafka lists the alive brokers only
    MetadataResponse::MetadataResponseBroker out;
    out.node_id = id.value();
    out.host = b.host;
    out.port = b.port;
    out.rack = b.rack;
    response.brokers.push_back(std::move(out));
  }
  response.cluster_id = broker.cluster_id();
  response.controller_id = broker.controller_id().value();

  // v0: an empty list means every topic; v1+: null means every topic.
  bool all_topics = !body.topics || (version == 0 && body.topics->empty());
  if (all_topics) {
    for (const auto& [name, topic] : broker.image().topics()) response.topics.push_back(describe_topic(broker.image(), topic));
  } else {
    bool may_create = version < 4 || body.allow_auto_topic_creation;
    int32_t creations_left = broker.config().values().get_int("auto.create.topics.max.per.request");
    for (const auto& requested : *body.topics) {
      if (requested.name) {
        response.topics.push_back(resolve_by_name(broker, *requested.name, may_create, creations_left));
      } else if (const TopicState* topic = broker.image().topic_by_id(requested.topic_id)) {
        response.topics.push_back(describe_topic(broker.image(), *topic));
      } else {
        auto err = topic_error(std::nullopt, ErrorCode::kUnknownTopicId);
        err.topic_id = requested.topic_id;
        response.topics.push_back(std::move(err));
      }
    }
  }
  // Kafka sets the topic field on every topic of the answer, errors
  // included, and the cluster field only in v8-10 (later versions moved it
  // to DescribeCluster).
  if (version >= 8 && body.include_topic_authorized_operations) {
    for (auto& topic : response.topics) topic.topic_authorized_operations = kTopicOperations;
  }
  if (version >= 8 && version <= 10 && body.include_cluster_authorized_operations) {
    response.cluster_authorized_operations = kClusterOperations;
  }
  request.respond(response);
}

}  // namespace samsa
