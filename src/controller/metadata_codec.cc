#include "controller/metadata_codec.h"

#include "base/assert.h"
#include "base/byte_reader.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "protocol/codec.h"
#include "protocol/generated/broker_registration_change_record.h"
#include "protocol/generated/client_quota_record.h"
#include "protocol/generated/config_record.h"
#include "protocol/generated/fence_broker_record.h"
#include "protocol/generated/partition_change_record.h"
#include "protocol/generated/partition_record.h"
#include "protocol/generated/register_broker_record.h"
#include "protocol/generated/remove_topic_record.h"
#include "protocol/generated/topic_record.h"
#include "protocol/generated/unfence_broker_record.h"
#include "protocol/generated/producer_ids_record.h"
#include "protocol/generated/unregister_broker_record.h"

namespace samsa {
namespace {

constexpr uint32_t kFrameVersion = 1;
enum RecordType : uint32_t { kRegisterBroker = 0, kUnregisterBroker = 1, kTopic = 2, kPartition = 3, kConfig = 4,
                          kPartitionChange = 5,
                          kFenceBroker = 7, kUnfenceBroker = 8, kRemoveTopic = 9, kClientQuota = 14, kProducerIds = 15,
                          kBrokerRegistrationChange = 17 };

std::vector<int32_t> to_wire(const std::vector<NodeId>& ids) {
  std::vector<int32_t> out;
  for (NodeId id : ids) out.push_back(id.value());
  return out;
}
std::vector<NodeId> from_wire(const std::vector<int32_t>& ids) {
  std::vector<NodeId> out;
  for (int32_t id : ids) out.push_back(NodeId(id));
  return out;
}

// Written at the newest version we define (Wire::kMaxVersion).
template <typename Wire>
Bytes frame(uint32_t type, const Wire& wire) {
  OutBuffer out;
  ByteWriter header(out.bytes());
  header.write_uvarint(kFrameVersion);
  header.write_uvarint(type);
  header.write_uvarint(uint32_t(Wire::kMaxVersion));  // record version
  protocol::Encoder w(out);
  wire.encode(w, Wire::kMaxVersion);
  return std::move(out.bytes());
}

Bytes encode_one(const RegisterBrokerRecord& r) {
  protocol::RegisterBrokerRecord w;
  w.broker_id = r.broker_id.value();
  w.broker_epoch = r.broker_epoch.value();
  w.incarnation_id = r.incarnation_id;
  for (const BrokerEndpoint& e : r.endpoints) {
    w.end_points.push_back({e.name, e.host, e.port, e.security_protocol});
  }
  w.rack = r.rack;
  w.fenced = r.fenced;
  w.in_controlled_shutdown = r.in_controlled_shutdown;
  return frame(kRegisterBroker, w);
}
Bytes encode_one(const ProducerIdsRecord& r) {
  protocol::ProducerIdsRecord w;
  w.broker_id = r.broker_id.value();
  w.broker_epoch = r.broker_epoch.value();
  w.next_producer_id = r.next_producer_id.value();
  return frame(kProducerIds, w);
}

Bytes encode_one(const UnregisterBrokerRecord& r) {
  protocol::UnregisterBrokerRecord w;
  w.broker_id = r.broker_id.value();
  w.broker_epoch = r.broker_epoch.value();
  return frame(kUnregisterBroker, w);
}
Bytes encode_one(const FenceBrokerRecord& r) {
  protocol::FenceBrokerRecord w;
  w.id = r.broker_id.value();
  w.epoch = r.broker_epoch.value();
  return frame(kFenceBroker, w);
}
Bytes encode_one(const UnfenceBrokerRecord& r) {
  protocol::UnfenceBrokerRecord w;
  w.id = r.broker_id.value();
  w.epoch = r.broker_epoch.value();
  return frame(kUnfenceBroker, w);
}
Bytes encode_one(const BrokerRegistrationChangeRecord& r) {
  protocol::BrokerRegistrationChangeRecord w;
  w.broker_id = r.broker_id.value();
  w.broker_epoch = r.broker_epoch.value();
  w.fenced = int8_t(r.fenced);
  w.in_controlled_shutdown = r.in_controlled_shutdown ? 1 : 0;
  return frame(kBrokerRegistrationChange, w);
}
Bytes encode_one(const TopicRecord& r) {
  protocol::TopicRecord w;
  w.name = r.name;
  w.topic_id = r.topic_id;
  return frame(kTopic, w);
}
Bytes encode_one(const PartitionRecord& r) {
  protocol::PartitionRecord w;
  w.partition_id = r.partition.value();
  w.topic_id = r.topic_id;
  w.replicas = to_wire(r.replicas);
  w.isr = to_wire(r.isr);
  w.leader = r.leader.value();
  w.leader_epoch = r.leader_epoch.value();
  w.partition_epoch = r.partition_epoch;
  if (!r.elr.empty()) w.eligible_leader_replicas = to_wire(r.elr);
  if (!r.last_known_elr.empty()) w.last_known_elr = to_wire(r.last_known_elr);
  return frame(kPartition, w);
}
Bytes encode_one(const PartitionChangeRecord& r) {
  protocol::PartitionChangeRecord w;
  w.partition_id = r.partition.value();
  w.topic_id = r.topic_id;
  if (r.isr) w.isr = to_wire(*r.isr);
  w.leader = r.leader.value();
  if (r.replicas) w.replicas = to_wire(*r.replicas);
  w.leader_recovery_state = r.leader_recovery_state;
  if (r.elr) w.eligible_leader_replicas = to_wire(*r.elr);
  if (r.last_known_elr) w.last_known_elr = to_wire(*r.last_known_elr);
  return frame(kPartitionChange, w);
}
Bytes encode_one(const ConfigRecord& r) {
  protocol::ConfigRecord w;
  w.resource_type = int8_t(r.resource);
  w.resource_name = r.resource_name;
  w.name = r.key;
  w.value = r.value;
  return frame(kConfig, w);
}
Bytes encode_one(const RemoveTopicRecord& r) {
  protocol::RemoveTopicRecord w;
  w.topic_id = r.topic_id;
  return frame(kRemoveTopic, w);
}
Bytes encode_one(const ClientQuotaRecord& r) {
  protocol::ClientQuotaRecord w;
  for (const auto& [type, name] : r.entity) {
    protocol::ClientQuotaRecord::EntityData e;
    e.entity_type = type;
    e.entity_name = name;
    w.entity.push_back(std::move(e));
  }
  w.key = r.key;
  w.value = r.value;
  w.remove = r.remove;
  return frame(kClientQuota, w);
}

template <typename Wire>
Result<Wire> decode_body(ByteReader& r, uint32_t version) {
  Wire w;
  if (version > uint32_t(Wire::kMaxVersion) || !w.decode(r, int16_t(version)) || !r.ok() || !r.at_end()) {
    return Error(ErrorKind::kCorrupt, "malformed metadata record body");
  }
  return w;
}

// Version 0 is Samsa's first layout: one endpoint (the advertised
// listener, named PLAINTEXT) and no liveness (the single node was never
// fenced).
RegisterBrokerRecord register_broker_from_wire(const protocol::RegisterBrokerRecord& w, uint32_t version) {
  RegisterBrokerRecord r{NodeId(w.broker_id), BrokerEpoch(w.broker_epoch), w.incarnation_id, {}, w.rack,
                         w.fenced, w.in_controlled_shutdown};
  if (version == 0) {
    r.endpoints.push_back({"PLAINTEXT", w.host, uint16_t(w.port), 0});
    r.fenced = false;
    return r;
  }
  for (const auto& e : w.end_points) r.endpoints.push_back({e.name, e.host, e.port, e.security_protocol});
  return r;
}

Result<MetadataRecord> registration_change_from_wire(const protocol::BrokerRegistrationChangeRecord& w) {
  if (w.fenced < -1 || w.fenced > 1 || w.in_controlled_shutdown < 0 || w.in_controlled_shutdown > 1) {
    return Error(ErrorKind::kCorrupt, "broker registration change record with an unknown change");
  }
  return MetadataRecord(BrokerRegistrationChangeRecord{NodeId(w.broker_id), BrokerEpoch(w.broker_epoch),
                                                       BrokerRegistrationChangeRecord::Fencing(w.fenced),
                                                       w.in_controlled_shutdown == 1});
}

}  // namespace

Bytes encode_metadata_record(const MetadataRecord& record) {
  return std::visit([](const auto& r) { return encode_one(r); }, record);
}

Result<MetadataRecord> decode_metadata_record(ByteView value) {
  ByteReader r(value);
  uint32_t frame_version = r.read_uvarint();
  uint32_t type = r.read_uvarint();
  uint32_t version = r.read_uvarint();
  if (!r.ok() || frame_version != kFrameVersion) return Error(ErrorKind::kCorrupt, "bad metadata record frame");
  switch (type) {
    case kRegisterBroker: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::RegisterBrokerRecord>(r, version));
      if (version == 0 && (w.port < 0 || w.port > 65535)) return Error(ErrorKind::kCorrupt, "broker port out of range");
      return MetadataRecord(register_broker_from_wire(w, version));
    }
    case kUnregisterBroker: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::UnregisterBrokerRecord>(r, version));
      return MetadataRecord(UnregisterBrokerRecord{NodeId(w.broker_id), BrokerEpoch(w.broker_epoch)});
    }
    case kProducerIds: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::ProducerIdsRecord>(r, version));
      if (w.next_producer_id < 0) return Error(ErrorKind::kCorrupt, "negative next producer id");
      return MetadataRecord(ProducerIdsRecord{NodeId(w.broker_id), BrokerEpoch(w.broker_epoch),
                                              ProducerId(w.next_producer_id)});
    }
    case kFenceBroker: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::FenceBrokerRecord>(r, version));
      return MetadataRecord(FenceBrokerRecord{NodeId(w.id), BrokerEpoch(w.epoch)});
    }
    case kUnfenceBroker: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::UnfenceBrokerRecord>(r, version));
      return MetadataRecord(UnfenceBrokerRecord{NodeId(w.id), BrokerEpoch(w.epoch)});
    }
    case kBrokerRegistrationChange: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::BrokerRegistrationChangeRecord>(r, version));
      return registration_change_from_wire(w);
    }
    case kTopic: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::TopicRecord>(r, version));
      return MetadataRecord(TopicRecord{w.name, w.topic_id});
    }
    case kPartition: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::PartitionRecord>(r, version));
      return MetadataRecord(PartitionRecord{w.topic_id, PartitionId(w.partition_id), from_wire(w.replicas),
                                            from_wire(w.isr), NodeId(w.leader), LeaderEpoch(w.leader_epoch),
                                            w.partition_epoch,
                                            from_wire(w.eligible_leader_replicas.value_or(std::vector<int32_t>{})),
                                            from_wire(w.last_known_elr.value_or(std::vector<int32_t>{}))});
    }
    case kPartitionChange: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::PartitionChangeRecord>(r, version));
      if (w.leader < -2 || w.leader_recovery_state < -1 || w.leader_recovery_state > 1) {
        return Error(ErrorKind::kCorrupt, "partition change record with an unknown leader or recovery state");
      }
      PartitionChangeRecord change{w.topic_id, PartitionId(w.partition_id), std::nullopt, NodeId(w.leader),
                                   std::nullopt, w.leader_recovery_state};
      if (w.isr) change.isr = from_wire(*w.isr);
      if (w.replicas) change.replicas = from_wire(*w.replicas);
      if (w.eligible_leader_replicas) change.elr = from_wire(*w.eligible_leader_replicas);
      if (w.last_known_elr) change.last_known_elr = from_wire(*w.last_known_elr);
      return MetadataRecord(std::move(change));
    }
    case kConfig: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::ConfigRecord>(r, version));
      return MetadataRecord(
          ConfigRecord{ConfigRecord::Resource(w.resource_type), w.resource_name, w.name, w.value});
    }
    case kRemoveTopic: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::RemoveTopicRecord>(r, version));
      return MetadataRecord(RemoveTopicRecord{w.topic_id});
    }
    case kClientQuota: {
      ASSIGN_OR_RETURN(auto w, decode_body<protocol::ClientQuotaRecord>(r, version));
      ClientQuotaRecord record{{}, w.key, w.value, w.remove};
      for (const auto& e : w.entity) {
        if (!record.entity.emplace(e.entity_type, e.entity_name).second) {
          return Error(ErrorKind::kCorrupt, "client quota record names entity type " + e.entity_type + " twice");
        }
      }
      return MetadataRecord(std::move(record));
    }
  }
  return Error(ErrorKind::kCorrupt, "unknown metadata record type " + std::to_string(type));
}

