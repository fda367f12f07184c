#include "controller/replica_placer.h"

#include <map>
#include <utility>

namespace samsa {
namespace {

// java.util.Collections.shuffle.
template <typename T>
void shuffle(std::vector<T>& items, Rng& rng) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.uniform(i)]);
}

// Kafka's BrokerList: the brokers of one rack (fenced or not), handed out
// round-robin; each placement epoch starts one further along.
class BrokerList {
 public:
  void add(NodeId id) { brokers_.push_back(id); }
  bool empty() const { return brokers_.empty(); }

  void initialize(Rng& rng) {
    if (brokers_.empty()) return;
    shuffle(brokers_, rng);
    offset_ = size_t(rng.uniform(brokers_.size()));
  }
  void reshuffle(Rng& rng) { shuffle(brokers_, rng); }

  // The next broker of this epoch, or nullopt when the epoch used them all.
  std::optional<NodeId> next(int32_t epoch) {
    if (brokers_.empty()) return std::nullopt;
    if (epoch_ != epoch) {
      epoch_ = epoch;
      index_ = 0;
      offset_ = (offset_ + 1) % brokers_.size();
    }
    if (index_ >= brokers_.size()) return std::nullopt;
    return brokers_[(index_++ + offset_) % brokers_.size()];
  }

 private:
  std::vector<NodeId> brokers_;
  int32_t epoch_ = 0;
  size_t index_ = 0;
  size_t offset_ = 0;
};

struct Rack {
  BrokerList unfenced;
  BrokerList fenced;

  std::optional<NodeId> next_unfenced(int32_t epoch) { return unfenced.next(epoch); }
  std::optional<NodeId> next(int32_t epoch) {
    if (auto id = unfenced.next(epoch)) return id;
    return fenced.next(epoch);
  }
};

// Kafka's RackList: racks in a shuffled order, placement striped over them.
class RackList {
 public:
  RackList(const std::vector<UsableBroker>& brokers, Rng& rng) : rng_(rng) {
    for (const UsableBroker& b : brokers) {
      auto [it, added] = racks_.try_emplace(b.rack);
      if (added) rack_names_.push_back(b.rack);
      (b.fenced ? it->second.fenced : it->second.unfenced).add(b.id);
      if (!b.fenced) ++unfenced_;
    }
    total_ = brokers.size();
    for (auto& [name, rack] : racks_) {
      rack.fenced.initialize(rng_);
      rack.unfenced.initialize(rng_);
    }
    shuffle(rack_names_, rng_);
    offset_ = rack_names_.empty() ? 0 : size_t(rng_.uniform(rack_names_.size()));
  }

  size_t total() const { return total_; }
  size_t unfenced() const { return unfenced_; }

  std::vector<NodeId> place(int16_t replication_factor) {
    // After as many placements as unfenced brokers, reshuffle so the same
    // assignments do not repeat (not with one: it would loop for ever).
    if (epoch_ == int32_t(unfenced_) && unfenced_ > 1) {
      shuffle(rack_names_, rng_);
      for (auto& [name, rack] : racks_) {
        rack.fenced.reshuffle(rng_);
        rack.unfenced.reshuffle(rng_);
      }
      epoch_ = 0;
    }
    if (offset_ == rack_names_.size()) offset_ = 0;
    std::vector<NodeId> replicas;
    // The leader: the first rack from offset_ with an unfenced broker left.
    size_t first_rack = offset_;
    while (true) {
      if (auto id = rack(first_rack).next_unfenced(epoch_)) {
        replicas.push_back(*id);
        break;
      }
      first_rack = (first_rack + 1) % rack_names_.size();
    }
    // The others: one per rack going round from offset_, skipping the
    // leader's rack once, fenced brokers when a rack has no unfenced left.
    size_t rack_index = offset_;
    bool skip_leader_rack = true;
    for (int16_t r = 1; r < replication_factor; ++r) {
      std::optional<NodeId> id;
      do {
        if (skip_leader_rack && rack_index == first_rack) {
          skip_leader_rack = false;
        } else {
          id = rack(rack_index).next(epoch_);
        }
        rack_index = (rack_index + 1) % rack_names_.size();
      } while (!id);
      replicas.push_back(*id);
    }
    ++epoch_;
    ++offset_;
    return replicas;
  }

 private:
  Rack& rack(size_t index) { return racks_.at(rack_names_[index]); }

  Rng& rng_;
  std::map<std::optional<std::string>, Rack> racks_;
  std::vector<std::optional<std::string>> rack_names_;
  size_t total_ = 0;
  size_t unfenced_ = 0;
  int32_t epoch_ = 0;
  size_t offset_ = 0;
};

}  // namespace

std::variant<ReplicaAssignment, std::string> place_replicas(const std::vector<UsableBroker>& brokers,
                                                             int32_t partitions, int16_t replication_factor,
                                                             Rng& rng) {
  RackList racks(brokers, rng);
  // Kafka's checks, in Kafka's order and words.
  if (replication_factor <= 0) {
    return "Invalid replication factor " + std::to_string(replication_factor) +
           ": the replication factor must be positive.";
  }
  if (racks.unfenced() == 0) return std::string("All brokers are currently fenced.");
  if (size_t(replication_factor) > racks.total()) {
    return "The target replication factor of " + std::to_string(replication_factor) +
           " cannot be reached because only " + std::to_string(racks.total()) + " broker(s) are registered.";
  }
  ReplicaAssignment out;
  out.reserve(size_t(std::max(partitions, 0)));
  for (int32_t p = 0; p < partitions; ++p) out.push_back(racks.place(replication_factor));
  return out;
}

}  // namespace samsa
