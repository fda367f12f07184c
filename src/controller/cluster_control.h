#pragma once
// ClusterControl: the active controller's decisions about broker lifecycle
// (KIP-631), as Kafka's ClusterControlManager + BrokerHeartbeatManager do
// them: registration and broker epochs, heartbeat sessions, fencing,
// unfencing, controlled shutdown, unregistration. Pure: events in (with
// their explicit now_ms), records to propose and answers out. No I/O, no
// clock; the controller (controller/quorum_controller.*) owns the loop, the
// proposing and the answering on commit.
//
// Two kinds of state, as in Kafka:
// - the registrations: the MetadataImage the controller plans against
//   (passed to every call), plus the offset at which each broker's
//   RegisterBrokerRecord was committed, learnt through replay();
// - the sessions: in memory on the active controller only (last contact,
//   metadata offset reached, fenced or in controlled shutdown as decided
//   here, before the records commit, so a decision is planned once).
//   activate() starts them afresh: every registered broker gets a full
//   session from the moment this node became active;
// - the registrations planned but not seen committed yet (epoch,
//   incarnation, or an unregistration), which win over the image's, so a
//   record always names the epoch the broker will have when it applies
//   (the controller's log is in planning order). Forgotten when replay()
//   shows them committed, and on activate()/deactivate(): a controller whose
//   proposal failed deactivates and activates again.
//
// Broker epochs are metadata-log offsets: a new incarnation's epoch is the
// offset its registration will be written at (`next_offset`, supplied by
// the controller: the offset the proposed batch lands at), so epochs are
// unique in the cluster and only grow per broker (asserted).
//
// Leadership is not moved here: a decision that takes a broker out of
// service lists the partitions it leads and those whose ISR holds it, and
// the replication work (elections, ISR changes) plans their
// PartitionChangeRecords.
//
// Loop-thread only (the controller's).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "controller/metadata_image.h"
#include "protocol/error_code.h"

namespace samsa {

struct ClusterControlConfig {
  std::string cluster_id;
  int64_t session_timeout_ms = 9000;  // broker.session.timeout.ms
};

// A BrokerRegistration request (API 62), in the controller's types.
struct BrokerRegistrationEvent {
  NodeId broker_id;
  std::string cluster_id;
  Uuid incarnation_id;
  std::vector<BrokerEndpoint> listeners;
  std::optional<std::string> rack;
  // KIP-966: the epoch of the incarnation that shut down cleanly before this
  // one, kNoBrokerEpoch after an unclean shutdown (or none known).
  BrokerEpoch previous_broker_epoch = kNoBrokerEpoch;
};

// A BrokerHeartbeat request (API 63).
struct BrokerHeartbeatEvent {
  NodeId broker_id;
  BrokerEpoch broker_epoch = kNoBrokerEpoch;
  Offset current_metadata_offset = kNoOffset;
  bool want_fence = true;
  bool want_shut_down = false;
};

// A Kafka error for the answer, in Kafka's words.
struct LifecycleError {
  protocol::ErrorCode code;
  std::string message;
};

// A partition, as the metadata log names it.
struct PartitionKey {
  Uuid topic_id;
  PartitionId partition;
  bool operator==(const PartitionKey&) const = default;
  auto operator<=>(const PartitionKey&) const = default;
};

// What a decision asks of the replication work: the partitions whose ISR
// holds a broker that is no longer active (remove it), those of them it
// leads (elect another leader), and, when a broker became active, the
// partitions that have no leader (it may lead them now).
struct LeadershipWork {
  NodeId broker = kNoNode;
  std::vector<PartitionKey> in_isr;
  std::vector<PartitionKey> led;
  std::vector<PartitionKey> leaderless;
  // A new incarnation that did not shut down cleanly (KIP-966: its
  // PreviousBrokerEpoch is not its last epoch) may have lost unflushed
  // records: it leaves the ELR of these partitions.
  bool unclean_shutdown = false;
  std::vector<PartitionKey> eligible;
  bool empty() const { return in_isr.empty() && led.empty() && leaderless.empty() && eligible.empty(); }
};

struct RegistrationDecision {
  std::vector<MetadataRecord> records;  // propose; answer `epoch` once committed
  BrokerEpoch epoch;
  LeadershipWork work;  // a new incarnation: the old one's partitions
};

// A BrokerHeartbeat answer (the response's fields) and what it changed.
struct HeartbeatDecision {
  std::vector<MetadataRecord> records;  // propose; answer once committed (now if empty)
  bool is_caught_up = false;
  bool is_fenced = true;
  bool in_controlled_shutdown = false;
  bool should_shut_down = false;
  LeadershipWork work;
};

struct FencingDecision {
  std::vector<MetadataRecord> records;
  LeadershipWork work;
};

class ClusterControl {
 public:
  explicit ClusterControl(ClusterControlConfig config);