Result<Bytes> encode_metadata_batch(const std::vector<MetadataRecord>& records, int64_t timestamp_ms) {
  ASSERT(!records.empty());
  RecordBatchBuilder builder;
  std::vector<Bytes> values;
  values.reserve(records.size());
  for (const auto& r : records) {
    values.push_back(encode_metadata_record(r));
    builder.add(timestamp_ms, std::nullopt, ByteView(values.back()));
  }
  return builder.build();
}

Status decode_metadata_batches(ByteView bytes, Offset from,
                               const std::function<void(Offset, MetadataRecord)>& on_record) {
  BatchIterator batches(bytes);
  while (auto batch = batches.next()) {
    ASSIGN_OR_RETURN(RecordIterator records, RecordIterator::open(batch->bytes));
    Record record;
    while (records.next(record)) {
      Offset offset = record.offset(batch->header);
      if (offset < from) continue;
      if (!record.value) return Error(ErrorKind::kCorrupt, "metadata record without a value");
      ASSIGN_OR_RETURN(MetadataRecord decoded, decode_metadata_record(*record.value));
      on_record(offset, std::move(decoded));
    }
    RETURN_IF_ERROR(records.status());
  }
  if (!batches.at_end()) return Error(ErrorKind::kCorrupt, "a partial or malformed metadata record batch");
  return ok_status();
}

Result<std::vector<MetadataRecord>> decode_metadata_batch(ByteView bytes) {
  std::vector<MetadataRecord> out;
  RETURN_IF_ERROR(decode_metadata_batches(bytes, Offset(0), [&](Offset, MetadataRecord r) {
    out.push_back(std::move(r));
  }));
  return out;
}

}  // namespace samsa
