#include "replication/read_replica_selector.h"

namespace samsa::replication {

NodeId select_read_replica(const std::string& client_rack, const ReadReplicaView& leader,
                           const std::vector<ReadReplicaView>& followers) {
  if (client_rack.empty() || leader.rack == client_rack) return leader.id;
  const ReadReplicaView* best = nullptr;
  for (const ReadReplicaView& f : followers) {
    if (f.rack != client_rack) continue;
    if (!best || f.log_end > best->log_end || (f.log_end == best->log_end && f.id < best->id)) best = &f;
  }
  return best ? best->id : leader.id;
}

}  // namespace samsa::replication