  // This node became the active controller: sessions start now for every
  // broker the image has registered, fenced as the image says.
  void activate(int64_t now_ms, const MetadataImage& image);
  // It stopped being active: sessions are forgotten.
  void deactivate();
  bool active() const { return active_; }

  // A committed record at `offset` (the offset of the batch holding it):
  // registration offsets (the catch-up target for unfencing) and the end
  // of unregistered brokers' sessions.
  void replay(const MetadataRecord& record, Offset offset);
  // The image was rebuilt from a snapshot at `offset`: every registered
  // broker must catch up to it.
  void replay_snapshot(const MetadataImage& image, Offset offset);

  std::variant<RegistrationDecision, LifecycleError> register_broker(int64_t now_ms, const MetadataImage& image,
                                                                     const BrokerRegistrationEvent& request,
                                                                     Offset next_offset);
  std::variant<HeartbeatDecision, LifecycleError> heartbeat(int64_t now_ms, const MetadataImage& image,
                                                            const BrokerHeartbeatEvent& request,
                                                            Offset next_offset);
  std::variant<FencingDecision, LifecycleError> unregister_broker(const MetadataImage& image, NodeId broker);

  // When the next session may expire (INT64_MAX: none can); call
  // fence_stale_broker then.
  int64_t next_check_ms() const;
  // Fences one broker whose session has expired (Kafka fences one at a
  // time, so each fencing's effect is visible before the next), if any.
  std::optional<FencingDecision> fence_stale_broker(int64_t now_ms, const MetadataImage& image);

  // May this broker lead or join an ISR now: registered, unfenced and not
  // in controlled shutdown, in the image and in its session.
  bool is_eligible_leader(const MetadataImage& image, NodeId broker) const;
  // The offset the broker's registration committed at (kNoOffset: unknown).
  Offset registration_offset(NodeId broker) const;

 private:
  enum class ControlState { kFenced, kUnfenced, kControlledShutdown, kShutdownNow };
  // A registration as planned: wins over the image's until committed.
  struct Planned {
    bool registered = true;  // false: an unregistration is in flight
    BrokerEpoch epoch;
    Uuid incarnation_id;
  };
  // The broker's registration as the next record will see it.
  struct Current {
    BrokerEpoch epoch;
    Uuid incarnation_id;
    bool fenced = true;
    bool in_controlled_shutdown = false;
  };
  std::optional<Current> current(const MetadataImage& image, NodeId broker) const;
  struct Session {
    int64_t last_contact_ms = 0;
    Offset metadata_offset = kNoOffset;
    bool fenced = true;
    Offset controlled_shutdown_offset = kNoOffset;  // set: in controlled shutdown
    bool shutting_down() const { return controlled_shutdown_offset != kNoOffset; }
  };

  bool has_valid_session(NodeId broker, int64_t now_ms) const;
  Session& session_for(NodeId broker, int64_t now_ms, bool fenced);
  ControlState current_state(const Session& s) const;
  ControlState next_state(const Session& s, const BrokerHeartbeatEvent& request, bool caught_up,
                          bool has_leaderships) const;
  void touch(Session& s, int64_t now_ms, bool fenced, Offset metadata_offset);
  Offset lowest_active_offset() const;
  void note_epoch(NodeId broker, BrokerEpoch epoch);
  static LeadershipWork departure_work(const MetadataImage& image, NodeId broker);
  static LeadershipWork arrival_work(const MetadataImage& image, NodeId broker);
  // The partitions whose ELR or LastKnownELR hold `broker`.
  static std::vector<PartitionKey> eligible_work(const MetadataImage& image, NodeId broker);
  static bool has_leaderships(const MetadataImage& image, NodeId broker);
  void fence(const MetadataImage& image, NodeId broker, BrokerEpoch epoch, std::vector<MetadataRecord>& records,
             LeadershipWork& work);

  ClusterControlConfig config_;
  bool active_ = false;
  std::map<NodeId, Session> sessions_;
  std::map<NodeId, Offset> registration_offsets_;
  std::map<NodeId, Planned> planned_;
  // The highest epoch ever assigned or seen per broker, to assert that
  // epochs only grow (also across proposals not committed yet).
  std::map<NodeId, BrokerEpoch> highest_epochs_;
};

}  // namespace samsa
