#pragma once
// Scenario scripts: a hand-written run of a SimCluster, one command per line,
// '#' starts a comment. The invariant checker runs after every event, so a
// script fails on a safety violation as well as on a failed `expect`.
//
// Setup (before `nodes`):  seed S | option pre_vote|check_quorum on|off
//                          option batch N (entries per append) | option snapshot_every N
// Cluster:   nodes N [observers M]
// Time:      tick K            advance K ticks (tick_ms each); events run
// Network:   hold on|off       on: sends wait in a held queue (no delivery)
//            deliver [A->B]    deliver held packets once, in order (filter optional)
//            flush             deliver held packets until none are left
//            drop [A->B]       discard held packets
//            partition 1 2 | 3 4 5   isolate N   block A B (one-way)   heal
//            loss P            drop probability for unheld sends
// Nodes:     crash N | restart N | campaign N
//            put N KEY VALUE   propose a write on node N (must be accepted)
//            put? N KEY VALUE  propose; refusal allowed
//            put-leader KEY VALUE  propose on the current leader
// Checks:    expect leader N | expect leader-among A B ... | expect no-leader
//            expect role N leader|follower|candidate|precandidate
//            expect term N [OP] T | expect vote N [OP] V | expect last N [OP] I
//            expect entry N I T
//            expect commit N [OP] V   (OP is == >= <= < >, default ==)
//            expect value N KEY [OP] V   (node N's applied key-value state)
//            expect trace TEXT      a trace line since the last `expect trace` contains
//                                   TEXT (the script's own echoed lines do not count)

#include <string>
#include <vector>

namespace samsa::sim {

struct ScenarioResult {
  bool ok = true;
  std::string error;  // "line N: why"
  std::vector<std::string> trace;
};

ScenarioResult run_scenario(const std::string& script);
// Runs a script file, prints its trace and the verdict; true if it passed.
bool run_scenario_file(const char* path);

}  // namespace samsa::sim
