#include "cli/kafka_client.h"

#include <cstdio>

namespace samsa::cli {

void ClientOptions::add_to(ArgParser& parser) {
  parser.add_string("bootstrap-server", 'b', "HOST:PORT",
                    std::string("Broker to connect to (default ") + kDefaultBootstrap + ")",
                    &bootstrap_server);
  parser.add_list("property", 'X', "KEY=VALUE",
                  "librdkafka client property, e.g. -X debug=broker", &properties);
}

Status set_property(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char errstr[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof errstr) !=
      RD_KAFKA_CONF_OK) {
    return Error(ErrorKind::kInvalidArgument, "client property " + key + ": " + errstr);
  }
  return ok_status();
}

Result<std::pair<std::string, std::string>> split_key_value(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Error(ErrorKind::kInvalidArgument, "expected KEY=VALUE, got '" + text + "'");
  }
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

Result<ConfPtr> make_conf(const ClientOptions& options,
                          const std::vector<std::pair<std::string, std::string>>& defaults) {
  ConfPtr conf(rd_kafka_conf_new());
  RETURN_IF_ERROR(set_property(conf.get(), "bootstrap.servers", options.bootstrap_server));
  // A command-line tool should report a dead broker, not retry forever in
  // silence: librdkafka logs connection failures to stderr by default.
  RETURN_IF_ERROR(set_property(conf.get(), "client.id", "samsa-cli"));
  for (const auto& [key, value] : defaults) {
    RETURN_IF_ERROR(set_property(conf.get(), key, value));
  }
  for (const std::string& property : options.properties) {
    ASSIGN_OR_RETURN(auto kv, split_key_value(property));
    RETURN_IF_ERROR(set_property(conf.get(), kv.first, kv.second));
  }
  return conf;
}

Result<HandlePtr> make_client(rd_kafka_type_t type, ConfPtr conf) {
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), errstr, sizeof errstr);
  if (rk == nullptr) return Error(ErrorKind::kInvalidArgument, errstr);
  (void)conf.release();  // rd_kafka_new took ownership on success
  return HandlePtr(rk);
}

Result<MetadataPtr> fetch_metadata(rd_kafka_t* rk, int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Error(err == RD_KAFKA_RESP_ERR__TIMED_OUT ? ErrorKind::kTimedOut : ErrorKind::kIo,
                 std::string("cannot fetch metadata: ") + rd_kafka_err2str(err));
  }
  return MetadataPtr(md);
}

Result<EventPtr> wait_admin_result(rd_kafka_queue_t* queue, int timeout_ms) {
  // The admin request itself times out after timeout_ms; the extra second
  // lets its timeout result arrive instead of our own.
  EventPtr event(rd_kafka_queue_poll(queue, timeout_ms + 1000));
  if (!event) return Error(ErrorKind::kTimedOut, "timed out waiting for the broker");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Error(ErrorKind::kIo, rd_kafka_event_error_string(event.get()));
  }
  return event;
}

Result<AdminOptionsPtr> make_admin_options(rd_kafka_t* rk, rd_kafka_admin_op_t op,
                                           int timeout_ms) {
  AdminOptionsPtr options(rd_kafka_AdminOptions_new(rk, op));
  char errstr[512];
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), timeout_ms, errstr,
                                                sizeof errstr) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Error(ErrorKind::kInvalidArgument, errstr);
  }
  if (op == RD_KAFKA_ADMIN_OP_CREATETOPICS || op == RD_KAFKA_ADMIN_OP_DELETETOPICS) {
    // Wait for the topic change to be complete on the controller, so a
    // script can use the topic right after the command returns.
    if (rd_kafka_AdminOptions_set_operation_timeout(options.get(), timeout_ms, errstr,
                                                    sizeof errstr) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Error(ErrorKind::kInvalidArgument, errstr);
    }
  }
  return options;
}

int report_failure(const char* command, const std::string& message) {
  std::fprintf(stderr, "samsa %s: %s\n", command, message.c_str());
  return 1;
}

}  // namespace samsa::cli
