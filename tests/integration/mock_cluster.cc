// samsa_mock_cluster: runs librdkafka's in-memory mock cluster
// (rdkafka_mock.h) as a process, so tests can drive the real `samsa` CLI,
// kcat and client programs against a reference peer over TCP before (and
// independently of) the Samsa broker.
//
// Usage: samsa_mock_cluster [--brokers N] [--topic NAME:PARTITIONS]... [--lifetime-s S]
// Prints the bootstrap servers on the first line of stdout, then serves until
// stdin reaches EOF, SIGTERM/SIGINT, or the lifetime (default 600 s) ends.
// The mock does not implement the topic admin APIs; topics are created here.

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

int usage() {
  std::fputs("usage: samsa_mock_cluster [--brokers N] [--topic NAME:PARTITIONS]... [--lifetime-s S]\n",
             stderr);
  return 2;
}

// True once stdin is closed (the parent went away or asked us to stop).
bool stdin_closed() {
  pollfd pfd{0, POLLIN, 0};
  if (poll(&pfd, 1, 0) <= 0) return false;
  char buf[256];
  return read(0, buf, sizeof buf) <= 0;
}

}  // namespace

int main(int argc, char** argv) {
  int brokers = 1;
  long lifetime_s = 600;
  std::vector<std::pair<std::string, int>> topics;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    std::string value = argv[++i];
    if (arg == "--brokers") {
      brokers = std::atoi(value.c_str());
    } else if (arg == "--lifetime-s") {
      lifetime_s = std::atol(value.c_str());
    } else if (arg == "--topic") {
      size_t colon = value.rfind(':');
      if (colon == std::string::npos) return usage();
      topics.emplace_back(value.substr(0, colon), std::atoi(value.c_str() + colon + 1));
    } else {
      return usage();
    }
  }
  if (brokers < 1 || lifetime_s < 1) return usage();

  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // This handle only hosts the mock; it never connects, so silence its
  // "no bootstrap.servers" notice.
  rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof errstr);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (rk == nullptr) {
    std::fprintf(stderr, "samsa_mock_cluster: %s\n", errstr);
    return 1;
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(rk, brokers);
  if (cluster == nullptr) {
    std::fputs("samsa_mock_cluster: cannot create the mock cluster\n", stderr);
    return 1;
  }
  for (const auto& [name, partitions] : topics) {
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster, name.c_str(), partitions, 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::fprintf(stderr, "samsa_mock_cluster: topic %s: %s\n", name.c_str(), rd_kafka_err2str(err));
      return 1;
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::printf("%s\n", rd_kafka_mock_cluster_bootstraps(cluster));
  std::fflush(stdout);

  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(lifetime_s);
  while (g_stop == 0 && !stdin_closed() && std::chrono::steady_clock::now() < deadline) {
    usleep(50 * 1000);
  }
  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(rk);
  return 0;
}
