#pragma once
// CrashKind: how a simulated host goes down. One definition for the world
// that crashes hosts (sim_world.h) and the checkers that judge what a crash
// may lose (log_history.h).

namespace samsa::sim {

enum class CrashKind {
  kProcess,    // kill -9: the page cache survives, nothing written is lost
  kPowerLoss,  // the disk keeps only what was made durable (plus what the Rng spares)
};

}  // namespace samsa::sim
