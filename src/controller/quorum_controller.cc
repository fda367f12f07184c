#include "controller/quorum_controller.h"

#include "base/log.h"

namespace samsa {
namespace {

using protocol::ErrorCode;

ControllerError not_controller_error() {
  return ControllerError{ErrorCode::kNotController, "This node is not the active controller."};
}

}  // namespace

Controller::Controller(Runtime& runtime, MetadataLog& log) : runtime_(runtime), log_(log) {
  log_.add_listener(this);
}

Controller::~Controller() {
  *alive_ = false;
  for (auto& [tag, w] : waiting_) {
    if (w.timer != 0) runtime_.cancel_timer(w.timer);
  }
  log_.remove_listener(this);
}

Plan Controller::dry_run(const PlanFn& plan) const {
  if (!active()) return not_controller_error();
  return plan(view());
}

void Controller::submit(std::string what, const PlanFn& plan, int64_t timeout_ms, ControllerDone done) {
  if (!active()) {
    done(not_controller_error());
    return;
  }
  Plan planned = plan(view());
  if (auto* e = std::get_if<ControllerError>(&planned)) {
    done(std::move(*e));
    return;
  }
  auto& records = std::get<std::vector<MetadataRecord>>(planned);
  if (records.empty()) {
    done(std::nullopt);
    return;
  }
  uint64_t tag = next_tag_++;
  if (!projected_) projected_ = log_.image();
  for (const auto& r : records) projected_->apply(r);
  in_flight_.push_back(InFlight{tag, records});
  Waiting& w = waiting_[tag];
  w.what = std::move(what);
  w.done = std::move(done);
  if (timeout_ms > 0) w.timer = runtime_.add_timer(timeout_ms, [this, tag] { on_timeout(tag); });
  log_.propose(tag, std::move(records), [this, tag, alive = alive_](Result<Offset> result) {
    if (*alive) on_proposal_done(tag, result);
  });
}

void Controller::on_committed(Offset, const std::vector<MetadataRecord>&, uint64_t tag) {
  if (in_flight_.empty()) return;  // view() is the log's image
  if (in_flight_.front().tag == tag) {
    in_flight_.pop_front();  // already in the view
    if (in_flight_.empty()) projected_.reset();
    return;
  }
  // Another leader's batch while ours are in flight: leadership moved and
  // ours will not commit after it; the view must not keep them.
  abandon_in_flight();
}

void Controller::on_snapshot(Offset) { abandon_in_flight(); }

void Controller::abandon_in_flight() {
  in_flight_.clear();
  projected_.reset();
}

void Controller::on_proposal_done(uint64_t tag, const Result<Offset>& result) {
  if (result.ok()) {
    complete(tag, std::nullopt);
    return;
  }
  abandon_in_flight();
  if (MetadataLog::is_not_controller(result.error())) {
    complete(tag, not_controller_error());
    return;
  }
  auto it = waiting_.find(tag);
  LOG_ERROR("controller", "metadata commit of {} failed: {}", it == waiting_.end() ? "a change" : it->second.what,
            result.error().to_string());
  complete(tag, ControllerError{ErrorCode::kKafkaStorageError, result.error().message()});
}

void Controller::on_timeout(uint64_t tag) {
  auto it = waiting_.find(tag);
  if (it == waiting_.end()) return;
  it->second.timer = 0;
  LOG_WARN("controller", "{} not committed within the request's timeout", it->second.what);
  complete(tag, ControllerError{ErrorCode::kRequestTimedOut,
                                "The controller did not commit the change within the request's timeout."});
}

void Controller::complete(uint64_t tag, std::optional<ControllerError> outcome) {
  auto it = waiting_.find(tag);
  if (it == waiting_.end()) return;  // timed out earlier
  if (it->second.timer != 0) runtime_.cancel_timer(it->second.timer);
  ControllerDone done = std::move(it->second.done);
  waiting_.erase(it);
  done(std::move(outcome));
}

}  // namespace samsa
