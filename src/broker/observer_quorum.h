#pragma once
// ObserverQuorum: the metadata log of a broker-only node
// (process.roles=broker): an ObserverMetadataLog in
// `<metadata.log.dir>/__cluster_metadata-0` (the same dir and format as a
// voter's) pulling the log from the voters of controller.quorum.voters over
// a RaftFetchClient to their controller listeners (SamsaRaftFetch,
// decisions/0017). It never proposes: the node forwards metadata changes to
// the active controller, which is the quorum leader the observer follows.
//
// Timing: the observer ticks every MetadataQuorum::kTickMs, asks again one
// tick after a caught-up answer, and gives up on a voter that does not
// answer within controller.quorum.fetch.timeout.ms (then the next one).
//
// Loop-thread only. Owns the fetch client, which must outlive the log: the
// owner destroys the log (take_log()) first.

#include <memory>
#include <string>

#include "base/result.h"
#include "config/broker_config.h"
#include "controller/observer_metadata_log.h"
#include "controller/raft_fetch_client.h"
#include "io/runtime.h"

namespace samsa {

class ObserverQuorum {
 public:
  static Result<std::unique_ptr<ObserverQuorum>> open(Runtime& runtime, const BrokerConfig& config,
                                                      const std::string& cluster_id);
  ~ObserverQuorum();
  ObserverQuorum(const ObserverQuorum&) = delete;
  ObserverQuorum& operator=(const ObserverQuorum&) = delete;

  // The log, for the broker to own (it is destroyed before this object).
  std::unique_ptr<ObserverMetadataLog> take_log() { return std::move(log_); }

  // The quorum leader the observer last heard of (kNoNode while none):
  // the active controller, where this broker registers and forwards.
  NodeId leader() const;

  // Stops delivering answers (before the log goes).
  void detach();

 private:
  ObserverQuorum() = default;

  std::unique_ptr<RaftFetchClient> client_;
  std::unique_ptr<ObserverMetadataLog> log_;  // until take_log()
  ObserverMetadataLog* observer_ = nullptr;   // the log, wherever it is owned
};

}  // namespace samsa
