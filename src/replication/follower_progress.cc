#include "replication/follower_progress.h"

#include <algorithm>

namespace samsa::replication {

void FollowerProgress::on_fetch(Offset fetch_offset, Offset log_start, int64_t fetch_time_ms, Offset leader_log_end,
                                BrokerEpoch broker_epoch) {
  if (fetch_offset >= leader_log_end) {
    // It has everything the leader had when it asked.
    last_caught_up_time_ms_ = std::max(last_caught_up_time_ms_.value_or(fetch_time_ms), fetch_time_ms);
  } else if (fetch_offset >= last_fetch_leader_log_end_ && last_fetch_time_ms_) {
    // It has everything the leader had at its previous fetch: it was caught
    // up as of that fetch.
    last_caught_up_time_ms_ = std::max(last_caught_up_time_ms_.value_or(*last_fetch_time_ms_), *last_fetch_time_ms_);
  }
  log_end_ = fetch_offset;
  log_start_ = log_start;
  last_fetch_leader_log_end_ = std::max(leader_log_end, last_fetch_leader_log_end_);
  last_fetch_time_ms_ = fetch_time_ms;
  broker_epoch_ = broker_epoch;
}

void FollowerProgress::reset(int64_t now_ms, Offset leader_log_end, bool new_leader, bool in_isr) {
  last_caught_up_time_ms_ = in_isr ? std::optional<int64_t>(now_ms) : std::nullopt;
  if (new_leader) {
    log_end_.reset();
    log_start_ = kNoOffset;
    last_fetch_leader_log_end_ = kNoOffset;
    last_fetch_time_ms_.reset();
    broker_epoch_.reset();
  } else {
    last_fetch_leader_log_end_ = leader_log_end;
    // Outside the ISR, the next fetch must prove it caught up afresh.
    last_fetch_time_ms_ = in_isr ? std::optional<int64_t>(now_ms) : std::nullopt;
  }
}

bool FollowerProgress::is_caught_up(Offset leader_log_end, int64_t now_ms, int64_t max_lag_ms) const {
  return (log_end_ && *log_end_ == leader_log_end) ||
         (last_caught_up_time_ms_ && now_ms - *last_caught_up_time_ms_ <= max_lag_ms);
}

}  // namespace samsa::replication
