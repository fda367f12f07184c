#!/usr/bin/env python3
"""Generates the C++ message codecs from src/protocol/messages/*.msg.

Usage: generate.py --out DIR [--samples FILE] MSG...
Writes DIR/<stem>.h and DIR/<stem>.cc per message file and DIR/apis.h/.cc
(the API table); --samples writes test-only value builders and round-trip
cases. Files whose content is unchanged are not rewritten, so a definition
edit only recompiles what it touches.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cpp  # noqa: E402
import msgdef  # noqa: E402
import samples  # noqa: E402


def post_order(st, out, seen):
    """Nested struct types of st, innermost first (C++ needs complete types)."""
    for f in st.fields:
        t = f.type
        while t.kind == "array":
            t = t.elem
        if t.kind == "struct" and t.struct.name not in seen:
            post_order(t.struct, out, seen)
            seen.add(t.struct.name)
            out.append(t.struct)
    return out


def struct_decl(out, ind, name, st, top_info):
    p = "  " * ind
    out.append("%sstruct %s {" % (p, name))
    if top_info:
        for line in top_info:
            out.append("%s  %s" % (p, line))
        out.append("")
    for f in st.fields:
        out.append("%s  %s %s%s;" % (p, cpp.field_cpp(f), f.snake(), cpp.member_init(f)))
    out.append("")
    if top_info:
        out.append("%s  // Reads the body at `version` into this default-constructed value. False" % p)
        out.append("%s  // if the bytes are malformed or too short, or the version is unknown." % p)
    out.append("%s  bool decode(ByteReader& r, int16_t version);" % p)
    out.append("%s  void encode(Encoder& w, int16_t version) const;" % p)
    if cpp.has_records(st):
        out.append("%s  bool operator==(const %s& o) const;" % (p, name))
    else:
        out.append("%s  bool operator==(const %s& o) const = default;" % (p, name))
    out.append("%s};" % p)


def top_constants(msg, name):
    lines = []
    if msg.kind == "api":
        lines.append("static constexpr ApiKey kApiKey = ApiKey::k%s;" % msg.name)
    lines.append("static constexpr int16_t kMinVersion = %d;" % msg.versions.lo)
    lines.append("static constexpr int16_t kMaxVersion = %d;" % msg.versions.hi)
    lines.append("static constexpr int16_t kFirstFlexibleVersion = %d;  // -1: never flexible" %
                 (msg.flexible.lo if msg.flexible else -1))
    return lines


def header(msg):
    src = os.path.basename(msg.path)
    out = [cpp.BANNER % src, "#pragma once", ""]
    out += ["#include <cstdint>", "#include <limits>", "#include <optional>", "#include <string>",
            "#include <vector>", "", '#include "base/byte_reader.h"', '#include "base/bytes.h"',
            '#include "model/record_set.h"', '#include "protocol/codec.h"']
    if msg.kind == "api":
        out.append('#include "protocol/generated/apis.h"')
    out += ['#include "protocol/uuid.h"', "", "namespace samsa::protocol {", ""]
    for name, st in msg.tops():
        out.append("// %s, versions %s%s." % (name, msg.versions, "" if not msg.flexible else
                                              ", flexible from v%d" % msg.flexible.lo))
        struct_decl_top(out, msg, name, st)
        out.append("")
    out.append("}  // namespace samsa::protocol")
    return "\n".join(out) + "\n"


def struct_decl_top(out, msg, name, st):
    out.append("struct %s {" % name)
    for line in top_constants(msg, name):
        out.append("  " + line)
    out.append("")
    for nested in post_order(st, [], set()):
        struct_decl(out, 1, nested.name, nested, None)
        out.append("")
    body = []
    struct_decl(body, 0, name, st, None)
    out.extend(body[1:-1])  # fields and methods, without the struct braces
    out.append("};")


def source(msg):
    src = os.path.basename(msg.path)
    out = [cpp.BANNER % src, '#include "protocol/generated/%s.h"' % msg.stem(), "",
           '#include "base/assert.h"', "", "namespace samsa::protocol {", ""]
    for name, st in msg.tops():
        for nested in post_order(st, [], set()):
            qual = "%s::%s" % (name, nested.name)
            cpp.emit_decode(out, qual, nested, msg, False)
            cpp.emit_encode(out, qual, nested, msg, False)
            if cpp.has_records(nested):
                cpp.emit_equals(out, qual, nested.name, nested)
        cpp.emit_decode(out, name, st, msg, True)
        cpp.emit_encode(out, name, st, msg, True)
        if cpp.has_records(st):
            cpp.emit_equals(out, name, name, st)
    out.append("}  // namespace samsa::protocol")
    return "\n".join(out) + "\n"


def apis_header(msgs):
    apis = sorted((m for m in msgs if m.kind == "api"), key=lambda m: m.key)
    out = [cpp.BANNER % "*.msg", "#pragma once", "// The table of Kafka APIs this broker defines (one registry for routing and",
           "// for answering ApiVersions).", "", "#include <cstdint>", "#include <span>", "",
           "namespace samsa::protocol {", "", "enum class ApiKey : int16_t {"]
    for m in apis:
        out.append("  k%s = %d," % (m.name, m.key))
    out += ["};", "",
            "struct ApiInfo {",
            "  ApiKey key;",
            "  const char* name;  // Kafka's name, e.g. \"Produce\"",
            "  int16_t min_version;",
            "  int16_t max_version;",
            "  int16_t first_flexible_version;  // -1: never flexible",
            "",
            "  bool supports(int16_t version) const { return version >= min_version && version <= max_version; }",
            "  // Flexible versions are open-ended: a version above max_version counts as",
            "  // flexible, as in Kafka (this picks the request header of unknown versions).",
            "  bool is_flexible(int16_t version) const {",
            "    return first_flexible_version >= 0 && version >= first_flexible_version;",
            "  }",
            "};", "",
            "// The API with this key, or nullptr if it is not defined.",
            "const ApiInfo* find_api(int16_t key);",
            "// Every defined API, by ascending key.",
            "std::span<const ApiInfo> all_apis();",
            "// Kafka's name of the API (\"Unknown\" for undefined keys).",
            "const char* api_name(int16_t key);", "",
            "}  // namespace samsa::protocol"]
    return "\n".join(out) + "\n"


def apis_source(msgs):
    apis = sorted((m for m in msgs if m.kind == "api"), key=lambda m: m.key)
    max_key = max(m.key for m in apis)
    out = [cpp.BANNER % "*.msg", '#include "protocol/generated/apis.h"', "", "namespace samsa::protocol {", "",
           "namespace {", "", "constexpr ApiInfo kApis[] = {"]
    for m in apis:
        out.append('    {ApiKey::k%s, "%s", %d, %d, %d},' % (
            m.name, m.name, m.versions.lo, m.versions.hi, m.flexible.lo if m.flexible else -1))
    out += ["};", "", "// Index into kApis by key, -1 where undefined.", "constexpr int8_t kIndex[%d] = {" % (max_key + 1)]
    index = [-1] * (max_key + 1)
    for i, m in enumerate(apis):
        index[m.key] = i
    for i in range(0, len(index), 16):
        out.append("    " + ", ".join(str(x) for x in index[i:i + 16]) + ",")
    out += ["};", "", "}  // namespace", "",
            "const ApiInfo* find_api(int16_t key) {",
            "  if (key < 0 || key > %d || kIndex[key] < 0) return nullptr;" % max_key,
            "  return &kApis[kIndex[key]];",
            "}", "",
            "std::span<const ApiInfo> all_apis() { return kApis; }", "",
            "const char* api_name(int16_t key) {",
            "  const ApiInfo* info = find_api(key);",
            "  return info ? info->name : \"Unknown\";",
            "}", "",
            "}  // namespace samsa::protocol"]
    return "\n".join(out) + "\n"


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--samples")
    ap.add_argument("msgs", nargs="+")
    args = ap.parse_args()
    try:
        msgs = [msgdef.parse_file(p) for p in sorted(args.msgs)]
    except msgdef.DefError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    keys = {}
    for m in msgs:
        if m.kind == "api" and m.key in keys:
            print("error: %s: key %d also used by %s" % (m.path, m.key, keys[m.key]), file=sys.stderr)
            return 1
        keys[m.key] = m.path
    os.makedirs(args.out, exist_ok=True)
    for m in msgs:
        write_if_changed(os.path.join(args.out, m.stem() + ".h"), header(m))
        write_if_changed(os.path.join(args.out, m.stem() + ".cc"), source(m))
    write_if_changed(os.path.join(args.out, "apis.h"), apis_header(msgs))
    write_if_changed(os.path.join(args.out, "apis.cc"), apis_source(msgs))
    if args.samples:
        write_if_changed(args.samples, samples.source(msgs, post_order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
