#include "controller/cluster_control.h"

#include <algorithm>
#include <limits>

#include "base/assert.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using Fencing = BrokerRegistrationChangeRecord::Fencing;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

LifecycleError stale_epoch(std::string message) { return {ErrorCode::kStaleBrokerEpoch, std::move(message)}; }

}  // namespace

ClusterControl::ClusterControl(ClusterControlConfig config) : config_(std::move(config)) {
  ASSERT(config_.session_timeout_ms > 0);
}

void ClusterControl::activate(int64_t now_ms, const MetadataImage& image) {
  active_ = true;
  sessions_.clear();
  planned_.clear();
  for (const auto& [id, broker] : image.brokers()) {
    Session s;
    touch(s, now_ms, broker.fenced, kNoOffset);
    sessions_[id] = s;
  }
}

void ClusterControl::deactivate() {
  active_ = false;
  sessions_.clear();
  planned_.clear();
}

void ClusterControl::replay(const MetadataRecord& record, Offset offset) {
  if (const auto* r = std::get_if<RegisterBrokerRecord>(&record)) {
    registration_offsets_[r->broker_id] = offset;
    note_epoch(r->broker_id, r->broker_epoch);
    auto it = planned_.find(r->broker_id);
    if (it != planned_.end() && it->second.registered && it->second.epoch == r->broker_epoch) planned_.erase(it);
  } else if (const auto* u = std::get_if<UnregisterBrokerRecord>(&record)) {
    registration_offsets_.erase(u->broker_id);
    sessions_.erase(u->broker_id);
    auto it = planned_.find(u->broker_id);
    if (it != planned_.end() && !it->second.registered) planned_.erase(it);
  }
}

void ClusterControl::replay_snapshot(const MetadataImage& image, Offset offset) {
  registration_offsets_.clear();
  for (const auto& [id, broker] : image.brokers()) {
    registration_offsets_[id] = offset;
    note_epoch(id, broker.epoch);
  }
}

void ClusterControl::note_epoch(NodeId broker, BrokerEpoch epoch) {
  auto [it, added] = highest_epochs_.try_emplace(broker, epoch);
  if (added) return;
  // Committed registrations of one broker only ever raise its epoch.
  ASSERT_MSG(epoch >= it->second, "a committed broker epoch went back");
  it->second = epoch;
}

Offset ClusterControl::registration_offset(NodeId broker) const {
  auto it = registration_offsets_.find(broker);
  return it == registration_offsets_.end() ? kNoOffset : it->second;
}

bool ClusterControl::has_valid_session(NodeId broker, int64_t now_ms) const {
  auto it = sessions_.find(broker);
  // A fenced broker has no session to protect (Kafka's hasValidSession).
  if (it == sessions_.end() || it->second.fenced) return false;
  return it->second.last_contact_ms + config_.session_timeout_ms >= now_ms;
}

void ClusterControl::touch(Session& s, int64_t now_ms, bool fenced, Offset metadata_offset) {
  s.last_contact_ms = now_ms;
  s.metadata_offset = metadata_offset;
  s.fenced = fenced;
  // A fenced broker leaves controlled shutdown: its next heartbeat is told
  // to shut down at once.
  if (fenced) s.controlled_shutdown_offset = kNoOffset;
}

ClusterControl::Session& ClusterControl::session_for(NodeId broker, int64_t now_ms, bool fenced) {
  auto [it, added] = sessions_.try_emplace(broker);
  if (added) touch(it->second, now_ms, fenced, kNoOffset);
  return it->second;
}

std::optional<ClusterControl::Current> ClusterControl::current(const MetadataImage& image, NodeId broker) const {
  const BrokerState* b = image.broker(broker);
  auto it = planned_.find(broker);
  if (it != planned_.end()) {
    if (!it->second.registered) return std::nullopt;
    // A registration in flight: a new incarnation starts fenced; the same
    // one keeps the image's state.
    const bool same = b && b->epoch == it->second.epoch;
    return Current{it->second.epoch, it->second.incarnation_id, same ? b->fenced : true,
                   same && b->in_controlled_shutdown};
  }
  if (!b) return std::nullopt;
  return Current{b->epoch, b->incarnation_id, b->fenced, b->in_controlled_shutdown};
}

