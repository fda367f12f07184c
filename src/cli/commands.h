#pragma once
// Entry points of the `samsa` subcommands implemented in this library. Each
// takes the arguments after `samsa`, so argv[0] is the subcommand's own name
// ("topic"), and returns the process exit status: 0 success, 1 a run-time
// failure (printed to stderr), 2 a command line that could not be parsed.
//
// The dispatcher (samsa_main.cc) keeps the table of subcommands; a new one
// is a function here plus one row there.

namespace samsa::cli {

int run_topic(int argc, char** argv);
int run_produce(int argc, char** argv);
int run_consume(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_group(int argc, char** argv);
int run_dump_log(int argc, char** argv);
int run_cluster(int argc, char** argv);
int run_election(int argc, char** argv);
int run_dev(int argc, char** argv);

}  // namespace samsa::cli
