#include "raft/raft_storage.h"

namespace samsa::raft {

Status persist_ready(RaftStorage& storage, const Ready& ready) {
  if (ready.snapshot) RETURN_IF_ERROR(storage.install_snapshot(ready.snapshot));
  if (!ready.entries.empty()) RETURN_IF_ERROR(storage.append(ready.entries));
  if (ready.hard_state) RETURN_IF_ERROR(storage.save_hard_state(*ready.hard_state));
  return storage.sync();
}

}  // namespace samsa::raft
