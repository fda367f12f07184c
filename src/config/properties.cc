#include "config/properties.h"

#include <vector>

#include "io/host_files.h"

namespace samsa {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// Splits into natural lines, dropping the terminators.
std::vector<std::string_view> natural_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      lines.push_back(text.substr(start, i - start));
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// True if the line ends in an odd number of backslashes (a continuation).
bool continues(std::string_view line) {
  size_t n = 0;
  for (size_t i = line.size(); i > 0 && line[i - 1] == '\\'; --i) ++n;
  return n % 2 == 1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

// Decodes escapes in s[from, to).
std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != '\\' || i + 1 == s.size()) {
      out += c;
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        uint32_t cp = 0;
        size_t j = 0;
        for (; j < 4 && i + 1 + j < s.size(); ++j) {
          char h = s[i + 1 + j];
          int v = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                                                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
          if (v < 0) break;
          cp = cp * 16 + uint32_t(v);
        }
        if (j == 4) {
          append_utf8(out, cp);
          i += 4;
        } else {
          out += 'u';  // malformed: keep the letter, as a lenient reader would
        }
        break;
      }
      default: out += e; break;
    }
  }
  return out;
}

void parse_logical_line(const std::string& line, Properties& out) {
  size_t i = 0, n = line.size();
  while (i < n && is_blank(line[i])) ++i;
  if (i == n) return;
  size_t key_start = i;
  while (i < n && line[i] != '=' && line[i] != ':' && !is_blank(line[i])) {
    if (line[i] == '\\') ++i;  // escaped char is part of the key
    ++i;
  }
  size_t key_end = i < n ? i : n;
  while (i < n && is_blank(line[i])) ++i;
  if (i < n && (line[i] == '=' || line[i] == ':')) ++i;
  while (i < n && is_blank(line[i])) ++i;
  out[unescape(std::string_view(line).substr(key_start, key_end - key_start))] =
      unescape(std::string_view(line).substr(i < n ? i : n));
}

}  // namespace

Properties parse_properties(std::string_view text) {
  Properties out;
  auto lines = natural_lines(text);
  for (size_t li = 0; li < lines.size(); ++li) {
    std::string_view first = lines[li];
    size_t p = 0;
    while (p < first.size() && is_blank(first[p])) ++p;
    if (p == first.size() || first[p] == '#' || first[p] == '!') continue;
    std::string logical;
    std::string_view cur = first.substr(p);
    while (continues(cur) && li + 1 < lines.size()) {
      logical.append(cur.substr(0, cur.size() - 1));
      std::string_view next = lines[++li];
      size_t q = 0;
      while (q < next.size() && is_blank(next[q])) ++q;
      cur = next.substr(q);
    }
    if (continues(cur)) cur.remove_suffix(1);  // continuation at end of file
    logical.append(cur);
    parse_logical_line(logical, out);
  }
  return out;
}

Result<Properties> load_properties_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.ok()) return Error(text.error().kind(), "config file: " + text.error().message());
  return parse_properties(*text);
}

}  // namespace samsa
