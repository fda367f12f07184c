// rdkafka_roundtrip: produces N records with known content across P
// partitions through librdkafka, consumes them back by partition assignment
// (no group) and verifies exact content, offsets and per-partition order.
//
// Record i goes to partition p = i % P as the s = i / P-th record of that
// partition: key "k-<p>-<s>", value "v-<p>-<s>-" padded to --value-bytes with
// letters derived from (p, s). On a fresh topic record s sits at offset s, and
// the partition's high watermark is its record count (no extras, no holes).
//
// Modes: produce (every record acknowledged, acks=all), consume (verify),
// both. `--create` makes the topic with CreateTopics first (an existing topic
// is fine). Every wait is bounded by --timeout-s. Exit 0 on success; 1 with a
// message on stderr on any failure or mismatch; 2 on a bad command line.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string bootstrap;
  std::string topic;
  std::string mode = "both";
  std::string compression = "none";
  int partitions = 4;
  long records = 100000;
  int value_bytes = 100;
  int timeout_s = 120;
  bool create = false;
};

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "rdkafka_roundtrip: FAIL: %s\n", message.c_str());
  std::exit(1);
}

std::string key_of(int p, long s) { return "k-" + std::to_string(p) + "-" + std::to_string(s); }

std::string value_of(int p, long s, int value_bytes) {
  std::string v = "v-" + std::to_string(p) + "-" + std::to_string(s) + "-";
  for (long j = 0; static_cast<int>(v.size()) < value_bytes; ++j) {
    v.push_back(static_cast<char>('a' + (p * 31 + s * 7 + j) % 26));
  }
  return v;
}

long records_in(const Options& o, int p) {
  return o.records / o.partitions + (p < o.records % o.partitions ? 1 : 0);
}

rd_kafka_conf_t* base_conf(const Options& o) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  auto set = [&](const char* k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k, v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      fail(std::string("config ") + k + ": " + errstr);
    }
  };
  set("bootstrap.servers", o.bootstrap);
  set("client.id", "rdkafka_roundtrip");
  return conf;
}

rd_kafka_t* new_client(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (rk == nullptr) fail(std::string("rd_kafka_new: ") + errstr);
  return rk;
}

void create_topic(const Options& o) {
  rd_kafka_t* rk = new_client(RD_KAFKA_PRODUCER, base_conf(o));
  char errstr[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(o.topic.c_str(), o.partitions, 1, errstr, sizeof errstr);
  if (nt == nullptr) fail(errstr);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(opts, o.timeout_s * 1000, errstr, sizeof errstr);
  rd_kafka_AdminOptions_set_request_timeout(opts, o.timeout_s * 1000, errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk, &nt, 1, opts, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, o.timeout_s * 1000 + 1000);
  if (ev == nullptr) fail("CreateTopics: no result in time");
  if (rd_kafka_event_error(ev)) fail(std::string("CreateTopics: ") + rd_kafka_event_error_string(ev));
  size_t n = 0;
  const rd_kafka_topic_result_t** res =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(res[i]);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      fail(std::string("CreateTopics: ") + rd_kafka_err2name(err) + ": " +
           (rd_kafka_topic_result_error_string(res[i]) ?: ""));
    }
  }
  rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
}

struct Delivery {
  long acked = 0;
  long failed = 0;
  std::string first_error;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* d = static_cast<Delivery*>(opaque);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++d->acked;
  } else if (d->failed++ == 0) {
    d->first_error = std::string(rd_kafka_err2name(m->err)) + ": " + rd_kafka_message_errstr(m);
  }
}

void produce(const Options& o) {
  rd_kafka_conf_t* conf = base_conf(o);
  char errstr[512];
  rd_kafka_conf_set(conf, "acks", "all", errstr, sizeof errstr);
  if (rd_kafka_conf_set(conf, "compression.codec", o.compression.c_str(), errstr, sizeof errstr) !=
      RD_KAFKA_CONF_OK) {
    fail(errstr);
  }
  rd_kafka_conf_set(conf, "message.timeout.ms", std::to_string(o.timeout_s * 1000).c_str(), errstr,
                    sizeof errstr);
  Delivery delivery;
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_opaque(conf, &delivery);
  rd_kafka_t* rk = new_client(RD_KAFKA_PRODUCER, conf);
  auto start = Clock::now();
  for (long i = 0; i < o.records; ++i) {
    int p = static_cast<int>(i % o.partitions);
    long s = i / o.partitions;
    std::string key = key_of(p, s);
    std::string value = value_of(p, s, o.value_bytes);
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(o.topic.c_str()), RD_KAFKA_V_PARTITION(p),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key.data(), key.size()),
          RD_KAFKA_V_VALUE(value.data(), value.size()), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) fail(std::string("produce: ") + rd_kafka_err2str(err));
      rd_kafka_poll(rk, 50);
    }
    rd_kafka_poll(rk, 0);
  }
  rd_kafka_flush(rk, o.timeout_s * 1000 + 5000);
  if (delivery.failed > 0) {
    fail(std::to_string(delivery.failed) + " records not delivered; first: " + delivery.first_error);
  }
  if (delivery.acked != o.records) {
    fail("only " + std::to_string(delivery.acked) + " of " + std::to_string(o.records) +
         " records acknowledged in time");
  }
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("produced %ld records to %d partitions in %.2f s\n", o.records, o.partitions, secs);
  rd_kafka_destroy(rk);
}

