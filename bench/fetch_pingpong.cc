// samsa-alt-bench pingpong-sendfile | pingpong-copy: what a fetch response
// costs the client, by how the server sends it.
//
// A client thread sends a 64-byte request and reads a --record-size (1 MiB)
// response, --records times; a server thread answers each either with
// sendfile from a cached 256 MiB file (as Samsa serves segments) or with a
// memcpy from a 256 MiB pool into a buffer and a write (as a broker that
// copies would). Client and server threads run on different CPUs. Prints
// the round-trip time and the CPU time of each thread (kernel work done in
// the thread's context included). On loopback the copy leaves the data in
// the shared CPU cache for the client's recv; sendfile hands the client
// pages it reads from memory: the null broker must send the way Samsa does
// to be a fair ceiling.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "alt_support.h"

namespace samsa::altbench {
namespace {

constexpr size_t kPoolBytes = size_t(256) << 20;
constexpr size_t kRequestBytes = 64;

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

bool read_exactly(int fd, char* dst, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t k = ::recv(fd, dst + got, n - got, 0);
    if (k <= 0) return false;
    got += size_t(k);
  }
  return true;
}

bool write_all(int fd, const char* src, size_t n) {
  for (size_t put = 0; put < n;) {
    ssize_t k = ::send(fd, src + put, n - put, MSG_NOSIGNAL);
    if (k <= 0) return false;
    put += size_t(k);
  }
  return true;
}

// A cached file of kPoolBytes in the temporary directory, already unlinked.
int cached_pool_file() {
  char path[] = "/tmp/samsa-pingpong-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) return -1;
  ::unlink(path);
  std::string chunk = payload(1 << 20, 3);
  for (size_t at = 0; at < kPoolBytes; at += chunk.size()) {
    if (::pwrite(fd, chunk.data(), chunk.size(), off_t(at)) != ssize_t(chunk.size())) return -1;
  }
  return fd;
}

struct ServerFigures {
  double cpu_s = 0;
  bool ok = false;
};

void serve(int listen_fd, bool use_sendfile, size_t response, int64_t rounds, int cpu, ServerFigures& out) {
  pin_to(cpu);
  int fd = ::accept(listen_fd, nullptr, nullptr);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int file = use_sendfile ? cached_pool_file() : -1;
  std::vector<char> pool(use_sendfile ? 0 : kPoolBytes, 'x');
  std::vector<char> reply(use_sendfile ? 0 : response);
  char request[kRequestBytes];
  size_t at = 0;
  double start = thread_cpu_s();
  out.ok = !use_sendfile || file >= 0;
  for (int64_t i = 0; out.ok && i < rounds; ++i) {
    if (!read_exactly(fd, request, sizeof request)) break;
    if (at + response > kPoolBytes) at = 0;
    if (use_sendfile) {
      off_t offset = off_t(at);
      for (size_t left = response; left > 0 && out.ok;) {
        ssize_t k = ::sendfile(fd, file, &offset, left);
        out.ok = k > 0;
        left -= out.ok ? size_t(k) : 0;
      }
    } else {
      std::memcpy(reply.data(), pool.data() + at, response);
      out.ok = write_all(fd, reply.data(), response);
    }
    at += response;
  }
  out.cpu_s = thread_cpu_s() - start;
  if (file >= 0) ::close(file);
  ::close(fd);
}

}  // namespace

int run_fetch_pingpong(const std::string& mode, const Args& args) {
  const bool use_sendfile = mode == "pingpong-sendfile";
  const size_t response = size_t(args.record_size);
  if (response > kPoolBytes) {
    std::fprintf(stderr, "samsa-alt-bench: --record-size must be at most %zu\n", kPoolBytes);
    return 2;
  }
  int port = 0;
  int lfd = listen_on_loopback(port, mode.c_str());
  if (lfd < 0) return 1;
  int cpus = int(std::thread::hardware_concurrency());
  ServerFigures server;
  // One more round than timed: the first waits for the server's pool.
  std::thread serving(serve, lfd, use_sendfile, response, args.records + 1, cpus > 1 ? cpus - 1 : 0,
                      std::ref(server));
  pin_to(0);
  Conn c("127.0.0.1", port);
  std::vector<char> buf(response);
  char request[kRequestBytes] = {};
  c.write_all(std::string_view(request, sizeof request));
  bool warm = read_exactly(c.fd(), buf.data(), response);
  int64_t rounds = 0;
  double cpu_start = thread_cpu_s();
  int64_t start = now_ns();
  for (; warm && rounds < args.records; ++rounds) {
    c.write_all(std::string_view(request, sizeof request));
    if (!read_exactly(c.fd(), buf.data(), response)) break;
  }
  double seconds = double(now_ns() - start) / 1e9;
  double client_cpu = thread_cpu_s() - cpu_start;
  serving.join();
  ::close(lfd);
  std::printf("{\"mode\":\"%s\",\"records\":%lld,\"bytes\":%llu,\"seconds\":%.6f,\"mb_per_sec\":%.1f,"
              "\"round_us\":%.1f,\"client_cpu_s\":%.3f,\"server_cpu_s\":%.3f}\n",
              mode.c_str(), (long long)rounds, (unsigned long long)(uint64_t(rounds) * response), seconds,
              double(rounds) * double(response) / seconds / 1e6, seconds / double(rounds) * 1e6, client_cpu,
              server.cpu_s);
  return rounds == args.records && server.ok ? 0 : 1;
}

}  // namespace samsa::altbench
