#pragma once
// Java .properties parsing (the format of Kafka's server.properties).
//
// Supported: comment lines starting with # or ! (after optional blanks);
// "key=value", "key:value" and "key value" separators with blanks around
// them ignored; a backslash at the end of a line continues the logical line
// (leading blanks of the next line dropped); escapes \t \n \r \f \\ \uXXXX
// (as UTF-8), and backslash before any other character means that character
// (so "\=" and "\:" and "\ " can appear in keys). Line ends \n, \r\n or \r.
// A later definition of a key replaces an earlier one, as in Java.

#include <map>
#include <string>
#include <string_view>

#include "base/result.h"

namespace samsa {

using Properties = std::map<std::string, std::string>;

Properties parse_properties(std::string_view text);
Result<Properties> load_properties_file(const std::string& path);

}  // namespace samsa
