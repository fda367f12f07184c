// Redis Streams on RESP: pipelined `XADD <name> * v <value>` (up to
// --window in flight; durability is the server's appendonly setting), read
// back with `XREAD COUNT n STREAMS <name> <last-id>`, the consumer API.

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#include "alt_support.h"

namespace samsa::altbench {
namespace {

void bulk(std::string& out, std::string_view s) {
  out += '$';
  out += std::to_string(s.size());
  out += "\r\n";
  out += s;
  out += "\r\n";
}

void command(std::string& out, std::initializer_list<std::string_view> parts) {
  out += '*';
  out += std::to_string(parts.size());
  out += "\r\n";
  for (std::string_view p : parts) bulk(out, p);
}

// Skips one complete RESP value at `at`; returns its end, or npos if the
// buffer does not hold all of it yet.
size_t skip(std::string_view b, size_t at) {
  size_t eol = b.find("\r\n", at);
  if (eol == std::string_view::npos) return std::string_view::npos;
  char type = b[at];
  long long n = std::atoll(std::string(b.substr(at + 1, eol - at - 1)).c_str());
  size_t next = eol + 2;
  if (type == '$') {
    if (n < 0) return next;
    return b.size() >= next + size_t(n) + 2 ? next + size_t(n) + 2 : std::string_view::npos;
  }
  if (type == '*') {
    for (long long i = 0; i < n; ++i) {
      next = skip(b, next);
      if (next == std::string_view::npos) return next;
    }
  }
  return next;  // + - :
}

// Reads the header of an aggregate or bulk at `at`: its count/length, and
// moves `at` past the header line.
long long header(std::string_view b, size_t& at) {
  size_t eol = b.find("\r\n", at);
  long long n = std::atoll(std::string(b.substr(at + 1, eol - at - 1)).c_str());
  at = eol + 2;
  return n;
}

std::string_view bulk_at(std::string_view b, size_t& at) {
  long long n = header(b, at);
  std::string_view s = b.substr(at, size_t(n));
  at += size_t(n) + 2;
  return s;
}

int produce(const Args& args) {
  Conn conn(args.host, args.port);
  std::string out;
  command(out, {"DEL", args.name});
  conn.write_all(out);
  while (skip(conn.pending(), 0) == std::string_view::npos) conn.fill();
  conn.consume(skip(conn.pending(), 0));
  std::string data = payload(size_t(args.record_size), 3);
  Result r;
  r.mode = "redis-produce";
  const uint64_t total = uint64_t(args.records);
  std::deque<int64_t> in_flight;
  uint64_t sent = 0, acked = 0;
  r.latencies_ns.reserve(total);
  int64_t start = now_ns();
  while (acked < total) {
    out.clear();
    int64_t t = now_ns();
    while (sent < total && in_flight.size() < size_t(args.window) && out.size() < 65536) {
      command(out, {"XADD", args.name, "*", "v", data});
      in_flight.push_back(t);
      ++sent;
    }
    if (!out.empty()) conn.write_all(out);
    if (!conn.fill()) break;
    for (;;) {
      std::string_view p = conn.pending();
      if (p.empty()) break;
      size_t end = skip(p, 0);
      if (end == std::string_view::npos) break;
      if (p[0] == '-' && r.error.empty()) r.error = std::string(p.substr(1, end - 3));
      conn.consume(end);
      r.latencies_ns.push_back(now_ns() - in_flight.front());
      in_flight.pop_front();
      ++acked;
    }
  }
  r.seconds = double(now_ns() - start) / 1e9;
  r.records = acked;
  r.bytes = acked * uint64_t(args.record_size);
  print_json(r);
  return r.error.empty() && acked == total ? 0 : 1;
}

int consume(const Args& args) {
  Conn conn(args.host, args.port);
  Result r;
  r.mode = "redis-consume";
  const uint64_t total = uint64_t(args.records);
  const std::string count = std::to_string(std::min<int64_t>(args.window * 10, 10000));
  std::string last = "0-0";
  std::string out;
  int64_t start = now_ns();
  while (r.records < total) {
    out.clear();
    command(out, {"XREAD", "COUNT", count, "STREAMS", args.name, last});
    conn.write_all(out);
    size_t end;
    while ((end = skip(conn.pending(), 0)) == std::string_view::npos) {
      if (!conn.fill()) {
        r.error = "connection closed";
        break;
      }
    }
    if (!r.error.empty()) break;
    std::string_view b = conn.pending();
    size_t at = 0;
    if (b[0] != '*' || header(b, at) <= 0) {  // null: nothing (more) to read
      r.error = b[0] == '-' ? std::string(b.substr(1, end - 3)) : "stream ended early";
      conn.consume(end);
      break;
    }
    header(b, at);   // [name, entries]
    bulk_at(b, at);  // name
    long long entries = header(b, at);
    for (long long i = 0; i < entries; ++i) {
      header(b, at);  // [id, fields]
      std::string_view id = bulk_at(b, at);
      long long fields = header(b, at);
      for (long long f = 0; f + 1 < fields; f += 2) {
        bulk_at(b, at);
        r.bytes += bulk_at(b, at).size();
      }
      if (i + 1 == entries) last = std::string(id);
      ++r.records;
    }
    conn.consume(end);
  }
  r.seconds = double(now_ns() - start) / 1e9;
  print_json(r);
  return r.records >= total ? 0 : 1;
}

}  // namespace

int run_redis(const std::string& mode, const Args& args) {
  if (mode == "redis-produce") return produce(args);
  if (mode == "redis-consume") return consume(args);
  std::fprintf(stderr, "samsa-alt-bench: unknown mode %s\n", mode.c_str());
  return 2;
}

}  // namespace samsa::altbench
