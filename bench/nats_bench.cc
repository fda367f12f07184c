// NATS JetStream on its text protocol: a file-storage stream "BENCH" on
// subjects bench.>, publishes with a reply subject (each answered by a
// JetStream ack once stored), read back through a durable pull consumer
// with ack-all, one ack per batch. Up to --window publishes in flight.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

#include "alt_support.h"

namespace samsa::altbench {
namespace {

struct Msg {
  std::string subject;
  std::string reply;
  std::string_view payload;  // valid until the next read
  bool status = false;       // HMSG without payload: a JetStream status (404, 408)
};

class Nats {
 public:
  Nats(const Args& args) : conn_(args.host, args.port) {
    next_line();  // INFO
    conn_.write_all("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true}\r\n"
                    "SUB _INBOX.bench.> 1\r\n");
  }

  void pub(std::string& out, std::string_view subject, std::string_view reply, std::string_view data) {
    out += "PUB ";
    out += subject;
    out += ' ';
    if (!reply.empty()) {
      out += reply;
      out += ' ';
    }
    out += std::to_string(data.size());
    out += "\r\n";
    out += data;
    out += "\r\n";
  }

  // Request/reply on the API; returns the response payload.
  std::string request(const std::string& subject, const std::string& json) {
    std::string out;
    pub(out, subject, "_INBOX.bench.req", json);
    conn_.write_all(out);
    Msg m;
    while (next_msg(m)) {
      if (m.subject == "_INBOX.bench.req") return std::string(m.payload);
    }
    return "";
  }

  // The next MSG/HMSG, answering PINGs; false at end of stream.
  bool next_msg(Msg& m) {
    for (;;) {
      std::string line = next_line();
      if (line.empty() && closed_) return false;
      if (line == "PING") {
        conn_.write_all("PONG\r\n");
        continue;
      }
      if (line.rfind("-ERR", 0) == 0) {
        std::fprintf(stderr, "samsa-alt-bench: nats: %s\n", line.c_str());
        continue;
      }
      bool headers = line.rfind("HMSG ", 0) == 0;
      if (!headers && line.rfind("MSG ", 0) != 0) continue;  // +OK, PONG, INFO
      std::vector<std::string> tok;
      size_t at = 0;
      while (at < line.size()) {
        size_t sp = line.find(' ', at);
        if (sp == std::string::npos) sp = line.size();
        tok.push_back(line.substr(at, sp - at));
        at = sp + 1;
      }
      // MSG subj sid [reply] size | HMSG subj sid [reply] hdr_size total_size
      size_t total = std::strtoull(tok.back().c_str(), nullptr, 10);
      size_t hdr = headers ? std::strtoull(tok[tok.size() - 2].c_str(), nullptr, 10) : 0;
      size_t fixed = headers ? 5 : 4;
      m.subject = tok[1];
      m.reply = tok.size() > fixed ? tok[3] : "";
      while (conn_.pending().size() < total + 2) {
        if (!conn_.fill()) return false;
      }
      m.payload = conn_.pending().substr(hdr, total - hdr);
      m.status = headers && total == hdr;
      conn_.consume(total + 2);
      return true;
    }
  }

  Conn& conn() { return conn_; }

 private:
  std::string next_line() {
    for (;;) {
      std::string_view p = conn_.pending();
      size_t eol = p.find("\r\n");
      if (eol != std::string_view::npos) {
        std::string line(p.substr(0, eol));
        conn_.consume(eol + 2);
        return line;
      }
      if (!conn_.fill()) {
        closed_ = true;
        return "";
      }
    }
  }

