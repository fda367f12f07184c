#pragma once
// ArgParser: a small declarative command-line parser for the `samsa`
// subcommands. Hand-written instead of CLI11 to keep compile times low; it
// covers what the tools need: `--name value`, `--name=value`, one-letter
// aliases (`-X value`), boolean flags, repeatable options and integers with
// range checks, plus a generated `--help` text.
//
// Contract: the parser stores pointers to caller-owned targets; they must
// outlive parse(). Options not given leave their target untouched, so the
// caller sets defaults before parsing. Positional arguments are rejected
// (every value is named), which keeps typos from being silently ignored.

#include <cstdint>
#include <string>
#include <vector>

namespace samsa::cli {

enum class ParseOutcome {
  kOk,     // run the command
  kHelp,   // --help was printed to stdout: exit 0
  kError,  // a message was printed to stderr: exit kUsageExitCode
};

// Exit status for a command line that could not be parsed (like sysexits'
// EX_USAGE spirit, but the common shell convention of 2).
inline constexpr int kUsageExitCode = 2;

class ArgParser {
 public:
  // `command` is the full command as shown in messages ("samsa topic create").
  ArgParser(std::string command, std::string summary);

  // `short_name` is 0 for none. `value_name` appears in the help ("TOPIC").
  void add_flag(std::string name, char short_name, std::string help, bool* out);
  void add_string(std::string name, char short_name, std::string value_name, std::string help,
                  std::string* out);
  void add_int(std::string name, std::string value_name, std::string help, int64_t* out,
               int64_t min, int64_t max);
  // Repeatable: every occurrence appends its value.
  void add_list(std::string name, char short_name, std::string value_name, std::string help,
                std::vector<std::string>* out);
  // Marks an option that must be given (shown in the help, checked by parse()).
  void require(const std::string& name);
  // Free text appended to the help after the option list (examples, notes).
  void set_epilog(std::string text) { epilog_ = std::move(text); }

  // Parses argv[first..argc). Prints help or errors itself.
  ParseOutcome parse(int argc, char** argv, int first = 1);
  // Like parse(), over an explicit list (tests).
  ParseOutcome parse(const std::vector<std::string>& args);

  std::string help() const;
  // Last error, without the "see --help" hint (tests).
  const std::string& error() const { return error_; }

 private:
  enum class Kind { kFlag, kString, kInt, kList };
  struct Option {
    std::string name;
    char short_name;
    std::string value_name;
    std::string help;
    Kind kind;
    void* out;
    int64_t min;
    int64_t max;
    bool required;
    bool seen;
  };

  Option* find_long(const std::string& name);
  Option* find_short(char c);
  bool assign(Option& opt, const std::string& value);
  ParseOutcome fail(std::string message);
  void add(Option opt);

  std::string command_;
  std::string summary_;
  std::string epilog_;
  std::vector<Option> options_;
  std::string error_;
};

}  // namespace samsa::cli
