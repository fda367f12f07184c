#include "controller/quorum_state.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <map>

namespace samsa {
namespace {

Error bad(std::string_view why) { return Error(ErrorKind::kCorrupt, fmt::format("quorum-state: {}", why)); }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  // One flat object: {"name": integer, ...}.
  Result<std::map<std::string, int64_t>> object() {
    std::map<std::string, int64_t> fields;
    if (!eat('{')) return bad("expected '{'");
    if (eat('}')) return finish(std::move(fields));
    while (true) {
      ASSIGN_OR_RETURN(std::string name, string());
      if (!eat(':')) return bad("expected ':'");
      ASSIGN_OR_RETURN(int64_t value, integer());
      if (!fields.emplace(name, value).second) return bad("field '" + name + "' twice");
      if (eat('}')) return finish(std::move(fields));
      if (!eat(',')) return bad("expected ',' or '}'");
    }
  }

 private:
  Result<std::map<std::string, int64_t>> finish(std::map<std::string, int64_t> fields) {
    skip_space();
    if (pos_ != text_.size()) return bad("bytes after the object");
    return fields;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
                                   text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Result<std::string> string() {
    if (!eat('"')) return bad("expected a field name");
    size_t end = text_.find('"', pos_);
    if (end == std::string_view::npos) return bad("unterminated field name");
    std::string name(text_.substr(pos_, end - pos_));
    if (name.find('\\') != std::string::npos) return bad("escapes in a field name");
    pos_ = end + 1;
    return name;
  }
  Result<int64_t> integer() {
    skip_space();
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), value);
    if (ec != std::errc()) return bad("expected an integer value");
    pos_ = size_t(ptr - text_.data());
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

Result<int64_t> field(const std::map<std::string, int64_t>& fields, const std::string& name, int64_t lo, int64_t hi) {
  auto it = fields.find(name);
  if (it == fields.end()) return bad("no " + name);
  if (it->second < lo || it->second > hi) return bad(fmt::format("{} {} out of range", name, it->second));
  return it->second;
}

}  // namespace

std::string encode_quorum_state(const raft::HardState& state) {
  return fmt::format(R"({{"leaderId":-1,"leaderEpoch":{},"votedId":{},"appliedOffset":{},"data_version":0}})",
                     state.term.value(), state.vote.value(), state.commit.value());
}

Result<raft::HardState> decode_quorum_state(std::string_view json) {
  if (json.size() > kMaxQuorumStateBytes) return bad("larger than 4096 bytes");
  ASSIGN_OR_RETURN(auto fields, Parser(json).object());
  ASSIGN_OR_RETURN(int64_t version, field(fields, "data_version", 0, 0));
  (void)version;
  raft::HardState state;
  ASSIGN_OR_RETURN(int64_t term, field(fields, "leaderEpoch", 0, INT32_MAX));
  ASSIGN_OR_RETURN(int64_t vote, field(fields, "votedId", -1, INT32_MAX));
  ASSIGN_OR_RETURN(int64_t commit, field(fields, "appliedOffset", 0, INT64_MAX));
  state.term = raft::Term(term);
  state.vote = vote < 0 ? kNoNode : NodeId(int32_t(vote));
  state.commit = raft::LogIndex(commit);
  return state;
}

}  // namespace samsa