  Conn conn_;
  bool closed_ = false;
};

int produce(const Args& args) {
  Nats nats(args);
  nats.request("$JS.API.STREAM.DELETE.BENCH", "");
  std::string created = nats.request(
      "$JS.API.STREAM.CREATE.BENCH",
      "{\"name\":\"BENCH\",\"subjects\":[\"bench.>\"],\"storage\":\"file\",\"num_replicas\":1,\"retention\":\"limits\"}");
  Result r;
  r.mode = "nats-produce";
  if (created.find("\"error\"") != std::string::npos) {
    r.error = "stream create failed";
    std::fprintf(stderr, "samsa-alt-bench: %s\n", created.c_str());
    print_json(r);
    return 1;
  }
  std::string data = payload(size_t(args.record_size), 3);
  std::deque<int64_t> in_flight;
  std::string out;
  const uint64_t total = uint64_t(args.records);
  uint64_t sent = 0, acked = 0;
  r.latencies_ns.reserve(total);
  int64_t start = now_ns();
  Msg m;
  while (acked < total) {
    out.clear();
    int64_t t = now_ns();
    while (sent < total && in_flight.size() < size_t(args.window) && out.size() < 65536) {
      nats.pub(out, "bench.data", "_INBOX.bench.ack", data);
      in_flight.push_back(t);
      ++sent;
    }
    if (!out.empty()) nats.conn().write_all(out);
    if (!nats.next_msg(m)) break;
    if (m.subject != "_INBOX.bench.ack") continue;
    if (m.payload.find("\"error\"") != std::string_view::npos && r.error.empty()) r.error = std::string(m.payload);
    r.latencies_ns.push_back(now_ns() - in_flight.front());
    in_flight.pop_front();
    ++acked;
  }
  r.seconds = double(now_ns() - start) / 1e9;
  r.records = acked;
  r.bytes = acked * uint64_t(args.record_size);
  print_json(r);
  return r.error.empty() && acked == total ? 0 : 1;
}

int consume(const Args& args) {
  Nats nats(args);
  nats.request("$JS.API.CONSUMER.DELETE.BENCH.c1", "");
  std::string created = nats.request(
      "$JS.API.CONSUMER.DURABLE.CREATE.BENCH.c1",
      "{\"stream_name\":\"BENCH\",\"config\":{\"durable_name\":\"c1\",\"deliver_policy\":\"all\","
      "\"ack_policy\":\"all\",\"max_ack_pending\":1000000}}");
  Result r;
  r.mode = "nats-consume";
  if (created.find("\"error\"") != std::string::npos) {
    r.error = "consumer create failed";
    std::fprintf(stderr, "samsa-alt-bench: %s\n", created.c_str());
    print_json(r);
    return 1;
  }
  const uint64_t total = uint64_t(args.records);
  const int batch = int(std::min<int64_t>(args.window, 10000));
  const std::string pull = "{\"batch\":" + std::to_string(batch) + ",\"expires\":2000000000}";
  std::string out;
  auto request_more = [&] {
    out.clear();
    nats.pub(out, "$JS.API.CONSUMER.MSG.NEXT.BENCH.c1", "_INBOX.bench.pull", pull);
    nats.conn().write_all(out);
  };
  int64_t start = now_ns();
  request_more();
  request_more();  // two pulls in flight: the server never waits for us
  int in_batch = 0;
  Msg m;
  while (r.records < total && nats.next_msg(m)) {
    if (m.subject == "_INBOX.bench.pull" && m.status) {  // a pull ended (timeout / no messages)
      in_batch = 0;
      request_more();
      continue;
    }
    ++r.records;
    r.bytes += m.payload.size();
    if (++in_batch == batch) {
      in_batch = 0;
      out.clear();
      nats.pub(out, m.reply, "", "");  // ack-all up to here
      nats.pub(out, "$JS.API.CONSUMER.MSG.NEXT.BENCH.c1", "_INBOX.bench.pull", pull);
      nats.conn().write_all(out);
    }
  }
  r.seconds = double(now_ns() - start) / 1e9;
  print_json(r);
  return r.records == total ? 0 : 1;
}

}  // namespace

int run_nats(const std::string& mode, const Args& args) {
  if (mode == "nats-produce") return produce(args);
  if (mode == "nats-consume") return consume(args);
  std::fprintf(stderr, "samsa-alt-bench: unknown mode %s\n", mode.c_str());
  return 2;
}

}  // namespace samsa::altbench
