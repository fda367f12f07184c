#pragma once
// A recorded history (the chaos suite's JSONL file, docs/testing.md "History
// files") fed into LogHistory, so real-process runs are judged by the same
// rules as the simulator's. One JSON object a line; parse_history_line reads
// one and apply_history_event feeds it to the checker.
//
// The JSON reader accepts only what the format needs (objects, arrays,
// strings with the escapes JSON allows, integers, true/false/null) and checks
// every length against written limits: a history is test input, but a
// truncated or garbled line must be an error, never a crash.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "testing/log_history.h"

namespace samsa::sim {

// Limits on one line (a full read of a partition is one line).
inline constexpr size_t kMaxHistoryLineBytes = 64 * 1024 * 1024;
inline constexpr size_t kMaxHistoryRecords = 1'000'000;
inline constexpr int kMaxJsonDepth = 8;

struct HistoryEvent {
  enum class Type {
    kConfig,    // first line only: {"type":"config","fsync_every_message":false}
    kSent,      // a produce attempt: partition, values
    kAck,       // acknowledged: partition, offset (base; null: not known), values
    kError,     // the attempt failed or timed out: outcome unknown, not judged
    kFetch,     // a read: partition, offset (fetch offset), high_watermark, records
    kFullRead,  // the whole log from offset 0: partition, records (LogHistory::recovered)
    kCrash,     // kind: "process" (kill -9) or "power_loss"
    kResumed,   // every partition read back after the crash
    kCorrupt,   // partition, detail
    kFault,     // the fault timeline (pause, cut, heal...): recorded, not judged
    kNote,      // anything else worth keeping (a client error...): not judged
  };
  Type type = Type::kFault;
  std::string partition;
  std::vector<std::string> values;
  int64_t offset = 0;
  // An acknowledgement without an offset ("offset": null): librdkafka's
  // idempotent producer reports a message persisted with offset -1 when a
  // later message's answer proves it was written but its own was lost.
  bool offset_known = true;
  // A fetch's high watermark; absent (null) when the client did not know it:
  // then the end of what it read is used, which judges nothing above it.
  std::optional<int64_t> high_watermark;
  std::vector<ReadRecord> records;
  CrashKind crash_kind = CrashKind::kProcess;
  bool fsync_every_message = false;
  std::string detail;
};

// Parses one non-empty line.
Result<HistoryEvent> parse_history_line(std::string_view line);

// Feeds one event to `history` (a config event is the caller's: it decides
// how LogHistory is constructed).
void apply_history_event(const HistoryEvent& event, LogHistory& history);

// Judges a whole history text (lines; blank lines skipped): the checker, or
// the first parse error with its line number.
struct HistoryVerdict {
  std::vector<Violation> violations;
  size_t events = 0;
  size_t acknowledged_records = 0;
};
Result<HistoryVerdict> check_history(std::string_view text);

}  // namespace samsa::sim
