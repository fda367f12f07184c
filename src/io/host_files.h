#pragma once
// The two things configuration needs from the host outside any runtime,
// read once at startup before the runtime exists: this machine's host name
// (Kafka's default advertised host) and the text of a config file. Kept in
// io/ so that the layers above it touch the OS only through io/ (the
// layering test's rule 9).

#include <string>

#include "base/result.h"

namespace samsa {

// gethostname(); "localhost" if it fails or is empty.
std::string local_host_name();

// The whole file; an error that names the path and errno.
Result<std::string> read_text_file(const std::string& path);

}  // namespace samsa
