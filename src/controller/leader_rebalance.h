#pragma once
// Elections asked for by an operator (ElectLeaders, API 43) and the
// controller's own preferred-leader rebalance, as Kafka's
// ReplicationControlManager.electLeaders and its
// auto.leader.rebalance.enable task do them. Pure: an image in,
// PartitionChangeRecords and per-partition answers out.
//
// - PREFERRED: the partition's first replica becomes its leader if it is in
//   the ISR and active (registered, unfenced, not shutting down);
//   ELECTION_NOT_NEEDED when it leads already, PREFERRED_LEADER_NOT_AVAILABLE
//   when it cannot.
// - UNCLEAN: only for a partition without a leader: an ISR member if one is
//   active, else any active replica (records only the old ISR held are
//   lost); ELECTION_NOT_NEEDED when it has a leader,
//   ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is active.
// - No partitions named (null): every partition of every topic; those that
//   need no election are left out of the answer, as Kafka does.
//
// The rebalance picks the partitions whose preferred replica is in the ISR
// and active but does not lead, for every broker whose share of such
// partitions (among those it is preferred for) is above
// leader.imbalance.per.broker.percentage. A replica is in the ISR only once
// it has reached the leader's high watermark, so leadership goes back to a
// recovering broker only after it has caught up.

#include <optional>
#include <string>
#include <vector>

#include "controller/leader_election.h"
#include "controller/metadata_image.h"
#include "controller/metadata_records.h"
#include "protocol/error_code.h"

namespace samsa {

enum class ElectionType : int8_t { kPreferred = 0, kUnclean = 1 };

struct ElectionRequestTopic {
  std::string topic;
  std::vector<int32_t> partitions;
};

struct PartitionElectionResult {
  std::string topic;
  int32_t partition = 0;
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::optional<std::string> message;
};

struct ElectionPlan {
  std::vector<MetadataRecord> records;
  std::vector<PartitionElectionResult> results;  // in request order (image order for "all")
};

// `partitions` nullopt: every partition.
// `policy`: min.insync.replicas and ELR (KIP-966) of the partitions.
ElectionPlan plan_elections(const MetadataImage& image, ElectionType type,
                            const std::optional<std::vector<ElectionRequestTopic>>& partitions,
                            const ElectionPolicy& policy);

// The partitions the rebalance would give back to their preferred replica.
std::vector<ElectionRequestTopic> partitions_to_rebalance(const MetadataImage& image, int imbalance_percentage);

}  // namespace samsa