std::variant<RegistrationDecision, LifecycleError> ClusterControl::register_broker(
    int64_t now_ms, const MetadataImage& image, const BrokerRegistrationEvent& request, Offset next_offset) {
  ASSERT_MSG(active_, "registration planned on a controller that is not active");
  if (request.cluster_id != config_.cluster_id) {
    return LifecycleError{ErrorCode::kInconsistentClusterId,
                          "Expected cluster ID " + config_.cluster_id + ", but got cluster ID " + request.cluster_id};
  }
  const std::optional<Current> existing = current(image, request.broker_id);
  const bool same_incarnation = existing && existing->incarnation_id == request.incarnation_id;
  if (existing && !same_incarnation && has_valid_session(request.broker_id, now_ms)) {
    return LifecycleError{ErrorCode::kDuplicateBrokerRegistration, "Another broker is registered with that broker id."};
  }
  RegistrationDecision decision;
  RegisterBrokerRecord record;
  record.broker_id = request.broker_id;
  record.incarnation_id = request.incarnation_id;
  record.endpoints = request.listeners;
  record.rack = request.rack;
  if (same_incarnation) {
    // Amending: the same process registers again (a retry, a new
    // controller); its epoch and state stay.
    record.broker_epoch = existing->epoch;
    record.fenced = existing->fenced;
    record.in_controlled_shutdown = existing->in_controlled_shutdown;
  } else {
    // A new incarnation: the epoch is the offset the record lands at, never
    // below an epoch this broker had (a caller's stale offset must not
    // break the rule that epochs only grow).
    BrokerEpoch floor = existing ? existing->epoch + 1 : BrokerEpoch(0);
    if (auto it = highest_epochs_.find(request.broker_id); it != highest_epochs_.end()) {
      floor = std::max(floor, it->second + 1);
    }
    record.broker_epoch = std::max(BrokerEpoch(next_offset.value()), floor);
    record.fenced = true;
    record.in_controlled_shutdown = false;
    // The old incarnation is gone: its ISR places and leaderships go.
    if (existing) decision.work = departure_work(image, request.broker_id);
    // KIP-966: a broker that did not shut down cleanly (its previous epoch
    // is not the one registered) may miss records it had acknowledged as a
    // follower: it is no longer an eligible leader.
    if (existing && request.previous_broker_epoch != existing->epoch) {
      decision.work.broker = request.broker_id;
      decision.work.unclean_shutdown = true;
      decision.work.eligible = eligible_work(image, request.broker_id);
    }
    sessions_.erase(request.broker_id);
  }
  ASSERT(!existing || record.broker_epoch >= existing->epoch);
  planned_[request.broker_id] = Planned{true, record.broker_epoch, record.incarnation_id};
  Session& s = sessions_[request.broker_id];  // fresh for a new incarnation
  touch(s, now_ms, record.fenced, s.metadata_offset);
  decision.epoch = record.broker_epoch;
  decision.records.push_back(std::move(record));
  return decision;
}

ClusterControl::ControlState ClusterControl::current_state(const Session& s) const {
  if (s.shutting_down()) return ControlState::kControlledShutdown;
  return s.fenced ? ControlState::kFenced : ControlState::kUnfenced;
}

