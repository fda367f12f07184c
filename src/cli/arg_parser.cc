#include "cli/arg_parser.h"

#include <charconv>
#include <cstdio>
#include <utility>

namespace samsa::cli {

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void ArgParser::add(Option opt) { options_.push_back(std::move(opt)); }

void ArgParser::add_flag(std::string name, char short_name, std::string help, bool* out) {
  add({std::move(name), short_name, "", std::move(help), Kind::kFlag, out, 0, 0, false, false});
}

void ArgParser::add_string(std::string name, char short_name, std::string value_name,
                           std::string help, std::string* out) {
  add({std::move(name), short_name, std::move(value_name), std::move(help), Kind::kString, out, 0,
       0, false, false});
}

void ArgParser::add_int(std::string name, std::string value_name, std::string help, int64_t* out,
                        int64_t min, int64_t max) {
  add({std::move(name), 0, std::move(value_name), std::move(help), Kind::kInt, out, min, max,
       false, false});
}

void ArgParser::add_list(std::string name, char short_name, std::string value_name,
                         std::string help, std::vector<std::string>* out) {
  add({std::move(name), short_name, std::move(value_name), std::move(help), Kind::kList, out, 0,
       0, false, false});
}

void ArgParser::require(const std::string& name) {
  if (Option* opt = find_long(name)) opt->required = true;
}

ArgParser::Option* ArgParser::find_long(const std::string& name) {
  for (Option& opt : options_) {
    if (opt.name == name) return &opt;
  }
  return nullptr;
}

ArgParser::Option* ArgParser::find_short(char c) {
  for (Option& opt : options_) {
    if (c != 0 && opt.short_name == c) return &opt;
  }
  return nullptr;
}

ParseOutcome ArgParser::fail(std::string message) {
  error_ = std::move(message);
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", command_.c_str(), error_.c_str(),
               command_.c_str());
  return ParseOutcome::kError;
}

bool ArgParser::assign(Option& opt, const std::string& value) {
  switch (opt.kind) {
    case Kind::kFlag:
      *static_cast<bool*>(opt.out) = true;
      return true;
    case Kind::kString:
      *static_cast<std::string*>(opt.out) = value;
      return true;
    case Kind::kList:
      static_cast<std::vector<std::string>*>(opt.out)->push_back(value);
      return true;
    case Kind::kInt: {
      int64_t parsed = 0;
      const char* end = value.data() + value.size();
      auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
      if (value.empty() || ec != std::errc() || ptr != end) {
        fail("--" + opt.name + " expects an integer, got '" + value + "'");
        return false;
      }
      if (parsed < opt.min || parsed > opt.max) {
        fail("--" + opt.name + " must be between " + std::to_string(opt.min) + " and " +
             std::to_string(opt.max) + ", got " + value);
        return false;
      }
      *static_cast<int64_t*>(opt.out) = parsed;
      return true;
    }
  }
  return false;
}

ParseOutcome ArgParser::parse(int argc, char** argv, int first) {
  std::vector<std::string> args;
  for (int i = first; i < argc; ++i) args.emplace_back(argv[i]);
  return parse(args);
}

ParseOutcome ArgParser::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(help().c_str(), stdout);
      return ParseOutcome::kHelp;
    }
    Option* opt = nullptr;
    std::string inline_value;
    bool has_inline = false;
    if (arg.size() > 2 && arg.starts_with("--")) {
      std::string name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
        has_inline = true;
      }
      opt = find_long(name);
    } else if (arg.size() == 2 && arg[0] == '-') {
      opt = find_short(arg[1]);
    } else {
      return fail("unexpected argument '" + arg + "'");
    }
    if (opt == nullptr) return fail("unknown option '" + arg + "'");
    opt->seen = true;
    if (opt->kind == Kind::kFlag) {
      if (has_inline) return fail("--" + opt->name + " takes no value");
      assign(*opt, "");
      continue;
    }
    if (!has_inline) {
      if (i + 1 >= args.size()) return fail("option '" + arg + "' needs a value");
      inline_value = args[++i];
    }
    if (!assign(*opt, inline_value)) return ParseOutcome::kError;
  }
  for (const Option& opt : options_) {
    if (opt.required && !opt.seen) return fail("missing required option --" + opt.name);
  }
  return ParseOutcome::kOk;
}

std::string ArgParser::help() const {
  std::string out = "Usage: " + command_ + " [options]\n\n" + summary_ + "\n\nOptions:\n";
  for (const Option& opt : options_) {
    std::string left = "  ";
    left += opt.short_name != 0 ? std::string("-") + opt.short_name + ", " : "    ";
    left += "--" + opt.name;
    if (!opt.value_name.empty()) left += " " + opt.value_name;
    if (left.size() < 34) left.resize(34, ' ');
    else left += "\n" + std::string(34, ' ');
    out += left + opt.help;
    if (opt.required) out += " (required)";
    if (opt.kind == Kind::kList) out += " (repeatable)";
    out += "\n";
  }
  out += "  -h, --help                      Show this help and exit\n";
  if (!epilog_.empty()) out += "\n" + epilog_ + (epilog_.ends_with('\n') ? "" : "\n");
  return out;
}

}  // namespace samsa::cli
