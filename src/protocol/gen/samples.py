"""Emits test-only code: builders that fill every field present in a version
with a non-default value (seed 0) or with nulls/short arrays (seed 1), and a
table of codec cases used by src/protocol/*_test.cc. Never linked into the
broker."""

import cpp


def fill_value(out, ind, f, t, lhs, optional, depth):
    p = "  " * ind
    k = t.kind
    if optional:
        out.append("%sif (seed == 1 && (%s)) {" % (p, cpp.nullable_expr(f)))
        out.append("%s  %s.reset();" % (p, lhs))
        out.append("%s} else {" % p)
        out.append("%s  protocol::emplace_fresh(%s);" % (p, lhs))
        fill_value(out, ind + 1, f, t, "(*%s)" % lhs, False, depth)
        out.append("%s}" % p)
        return
    if k == "bool":
        out.append("%s%s = ((++k + seed) %% 2) == 1;" % (p, lhs))
    elif k in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        out.append("%s%s = static_cast<%s>(++k + 1000 * seed);" % (p, lhs, cpp.elem_cpp(t)))
    elif k == "float64":
        out.append("%s%s = ++k + 0.25;" % (p, lhs))
    elif k == "uuid":
        out.append("%s%s = sample_uuid(++k);" % (p, lhs))
    elif k == "string":
        out.append("%s%s = sample_string(++k);" % (p, lhs))
    elif k == "bytes":
        out.append("%s%s = sample_bytes(++k);" % (p, lhs))
    elif k == "records":
        out.append("%sif (seed == 1 && (%s)) {" % (p, cpp.nullable_expr(f)))
        out.append("%s  %s = RecordSet();" % (p, lhs))
        out.append("%s} else {" % p)
        out.append("%s  %s = RecordSet::owned(sample_bytes(++k));" % (p, lhs))
        out.append("%s}" % p)
    elif k == "struct":
        out.append("%sfill(%s, version, seed, k);" % (p, lhs))
    elif k == "array":
        i = "i%d" % depth
        out.append("%s%s.clear();" % (p, lhs))
        out.append("%sfor (int %s = 0; %s < 2 - seed; ++%s) {" % (p, i, i, i))
        out.append("%s  %s.emplace_back();" % (p, lhs))
        fill_value(out, ind + 1, f, t.elem, "%s.back()" % lhs, False, depth + 1)
        out.append("%s}" % p)
    else:
        raise AssertionError(k)


def fill_fn(out, qual, st):
    out.append("[[maybe_unused]] void fill(%s& m, [[maybe_unused]] int16_t version, "
               "[[maybe_unused]] int seed, [[maybe_unused]] int& k) {" % qual)
    for f in st.fields:
        vs = f.tagged if f.tag is not None else f.versions
        c = cpp.cond(vs, st.versions)
        if c:
            out.append("  if (%s) {" % c)
            fill_value(out, 2, f, f.type, "m." + f.snake(), cpp.is_optional(f), 0)
            out.append("  }")
        else:
            fill_value(out, 1, f, f.type, "m." + f.snake(), cpp.is_optional(f), 0)
    out.append("}")
    out.append("")


def source(msgs, post_order):
    out = [cpp.BANNER % "*.msg", "// Test-only: sample values and codec cases for every message.", "",
           '#include "protocol/codec_test_support.h"', ""]
    for m in msgs:
        out.append('#include "protocol/generated/%s.h"' % m.stem())
    out += ["", "namespace samsa::protocol::testing {", "", "namespace {", ""]
    cases = []
    for m in msgs:
        for name, st in m.tops():
            for nested in post_order(st, [], set()):
                fill_fn(out, "%s::%s" % (name, nested.name), nested)
            fill_fn(out, name, st)
            out.append("Bytes sample_%s(int16_t version, int seed) {" % name)
            out.append("  %s m;" % name)
            out.append("  int k = 0;")
            out.append("  fill(m, version, seed, k);")
            out.append("  return encode_to_bytes(m, version);")
            out.append("}")
            out.append("")
            out.append("std::string round_trip_%s(int16_t version, int seed) {" % name)
            out.append("  %s m;" % name)
            out.append("  int k = 0;")
            out.append("  fill(m, version, seed, k);")
            out.append("  return check_round_trip(m, version);")
            out.append("}")
            out.append("")
            key = m.key if m.kind == "api" else -1
            is_request = "true" if name.endswith("Request") else "false"
            cases.append('    {"%s", %d, %s, %d, %d, &round_trip_%s, &reencode<%s>, &sample_%s, &decode_prefix<%s>},' % (
                name, key, is_request, m.versions.lo, m.versions.hi, name, name, name, name))
    out += ["}  // namespace", "", "const std::vector<CodecCase>& codec_cases() {",
            "  static const std::vector<CodecCase> cases = {"]
    out += cases
    out += ["  };", "  return cases;", "}", "", "}  // namespace samsa::protocol::testing"]
    return "\n".join(out) + "\n"
