#pragma once
// Tests only: commit metadata records on a broker that is its own
// single-node controller, as the controller would, and wait for nothing —
// the single node's log commits before submit_change returns.

#include <optional>
#include <string>
#include <vector>

#include "broker/broker.h"

namespace samsa::test {

// The error, if the records did not commit (or did not answer at once).
inline std::optional<std::string> commit_now(Broker& broker, std::vector<MetadataRecord> records) {
  bool answered = false;
  std::optional<ControllerError> failed;
  broker.submit_change(
      "a test's records", [records](const MetadataImage&) { return Plan(records); }, 0,
      [&](std::optional<ControllerError> outcome) {
        answered = true;
        failed = std::move(outcome);
      });
  if (!answered) return "the commit did not answer at once";
  if (failed) return failed->message;
  return std::nullopt;
}

}  // namespace samsa::test
