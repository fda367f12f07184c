#include "base/result.h"

#include <cstring>

namespace samsa {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kIo: return "io";
    case ErrorKind::kNoSpace: return "no-space";
    case ErrorKind::kCorrupt: return "corrupt";
    case ErrorKind::kInvalidArgument: return "invalid-argument";
    case ErrorKind::kNotFound: return "not-found";
    case ErrorKind::kAlreadyExists: return "already-exists";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kTimedOut: return "timed-out";
    case ErrorKind::kClosed: return "closed";
  }
  return "unknown";
}

std::string Error::to_string() const {
  return std::string(samsa::to_string(kind_)) + ": " + message_;
}

Error errno_error(const std::string& what, int err) {
  ErrorKind kind = ErrorKind::kIo;
  if (err == ENOSPC || err == EDQUOT) kind = ErrorKind::kNoSpace;
  if (err == ENOENT) kind = ErrorKind::kNotFound;
  if (err == EEXIST) kind = ErrorKind::kAlreadyExists;
  return Error(kind, what + ": " + std::strerror(err));
}

}  // namespace samsa
