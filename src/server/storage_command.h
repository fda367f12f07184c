#pragma once
// `samsa storage`: kafka-storage.sh's format and random-uuid.
//
//   samsa storage format --cluster-id ID --config FILE [--ignore-formatted] [--standalone]
//   samsa storage random-uuid
//
// argv[0] is "storage". Exit status: 0 done, 1 refused (the reason on
// stderr, in Kafka's words where Kafka has them), 2 a bad command line.

namespace samsa {

int run_storage(int argc, char** argv);

}  // namespace samsa