void check_message(const Options& o, const rd_kafka_message_t* m, long expected_seq) {
  int p = m->partition;
  std::string where = "partition " + std::to_string(p) + " offset " + std::to_string(m->offset);
  if (m->offset != expected_seq) {
    fail(where + ": expected offset " + std::to_string(expected_seq));
  }
  std::string key = key_of(p, expected_seq);
  std::string value = value_of(p, expected_seq, o.value_bytes);
  std::string got_key(static_cast<const char*>(m->key ? m->key : ""), m->key ? m->key_len : 0);
  std::string got_value(static_cast<const char*>(m->payload ? m->payload : ""), m->payload ? m->len : 0);
  if (m->key == nullptr || got_key != key) fail(where + ": key '" + got_key + "', expected '" + key + "'");
  if (got_value != value) {
    fail(where + ": value '" + got_value.substr(0, 40) + "...' differs from expected '" +
         value.substr(0, 40) + "...'");
  }
}

void check_watermarks(const Options& o, rd_kafka_t* rk) {
  for (int p = 0; p < o.partitions; ++p) {
    int64_t low = -1, high = -1;
    rd_kafka_resp_err_t err =
        rd_kafka_query_watermark_offsets(rk, o.topic.c_str(), p, &low, &high, o.timeout_s * 1000);
    if (err) fail("watermarks of partition " + std::to_string(p) + ": " + rd_kafka_err2str(err));
    if (low != 0 || high != records_in(o, p)) {
      fail("partition " + std::to_string(p) + " has offsets [" + std::to_string(low) + ", " +
           std::to_string(high) + "), expected [0, " + std::to_string(records_in(o, p)) + ")");
    }
  }
}

void consume(const Options& o) {
  rd_kafka_conf_t* conf = base_conf(o);
  char errstr[512];
  // Needed by librdkafka's consumer even for assign(); never joined.
  rd_kafka_conf_set(conf, "group.id", "rdkafka_roundtrip", errstr, sizeof errstr);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr);
  rd_kafka_conf_set(conf, "enable.auto.offset.store", "false", errstr, sizeof errstr);
  rd_kafka_t* rk = new_client(RD_KAFKA_CONSUMER, conf);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(o.partitions);
  for (int p = 0; p < o.partitions; ++p) {
    rd_kafka_topic_partition_list_add(parts, o.topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  if (rd_kafka_assign(rk, parts)) fail("assign failed");
  rd_kafka_topic_partition_list_destroy(parts);

  std::vector<long> seen(o.partitions, 0);
  long total = 0;
  auto start = Clock::now();
  auto last_progress = start;
  while (total < o.records) {
    if (Clock::now() - last_progress > std::chrono::seconds(o.timeout_s)) {
      std::string counts;
      for (int p = 0; p < o.partitions; ++p) {
        counts += " p" + std::to_string(p) + "=" + std::to_string(seen[p]) + "/" +
                  std::to_string(records_in(o, p));
      }
      fail("no progress for " + std::to_string(o.timeout_s) + " s; consumed" + counts);
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      rd_kafka_message_destroy(m);
      continue;
    }
    if (m->err) fail(std::string("consume: ") + rd_kafka_err2name(m->err) + ": " + rd_kafka_message_errstr(m));
    int p = m->partition;
    if (p < 0 || p >= o.partitions) fail("record from unexpected partition " + std::to_string(p));
    if (seen[p] >= records_in(o, p)) fail("partition " + std::to_string(p) + " has extra records");
    check_message(o, m, seen[p]);
    ++seen[p];
    ++total;
    last_progress = Clock::now();
    rd_kafka_message_destroy(m);
  }
  check_watermarks(o, rk);
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("verified %ld records in %d partitions in %.2f s\n", total, o.partitions, secs);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

int usage() {
  std::fputs(
      "usage: rdkafka_roundtrip --bootstrap HOST:PORT --topic T [--partitions P] [--records N]\n"
      "         [--mode produce|consume|both] [--create] [--compression CODEC]\n"
      "         [--value-bytes B] [--timeout-s S]\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--create") {
      o.create = true;
      continue;
    }
    if (i + 1 >= argc) return usage();
    std::string v = argv[++i];
    if (arg == "--bootstrap") o.bootstrap = v;
    else if (arg == "--topic") o.topic = v;
    else if (arg == "--mode") o.mode = v;
    else if (arg == "--compression") o.compression = v;
    else if (arg == "--partitions") o.partitions = std::atoi(v.c_str());
    else if (arg == "--records") o.records = std::atol(v.c_str());
    else if (arg == "--value-bytes") o.value_bytes = std::atoi(v.c_str());
    else if (arg == "--timeout-s") o.timeout_s = std::atoi(v.c_str());
    else return usage();
  }
  if (o.bootstrap.empty() || o.topic.empty() || o.partitions < 1 || o.records < 0 ||
      o.timeout_s < 1 || (o.mode != "produce" && o.mode != "consume" && o.mode != "both")) {
    return usage();
  }
  if (o.create) create_topic(o);
  if (o.mode != "consume") produce(o);
  if (o.mode != "produce") consume(o);
  return 0;
}