// Kafka's BrokerHeartbeatManager.calculateNextBrokerState, case by case.
ClusterControl::ControlState ClusterControl::next_state(const Session& s, const BrokerHeartbeatEvent& request,
                                                        bool caught_up, bool has_leaderships) const {
  switch (current_state(s)) {
    case ControlState::kFenced:
      if (request.want_shut_down) return ControlState::kShutdownNow;
      // Unfenced once it asks and has replayed its own registration.
      if (!request.want_fence && caught_up) return ControlState::kUnfenced;
      return ControlState::kFenced;
    case ControlState::kUnfenced:
      if (request.want_fence) return request.want_shut_down ? ControlState::kShutdownNow : ControlState::kFenced;
      if (request.want_shut_down) {
        return has_leaderships ? ControlState::kControlledShutdown : ControlState::kShutdownNow;
      }
      return ControlState::kUnfenced;
    case ControlState::kControlledShutdown:
      if (has_leaderships) return ControlState::kControlledShutdown;
      // Done once every active broker has replayed past the record that put
      // it in controlled shutdown (they no longer pick it).
      return s.controlled_shutdown_offset <= lowest_active_offset() ? ControlState::kShutdownNow
                                                                    : ControlState::kControlledShutdown;
    case ControlState::kShutdownNow:
      break;
  }
  return ControlState::kShutdownNow;
}

Offset ClusterControl::lowest_active_offset() const {
  Offset lowest(kNever);
  for (const auto& [id, s] : sessions_) {
    if (!s.fenced && !s.shutting_down()) lowest = std::min(lowest, s.metadata_offset);
  }
  return lowest;
}

std::variant<HeartbeatDecision, LifecycleError> ClusterControl::heartbeat(int64_t now_ms, const MetadataImage& image,
                                                                          const BrokerHeartbeatEvent& request,
                                                                          Offset next_offset) {
  ASSERT_MSG(active_, "heartbeat handled on a controller that is not active");
  const NodeId id = request.broker_id;
  const std::optional<Current> registration = current(image, id);
  if (!registration) return stale_epoch("No broker registration found for broker id " + std::to_string(id.value()));
  if (registration->epoch != request.broker_epoch) {
    return stale_epoch("Expected broker epoch " + std::to_string(registration->epoch.value()) +
                       ", but got broker epoch " + std::to_string(request.broker_epoch.value()));
  }
  Session& s = session_for(id, now_ms, registration->fenced);
  const Offset target = registration_offset(id);
  const bool caught_up = target != kNoOffset && request.current_metadata_offset >= target;
  const ControlState current = current_state(s);
  const ControlState next = next_state(s, request, caught_up, has_leaderships(image, id));

  HeartbeatDecision decision;
  if (current != next) {
    switch (next) {
      case ControlState::kFenced:
      case ControlState::kShutdownNow:
        if (!s.fenced) fence(image, id, registration->epoch, decision.records, decision.work);
        break;
      case ControlState::kUnfenced:
        ASSERT_MSG(caught_up && !request.want_fence, "a broker is unfenced only once caught up and asking");
        decision.records.push_back(BrokerRegistrationChangeRecord{id, registration->epoch, Fencing::kUnfence, false});
        decision.work = arrival_work(image, id);
        break;
      case ControlState::kControlledShutdown:
        if (!registration->in_controlled_shutdown) {
          decision.records.push_back(BrokerRegistrationChangeRecord{id, registration->epoch, Fencing::kNone, true});
        }
        decision.work = departure_work(image, id);
        break;
    }
  }
  const bool fenced = next == ControlState::kFenced || next == ControlState::kShutdownNow;
  touch(s, now_ms, fenced, request.current_metadata_offset);
  if (next == ControlState::kControlledShutdown && !s.shutting_down()) {
    // This batch's offset (a metadata offset names a batch: the Raft index
    // it lands at): every active broker must have replayed it. Not past it,
    // as Kafka's per-record offsets would have it: no later batch may come.
    s.controlled_shutdown_offset = next_offset;
  }
  decision.is_caught_up = caught_up;
  decision.is_fenced = fenced;
  decision.in_controlled_shutdown = next == ControlState::kControlledShutdown;
  decision.should_shut_down = next == ControlState::kShutdownNow;
  ASSERT(!decision.is_fenced || !is_eligible_leader(image, id));
  return decision;
}

