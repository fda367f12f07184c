#pragma once
// Helpers shared by the subcommands that talk to a broker through
// librdkafka: the common options (--bootstrap-server, -X key=value), RAII
// owners for librdkafka handles, and a bounded wait for admin results.
//
// Ownership: every librdkafka object is owned by a unique_ptr with the
// matching destroy function; a handle outlives the queues and events made
// from it (declare the handle first so it is destroyed last).

#include <librdkafka/rdkafka.h>

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/arg_parser.h"

namespace samsa::cli {

inline constexpr const char* kDefaultBootstrap = "127.0.0.1:9092";

struct ClientOptions {
  std::string bootstrap_server = kDefaultBootstrap;
  // librdkafka configuration properties given as "key=value" (-X).
  std::vector<std::string> properties;

  void add_to(ArgParser& parser);
};

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* ev) const { rd_kafka_event_destroy(ev); }
};
struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* md) const { rd_kafka_metadata_destroy(md); }
};
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;
using EventPtr = std::unique_ptr<rd_kafka_event_t, EventDeleter>;
using MetadataPtr = std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter>;

// Sets one property; the error names the key.
Status set_property(rd_kafka_conf_t* conf, const std::string& key, const std::string& value);

// A configuration with bootstrap.servers, then `defaults` (key, value pairs
// the command prefers), then the user's -X properties, which win.
Result<ConfPtr> make_conf(const ClientOptions& options,
                          const std::vector<std::pair<std::string, std::string>>& defaults);

// Creates a client, taking ownership of `conf` (consumed even on failure).
Result<HandlePtr> make_client(rd_kafka_type_t type, ConfPtr conf);

// Fetches metadata for all topics within `timeout_ms`.
Result<MetadataPtr> fetch_metadata(rd_kafka_t* rk, int timeout_ms);

// Waits (bounded by timeout_ms) for the next event on `queue`, the result of
// an admin call, and checks its request-level error.
Result<EventPtr> wait_admin_result(rd_kafka_queue_t* queue, int timeout_ms);

// Admin options with request and operation timeouts set.
struct AdminOptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
using AdminOptionsPtr = std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter>;
Result<AdminOptionsPtr> make_admin_options(rd_kafka_t* rk, rd_kafka_admin_op_t op, int timeout_ms);

// Splits "key=value" at the first '='; fails if there is none or the key is empty.
Result<std::pair<std::string, std::string>> split_key_value(const std::string& text);

// Prints "samsa <command>: <message>" to stderr and returns 1, the exit
// status of a command that failed at run time.
int report_failure(const char* command, const std::string& message);

}  // namespace samsa::cli
