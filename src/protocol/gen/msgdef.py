"""Parser and model for Samsa's message definitions (src/protocol/messages/*.msg).

The format is described in docs/formats/protocol-definitions.md. This module
only reads and validates; cpp.py turns the model into C++.
"""

import re

INF = 1 << 15  # "and every later version"

PRIMITIVES = {
    # name: (C++ type, fixed wire width or None)
    "bool": ("bool", 1),
    "int8": ("int8_t", 1),
    "int16": ("int16_t", 2),
    "uint16": ("uint16_t", 2),
    "int32": ("int32_t", 4),
    "uint32": ("uint32_t", 4),
    "int64": ("int64_t", 8),
    "float64": ("double", 8),
    "uuid": ("Uuid", 16),
    "string": ("std::string", None),
    "bytes": ("Bytes", None),
    "records": ("RecordSet", None),
}
NULLABLE_KINDS = ("string", "bytes", "records", "array", "struct")
INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}


class DefError(Exception):
    pass


class Versions:
    """A closed range [lo, hi] of versions; hi == INF means open-ended; None range = empty."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    @staticmethod
    def parse(text, where):
        if text == "none":
            return None
        m = re.fullmatch(r"(\d+)\+", text)
        if m:
            return Versions(int(m.group(1)), INF)
        m = re.fullmatch(r"(\d+)-(\d+)", text)
        if m and int(m.group(1)) <= int(m.group(2)):
            return Versions(int(m.group(1)), int(m.group(2)))
        m = re.fullmatch(r"\d+", text)
        if m:
            return Versions(int(text), int(text))
        raise DefError("%s: bad version range '%s'" % (where, text))

    def intersect(self, other):
        if other is None:
            return None
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        return Versions(lo, hi) if lo <= hi else None

    def covers(self, other):
        return other is None or (self.lo <= other.lo and self.hi >= other.hi)

    def contains(self, v):
        return self.lo <= v <= self.hi

    def __repr__(self):
        if self.hi == INF:
            return "%d+" % self.lo
        return "%d-%d" % (self.lo, self.hi)


class Type:
    def __init__(self, kind, elem=None, struct=None):
        self.kind = kind  # a PRIMITIVES key, "array" or "struct"
        self.elem = elem  # Type, for arrays
        self.struct = struct  # Struct, for structs

    def is_struct_array(self):
        return self.kind == "array" and self.elem.kind == "struct"


class Field:
    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.type = None
        self.versions = None  # effective: own range intersected with the parent's
        self.nullable = None  # Versions or None
        self.tag = None
        self.tagged = None  # Versions or None
        self.default = None  # text or None

    def snake(self):
        return snake_case(self.name)


class Struct:
    def __init__(self, name, versions):
        self.name = name
        self.versions = versions
        self.fields = []


class Message:
    def __init__(self, kind, name, path):
        self.kind = kind  # "api" or "data"
        self.name = name
        self.path = path
        self.key = None
        self.versions = None
        self.flexible = None  # Versions or None
        self.structs = {}  # name -> Struct, nested types of request/response/data
        self.request = None
        self.response = None
        self.data = None

    def tops(self):
        """The top-level structs: (C++ name, Struct) pairs."""
        if self.kind == "data":
            return [(self.name, self.data)]
        return [(self.name + "Request", self.request), (self.name + "Response", self.response)]

    def stem(self):
        return snake_case(self.name)


def snake_case(name):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


def _attrs(tokens, where):
    out = {}
    for tok in tokens:
        if "=" in tok:
            k, v = tok.split("=", 1)
        else:
            k, v = tok, None
        if k in out:
            raise DefError("%s: attribute '%s' given twice" % (where, k))
        out[k] = v
    return out


def _lines(path):
    with open(path) as f:
        for no, raw in enumerate(f, 1):
            text = raw.split("#", 1)[0].rstrip()
            if not text.strip():
                continue
            indent = len(text) - len(text.lstrip(" "))
            if indent % 2 or "\t" in text:
                raise DefError("%s:%d: indent with multiples of two spaces" % (path, no))
            yield no, indent // 2, text.split()


def parse_file(path):
    lines = list(_lines(path))
    if not lines or lines[0][1] != 0:
        raise DefError("%s: must start with an 'api' or 'data' line" % path)
    no, _, toks = lines[0]
    where = "%s:%d" % (path, no)
    if toks[0] not in ("api", "data") or len(toks) < 2:
        raise DefError("%s: expected 'api NAME ...' or 'data NAME ...'" % where)
    msg = Message(toks[0], toks[1], path)
    attrs = _attrs(toks[2:], where)
    allowed = {"versions", "flexible"} | ({"key"} if msg.kind == "api" else set())
    for k in attrs:
        if k not in allowed:
            raise DefError("%s: unknown attribute '%s'" % (where, k))
    if "versions" not in attrs or "flexible" not in attrs:
        raise DefError("%s: 'versions=' and 'flexible=' are required" % where)
    msg.versions = Versions.parse(attrs["versions"], where)
    if msg.versions is None or msg.versions.hi == INF:
        raise DefError("%s: versions must be a closed range" % where)
    msg.flexible = Versions.parse(attrs["flexible"], where)
    if msg.kind == "api":
        if "key" not in attrs:
            raise DefError("%s: 'key=' is required" % where)
        msg.key = int(attrs["key"])
    rest = lines[1:]
    if msg.kind == "data":
        msg.data = Struct(msg.name, msg.versions)
        _parse_fields(msg, msg.data, rest, 1, path)
        return msg
    sections = {}
    i = 0
    while i < len(rest):
        no, level, toks = rest[i]
        if level != 0 or toks[0] not in ("request", "response") or len(toks) != 1:
            raise DefError("%s:%d: expected 'request' or 'response'" % (path, no))
        j = i + 1
        while j < len(rest) and rest[j][1] > 0:
            j += 1
        if toks[0] in sections:
            raise DefError("%s:%d: second '%s' section" % (path, no, toks[0]))
        struct = Struct(msg.name + toks[0].capitalize(), msg.versions)
        _parse_fields(msg, struct, rest[i + 1:j], 1, path)
        sections[toks[0]] = struct
        i = j
    if set(sections) != {"request", "response"}:
        raise DefError("%s: needs both a 'request' and a 'response' section" % path)
    msg.request, msg.response = sections["request"], sections["response"]
    return msg


def _parse_fields(msg, struct, lines, level, path):
    i = 0
    while i < len(lines):
        no, lv, toks = lines[i]
        where = "%s:%d" % (path, no)
        if lv != level:
            raise DefError("%s: unexpected indentation" % where)
        j = i + 1
        while j < len(lines) and lines[j][1] > level:
            j += 1
        struct.fields.append(_parse_field(msg, struct, toks, lines[i + 1:j], level, where, path))
        i = j
    _check_struct(struct, msg, path)


def _parse_field(msg, parent, toks, children, level, where, path):
    if len(toks) < 2:
        raise DefError("%s: expected 'Name type [attributes]'" % where)
    f = Field(toks[0], where)
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", f.name):
        raise DefError("%s: field names are PascalCase" % where)
    attrs = _attrs(toks[2:], where)
    for k in attrs:
        if k not in ("versions", "nullable", "tag", "tagged", "default"):
            raise DefError("%s: unknown attribute '%s'" % (where, k))
    own = Versions.parse(attrs["versions"], where) if "versions" in attrs else Versions(0, INF)
    f.versions = own.intersect(parent.versions) if own else None
    if f.versions is None:
        raise DefError("%s: field exists in no version of its parent" % where)
    f.type = _parse_type(msg, toks[1], f, children, level, where, path)
    kind = f.type.kind
    if "nullable" in attrs:
        if kind not in NULLABLE_KINDS:
            raise DefError("%s: a %s cannot be nullable" % (where, toks[1]))
        nv = attrs["nullable"]
        f.nullable = f.versions if nv is None else f.versions.intersect(Versions.parse(nv, where))
    if "tag" in attrs:
        f.tag = int(attrs["tag"])
        tv = attrs.get("tagged")
        f.tagged = f.versions if tv is None else f.versions.intersect(Versions.parse(tv, where))
        if msg.flexible is None or f.tagged is None or not msg.flexible.covers(f.tagged):
            raise DefError("%s: tagged versions must be flexible" % where)
        if kind == "records":
            raise DefError("%s: records cannot be tagged" % where)
    elif "tagged" in attrs:
        raise DefError("%s: 'tagged=' needs 'tag='" % where)
    if "default" in attrs:
        f.default = attrs["default"]
        _check_default(f, where)
    return f


def _parse_type(msg, text, f, children, level, where, path):
    if text.startswith("[]"):
        elem = _parse_type(msg, text[2:], f, children, level, where, path)
        if elem.kind in ("records", "array"):
            raise DefError("%s: arrays of %s are not supported" % (where, elem.kind))
        return Type("array", elem=elem)
    if text in PRIMITIVES:
        if children:
            raise DefError("%s: a %s field has no nested fields" % (where, text))
        return Type(text)
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", text):
        raise DefError("%s: unknown type '%s'" % (where, text))
    if not children:
        raise DefError("%s: struct '%s' needs nested fields" % (where, text))
    if text in msg.structs:
        raise DefError("%s: struct name '%s' used twice in this message" % (where, text))
    st = Struct(text, f.versions)
    msg.structs[text] = st
    _parse_fields(msg, st, children, level + 1, path)
    return Type("struct", struct=st)


def _check_default(f, where):
    d, kind = f.default, f.type.kind
    if d == "null":
        if f.nullable is None:
            raise DefError("%s: default=null needs 'nullable'" % where)
        return
    if kind in INT_RANGES:
        try:
            v = int(d, 0)
        except ValueError:
            raise DefError("%s: bad integer default '%s'" % (where, d))
        lo, hi = INT_RANGES[kind]
        if not lo <= v <= hi:
            raise DefError("%s: default out of range" % where)
    elif kind == "bool":
        if d not in ("true", "false"):
            raise DefError("%s: bool default must be true or false" % where)
    elif kind == "float64":
        float(d)
    elif kind == "string":
        if d.startswith('"'):
            if len(d) < 2 or not d.endswith('"') or '"' in d[1:-1] or "\\" in d:
                raise DefError("%s: bad string default" % where)
    else:
        raise DefError("%s: a default for a %s field must be null" % (where, kind))


def _check_struct(struct, msg, path):
    tags = set()
    names = set()
    for f in struct.fields:
        if f.name in names:
            raise DefError("%s: field '%s' given twice" % (f.line, f.name))
        names.add(f.name)
        if f.tag is not None:
            if f.tag in tags:
                raise DefError("%s: tag %d used twice" % (f.line, f.tag))
            tags.add(f.tag)


def string_default(f):
    """The default of a string field as a Python str (None for null)."""
    if f.default is None:
        return ""
    if f.default == "null":
        return None
    return f.default[1:-1] if f.default.startswith('"') else f.default
