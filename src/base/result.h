#pragma once
// Result<T>: the value of an operation that can fail in an expected way
// (I/O error, corrupt data, invalid input). Bugs are ASSERTs, not Results.
// Kafka error codes are a separate type (protocol/error_code.h) that only
// appears in responses.

#include <string>
#include <utility>
#include <variant>

#include "base/assert.h"

namespace samsa {

enum class ErrorKind {
  kIo,              // the OS refused (errno in message)
  kNoSpace,         // ENOSPC
  kCorrupt,         // bytes fail a CRC, a length or a magic check
  kInvalidArgument, // caller-supplied value out of range
  kNotFound,
  kAlreadyExists,
  kUnsupported,
  kTimedOut,
  kClosed,
};

const char* to_string(ErrorKind kind);

class Error {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

 private:
  ErrorKind kind_;
  std::string message_;
};

// Builds an Error from errno, naming what was being done ("open /x/y").
Error errno_error(const std::string& what, int err);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(implicit)
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(implicit)

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    ASSERT_MSG(ok(), std::get<1>(state_).message().c_str());
    return std::get<0>(state_);
  }
  const T& value() const& {
    ASSERT_MSG(ok(), std::get<1>(state_).message().c_str());
    return std::get<0>(state_);
  }
  T&& value() && {
    ASSERT_MSG(ok(), std::get<1>(state_).message().c_str());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    ASSERT(!ok());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT(implicit)

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    ASSERT(failed_);
    return error_;
  }

 private:
  Error error_{ErrorKind::kIo, {}};
  bool failed_ = false;
};

using Status = Result<void>;

inline Status ok_status() { return {}; }

}  // namespace samsa

// Propagates a failed Status/Result out of the calling function.
#define RETURN_IF_ERROR(expr)                       \
  do {                                              \
    auto samsa_status_ = (expr);                    \
    if (!samsa_status_.ok()) return samsa_status_.error(); \
  } while (0)

#define SAMSA_CONCAT_INNER(a, b) a##b
#define SAMSA_CONCAT(a, b) SAMSA_CONCAT_INNER(a, b)

// ASSIGN_OR_RETURN(auto x, make_x()); declares x from a Result or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SAMSA_CONCAT(samsa_result_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.error();          \
  lhs = std::move(tmp).value()
