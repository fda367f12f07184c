#pragma once
// ASSERT: an invariant that must hold. It is always on (release builds too):
// a broken invariant is a bug, and continuing would risk serving or storing
// wrong data. Prints the condition, location and an optional message, then
// aborts so a core dump / debugger shows the state.

namespace samsa::detail {
[[noreturn]] void assert_failed(const char* condition, const char* file, int line, const char* message);
}

#define ASSERT(cond)                                                          \
  do {                                                                        \
    if (!(cond)) [[unlikely]]                                                 \
      ::samsa::detail::assert_failed(#cond, __FILE__, __LINE__, nullptr);     \
  } while (0)

#define ASSERT_MSG(cond, msg)                                                 \
  do {                                                                        \
    if (!(cond)) [[unlikely]]                                                 \
      ::samsa::detail::assert_failed(#cond, __FILE__, __LINE__, (msg));       \
  } while (0)

#define UNREACHABLE(msg) ::samsa::detail::assert_failed("unreachable", __FILE__, __LINE__, (msg))
