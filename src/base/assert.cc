#include "base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace samsa::detail {

void assert_failed(const char* condition, const char* file, int line, const char* message) {
  std::fprintf(stderr, "ASSERT failed: %s at %s:%d%s%s\n", condition, file, line,
               message ? ": " : "", message ? message : "");
  std::fflush(stderr);
  std::abort();
}

}  // namespace samsa::detail
