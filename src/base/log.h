#pragma once
// Logging to stderr: one line per event, "<time> <LEVEL> [component] message".
// Formatting is fmt's; the format string is checked at compile time.

#include <fmt/format.h>

#include <string_view>

namespace samsa {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };  // kOff: nothing (the simulator)

void set_log_level(LogLevel level);
LogLevel log_level();
void log_line(LogLevel level, std::string_view component, std::string_view message);

template <typename... Args>
void log(LogLevel level, std::string_view component, fmt::format_string<Args...> f, Args&&... args) {
  if (level < log_level()) return;
  log_line(level, component, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace samsa

#define LOG_DEBUG(component, ...) ::samsa::log(::samsa::LogLevel::kDebug, component, __VA_ARGS__)
#define LOG_INFO(component, ...) ::samsa::log(::samsa::LogLevel::kInfo, component, __VA_ARGS__)
#define LOG_WARN(component, ...) ::samsa::log(::samsa::LogLevel::kWarn, component, __VA_ARGS__)
#define LOG_ERROR(component, ...) ::samsa::log(::samsa::LogLevel::kError, component, __VA_ARGS__)
