#include "io/host_files.h"

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace samsa {

std::string local_host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error("cannot open " + path, errno ? errno : ENOENT);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return errno_error("cannot read " + path, errno ? errno : EIO);
  return ss.str();
}

}  // namespace samsa