void ClusterControl::fence(const MetadataImage& image, NodeId broker, BrokerEpoch epoch,
                           std::vector<MetadataRecord>& records, LeadershipWork& work) {
  records.push_back(BrokerRegistrationChangeRecord{broker, epoch, Fencing::kFence, false});
  work = departure_work(image, broker);
  auto it = sessions_.find(broker);
  if (it != sessions_.end()) {
    it->second.fenced = true;
    it->second.controlled_shutdown_offset = kNoOffset;
  }
}

std::variant<FencingDecision, LifecycleError> ClusterControl::unregister_broker(const MetadataImage& image,
                                                                                NodeId broker) {
  ASSERT_MSG(active_, "unregistration planned on a controller that is not active");
  const std::optional<Current> registration = current(image, broker);
  if (!registration) {
    return LifecycleError{ErrorCode::kBrokerIdNotRegistered,
                          "Broker ID " + std::to_string(broker.value()) + " is not currently registered"};
  }
  FencingDecision decision;
  decision.records.push_back(UnregisterBrokerRecord{broker, registration->epoch});
  planned_[broker] = Planned{false, registration->epoch, registration->incarnation_id};
  decision.work = departure_work(image, broker);
  return decision;
}

int64_t ClusterControl::next_check_ms() const {
  int64_t next = kNever;
  for (const auto& [id, s] : sessions_) {
    if (!s.fenced) next = std::min(next, s.last_contact_ms + config_.session_timeout_ms + 1);
  }
  return next;
}

std::optional<FencingDecision> ClusterControl::fence_stale_broker(int64_t now_ms, const MetadataImage& image) {
  ASSERT_MSG(active_, "fencing planned on a controller that is not active");
  std::optional<NodeId> stalest;
  int64_t oldest = kNever;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (!current(image, it->first)) {  // unregistered meanwhile: no session to keep
      it = sessions_.erase(it);
      continue;
    }
    const Session& s = it->second;
    if (!s.fenced && !has_valid_session(it->first, now_ms) && s.last_contact_ms < oldest) {
      oldest = s.last_contact_ms;
      stalest = it->first;
    }
    ++it;
  }
  if (!stalest) return std::nullopt;
  FencingDecision decision;
  fence(image, *stalest, current(image, *stalest)->epoch, decision.records, decision.work);
  return decision;
}

bool ClusterControl::is_eligible_leader(const MetadataImage& image, NodeId broker) const {
  const BrokerState* registration = image.broker(broker);
  if (!registration || !registration->active()) return false;
  auto it = sessions_.find(broker);
  if (active_ && it != sessions_.end() && (it->second.fenced || it->second.shutting_down())) return false;
  ASSERT(!registration->fenced);
  return true;
}

bool ClusterControl::has_leaderships(const MetadataImage& image, NodeId broker) {
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      if (p.leader == broker) return true;
    }
  }
  return false;
}

LeadershipWork ClusterControl::departure_work(const MetadataImage& image, NodeId broker) {
  LeadershipWork work;
  work.broker = broker;
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      PartitionKey key{topic.id, p.partition};
      if (std::find(p.isr.begin(), p.isr.end(), broker) != p.isr.end()) work.in_isr.push_back(key);
      if (p.leader == broker) work.led.push_back(key);
    }
  }
  return work;
}

std::vector<PartitionKey> ClusterControl::eligible_work(const MetadataImage& image, NodeId broker) {
  std::vector<PartitionKey> keys;
  auto holds = [broker](const std::vector<NodeId>& ids) { return std::find(ids.begin(), ids.end(), broker) != ids.end(); };
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      if (holds(p.elr) || holds(p.last_known_elr)) keys.push_back(PartitionKey{topic.id, p.partition});
    }
  }
  return keys;
}

LeadershipWork ClusterControl::arrival_work(const MetadataImage& image, NodeId broker) {
  LeadershipWork work;
  work.broker = broker;
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      bool replica = std::find(p.replicas.begin(), p.replicas.end(), broker) != p.replicas.end();
      if (p.leader == kNoNode && replica) work.leaderless.push_back(PartitionKey{topic.id, p.partition});
    }
  }
  return work;
}

}  // namespace samsa
