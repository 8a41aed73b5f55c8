#!/usr/bin/env python3
"""gen_xproto.py -- turns the xcb-proto XML descriptions into C for tincan.

xproto_tables.[ch]: per extension (and for the core protocol), request names by (minor)
opcode and whether each has a reply, event names by number (and GenericEvent sub-types),
error names; the core opcodes and event codes as enums (XP_OP_*, XP_EV_*).

xproto_wire.h (with --spec tools/xproto_wire.spec --out-wire): typed, bounds-checked access
to the messages the spec lists and nothing else. For each: XP_NAME_SIZE (the fixed part), a
view struct with every field of the fixed part, xp_NAME_view(m, len, msb, &v) (false when len
is short; a directly following counted list as a pointer, NULL when it runs past len; rest
and rest_len, what follows), xp_NAME_put(m, cap, msb, &v) (writes the fixed part), and
XP_NAME_FIELD_AT places for reading one field of a message that may be cut short. Kinds:
request (the plain form), body (a request after its 4- or 8-byte header), reply, event,
struct, enum; `opcodes EXT...` adds minor-opcode enums. The headers every message shares
are written here by hand (GENERIC), from the protocol's encoding. Design: docs/DESIGN.md,
"Generated protocol tables". The output is marked generated and is never edited by hand.
"""
import argparse
import re
import glob
import os
import subprocess
import xml.etree.ElementTree as ET


BASE_SIZES = {"CARD8": 1, "INT8": 1, "BYTE": 1, "BOOL": 1, "char": 1, "void": 1, "CARD16": 2, "INT16": 2,
              "CARD32": 4, "INT32": 4, "float": 4, "CARD64": 8, "INT64": 8, "double": 8}


def type_sizes(roots):
    """Byte sizes of the fixed-size types all files declare (xids, typedefs, fixed structs)."""
    sizes = dict(BASE_SIZES)
    for _ in range(4):  # typedefs and structs refer to each other across files
        for root in roots:
            for x in root.findall("xidtype") + root.findall("xidunion"):
                sizes[x.get("name")] = 4
            for t in root.findall("typedef"):
                if strip(t.get("oldname")) in sizes:
                    sizes[t.get("newname")] = sizes[strip(t.get("oldname"))]
            for st in root.findall("struct"):
                n, pads = fixed_layout(st, 0, sizes)
                if n is not None:
                    sizes[st.get("name")] = n
    return sizes


def strip(name):
    return name.split(":")[-1] if name else name


def fixed_layout(elem, start, sizes):
    """Walks a request's (or struct's) fields from byte `start`: (end, pad byte offsets), or
    (None, pads so far) at the first field whose size varies (a list, a switch)."""
    at, pads = start, []
    for f in elem:
        if f.tag in ("field", "exprfield"):
            n = sizes.get(strip(f.get("type")))
            if n is None:
                return None, pads
            at += n
        elif f.tag == "pad" and f.get("bytes"):
            pads += range(at, at + int(f.get("bytes")))
            at += int(f.get("bytes"))
        elif f.tag == "pad" and f.get("align"):
            a = int(f.get("align"))
            pads += range(at, (at + a - 1) // a * a)
            at = (at + a - 1) // a * a
        elif f.tag in ("reply", "doc", "required_start_align", "fd"):
            continue
        else:
            return None, pads
    return at, pads


def request_pad_mask(req, core, sizes):
    """Bits of the request's first 32 bytes that are padding: the server ignores them, and
    libraries leave what they find there. A core request's first field takes byte 1 when
    it is one byte; an extension request's fields start after its 4-byte header."""
    fields = [f for f in req if f.tag not in ("reply", "doc", "required_start_align", "fd")]
    pads = []
    start = 4
    if core:
        first = fields[0] if fields else None
        one = first is not None and ((first.tag == "field" and sizes.get(strip(first.get("type"))) == 1) or
                                     (first.tag == "pad" and first.get("bytes") == "1"))
        if one:
            if first.tag == "pad":
                pads.append(1)
            fields = fields[1:]
        else:
            pads.append(1)
    wrapper = ET.Element("request")
    wrapper.extend(fields)
    end, more = fixed_layout(wrapper, start, sizes)
    pads += more
    if end is not None:  # a fixed-size request is padded to 4 bytes
        pads += range(end, (end + 3) // 4 * 4)
    return sum(1 << b for b in set(pads) if b < 32)


def parse_file(path):
    root = ET.parse(path).getroot()
    ext = {
        "header": root.get("header"),
        "xname": root.get("extension-xname"),
        "name": root.get("extension-name") or "core",
        "requests": {}, "events": {}, "xge_events": {}, "errors": {},
    }
    ext["root"] = root
    for req in root.iter("request"):
        ext["requests"][int(req.get("opcode"))] = (req.get("name"), req.find("reply") is not None, req)
    for ev in root.findall("event") + root.findall("eventcopy"):
        n = int(ev.get("number"))
        xge = ev.get("xge") == "true"
        if ev.tag == "eventcopy":  # a copy inherits xge from the event it refers to
            ref = root.find("event[@name='%s']" % ev.get("ref"))
            xge = ref is not None and ref.get("xge") == "true"
        (ext["xge_events"] if xge else ext["events"])[n] = ev.get("name")
    atoms = root.find("enum[@name='Atom']")
    ext["atoms"] = {}
    if atoms is not None:  # the predefined atoms: fixed by the protocol, names as interned
        for item in atoms.findall("item"):
            v = int(item.find("value").text)
            if v > 0:
                ext["atoms"][v] = item.get("name")
    for er in root.findall("error") + root.findall("errorcopy"):
        n = int(er.get("number"))
        if n >= 0:
            ext["errors"][n] = er.get("name")
    return ext


def upper_snake(name):
    """GrabServer -> GRAB_SERVER, PolyFillRectangle -> POLY_FILL_RECTANGLE."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).upper()


def c_str(s):
    return '"%s"' % s if s is not None else "NULL"


def dense(d, size=None):
    size = size if size is not None else (max(d) + 1 if d else 0)
    return [d.get(i) for i in range(size)]


def emit(exts, version, out_c, out_h):
    core = next(e for e in exts if e["xname"] is None)
    others = sorted((e for e in exts if e["xname"] is not None), key=lambda e: e["xname"])
    h = []
    h.append("/* xproto_tables.h -- generated by tools/gen_xproto.py from xcb-proto %s. DO NOT EDIT. */" % version)
    h.append("#ifndef TINCAN_XPROTO_TABLES_H\n#define TINCAN_XPROTO_TABLES_H\n")
    h.append("#include <stddef.h>\n#include <stdint.h>\n")
    h.append('#define XP_XCB_PROTO_VERSION "%s"\n' % version)
    h.append("/* One request; name is NULL where the opcode is unassigned. pad_mask: bit i set when byte i")
    h.append(" * (of the first 32) is padding, which the server ignores and libraries may leave unset. */")
    h.append("struct xp_request { const char *name; uint8_t has_reply; uint32_t pad_mask; };\n")
    h.append("/* One extension as xcb-proto describes it; tables are indexed by minor opcode,")
    h.append(" * event number relative to first_event, GenericEvent evtype, and error number relative to first_error. */")
    h.append("struct xp_extension {")
    h.append("    const char *xname;  /* the name QueryExtension asks for */")
    h.append("    const char *name;   /* xcb's short name */")
    h.append("    const struct xp_request *requests; uint16_t n_requests;")
    h.append("    const char *const *events; uint16_t n_events;")
    h.append("    const char *const *xge_events; uint16_t n_xge_events;")
    h.append("    const char *const *errors; uint16_t n_errors;")
    h.append("};\n")
    h.append("#define XP_N_CORE_REQUESTS 128")
    h.append("#define XP_N_CORE_EVENTS %d" % len(dense(core["events"])))
    h.append("#define XP_N_CORE_ERRORS %d" % len(dense(core["errors"])))
    h.append("extern const struct xp_request xp_core_requests[XP_N_CORE_REQUESTS];")
    h.append("extern const char *const xp_core_events[XP_N_CORE_EVENTS];")
    h.append("extern const char *const xp_core_errors[XP_N_CORE_ERRORS];")
    h.append("#define XP_N_PREDEFINED_ATOMS %d  /* atoms 1..N; index 0 unused */" % max(core["atoms"]))
    h.append("extern const char *const xp_predefined_atoms[XP_N_PREDEFINED_ATOMS + 1];")
    h.append("extern const struct xp_extension xp_extensions[];")
    h.append("extern const size_t xp_n_extensions;\n")
    h.append("/* The core requests' major opcodes and the core events' codes, by xcb-proto's names. */")
    h.append("enum xp_core_opcode {")
    for op, r in sorted(core["requests"].items()):
        h.append("    XP_OP_%s = %d," % (upper_snake(r[0]), op))
    h.append("};")
    h.append("enum xp_core_event {")
    for n, name in sorted(list(core["events"].items()) + list(core["xge_events"].items())):
        h.append("    XP_EV_%s = %d," % (upper_snake(name), n))
    h.append("};\n")
    h.append("#endif")

    c = ["/* xproto_tables.c -- generated by tools/gen_xproto.py from xcb-proto %s. DO NOT EDIT. */" % version,
         '#include "xproto_tables.h"', ""]

    sizes = type_sizes([e["root"] for e in exts])

    def req_table(name, reqs, size=None):
        rows = dense(reqs, size)
        is_core = name.startswith("xp_core")
        c.append("static const struct xp_request %s[%d] = {" % (name, max(len(rows), 1)) if not name.startswith("xp_core")
                 else "const struct xp_request %s[%d] = {" % (name, len(rows)))
        for i, r in enumerate(rows):
            if r:
                c.append("    [%d] = { %s, %d, 0x%08x }," % (i, c_str(r[0]), 1 if r[1] else 0,
                                                        request_pad_mask(r[2], is_core, sizes)))
        c.append("};")

    def str_table(name, d, public=False):
        rows = dense(d)
        decl = "const char *const %s[%d]" % (name, max(len(rows), 1))
        c.append(("" if public else "static ") + decl + " = {")
        for i, r in enumerate(rows):
            if r:
                c.append("    [%d] = %s," % (i, c_str(r)))
        c.append("};")
        return len(rows)

    req_table("xp_core_requests", core["requests"], 128)
    str_table("xp_core_events", core["events"], public=True)
    str_table("xp_core_errors", core["errors"], public=True)
    str_table("xp_predefined_atoms", core["atoms"], public=True)
    c.append("")
    counts = []
    for e in others:
        p = "ext_" + e["header"]
        req_table(p + "_requests", e["requests"])
        ne = str_table(p + "_events", e["events"])
        nx = str_table(p + "_xge_events", e["xge_events"])
        nr = str_table(p + "_errors", e["errors"])
        counts.append((e, len(dense(e["requests"])), ne, nx, nr))
    c.append("")
    c.append("const struct xp_extension xp_extensions[] = {")
    for e, nq, ne, nx, nr in counts:
        p = "ext_" + e["header"]
        c.append("    { %s, %s, %s_requests, %d, %s_events, %d, %s_xge_events, %d, %s_errors, %d }," %
                 (c_str(e["xname"]), c_str(e["name"]), p, nq, p, ne, p, nx, p, nr))
    c.append("};")
    c.append("const size_t xp_n_extensions = %d;" % len(counts))

    with open(out_h, "w") as f:
        f.write("\n".join(h) + "\n")
    with open(out_c, "w") as f:
        f.write("\n".join(c) + "\n")



# ---------------------------------------------------------------- typed wire access

SIGNED = {"INT8", "INT16", "INT32", "INT64"}
C_TYPES = {(1, False): "uint8_t", (1, True): "int8_t", (2, False): "uint16_t", (2, True): "int16_t",
           (4, False): "uint32_t", (4, True): "int32_t"}
NOT_FIELDS = ("doc", "required_start_align", "fd", "reply")


def base_types(roots):
    """What each type name comes down to: a base type of BASE_SIZES (xids are CARD32)."""
    base = {n: n for n in BASE_SIZES}
    for _ in range(4):
        for root in roots:
            for x in root.findall("xidtype") + root.findall("xidunion"):
                base[x.get("name")] = "CARD32"
            for t in root.findall("typedef"):
                old = strip(t.get("oldname"))
                if old in base:
                    base[t.get("newname")] = base[old]
    return base


def snake(name):
    """deviceSpec -> device_spec, GetGeometry -> get_geometry."""
    return upper_snake(name).lower()


class Field:
    def __init__(self, name, at, size, ctype, pointer=False):
        self.name, self.at, self.size, self.ctype, self.pointer = name, at, size, ctype, pointer


def wire_layout(elems, start, sizes, base, first_in_byte1):
    """The fixed part of a message from byte `start`: (fields, end, first list after it).
    first_in_byte1: a one-byte first field (or pad) takes byte 1 of the header."""
    elems = [e for e in elems if e.tag not in NOT_FIELDS]
    fields, at = [], start
    if first_in_byte1:
        first = elems[0] if elems else None
        one = first is not None and ((first.tag in ("field", "exprfield") and sizes.get(strip(first.get("type"))) == 1)
                                     or (first.tag == "pad" and first.get("bytes") == "1"))
        if one:
            if first.tag != "pad":
                fields.append(field_of(first, 1, sizes, base))
            elems = elems[1:]
    for i, e in enumerate(elems):
        if e.tag in ("field", "exprfield"):
            n = sizes.get(strip(e.get("type")))
            if n is None:
                return fields, at, None
            fields.append(field_of(e, at, sizes, base))
            at += n
        elif e.tag == "pad" and e.get("bytes"):
            at += int(e.get("bytes"))
        elif e.tag == "pad" and e.get("align"):
            a = int(e.get("align"))
            at = (at + a - 1) // a * a
        elif e.tag == "list":
            return fields, at, list_of(e, sizes)
        else:
            return fields, at, None
    return fields, at, None


def field_of(e, at, sizes, base):
    t = strip(e.get("type"))
    n = sizes[t]
    b = base.get(t)
    name = snake(e.get("name"))
    if b is None or (n, b in SIGNED) not in C_TYPES:  # a struct, or 8 bytes: its bytes
        return Field(name, at, n, "const uint8_t *", pointer=True)
    return Field(name, at, n, C_TYPES[(n, b in SIGNED)])


def list_of(e, sizes):
    """A list right after the fixed part, when its length is a field (times a constant)."""
    n = sizes.get(strip(e.get("type")))
    if n is None:
        return None
    kids = [k for k in e]
    if len(kids) == 1 and kids[0].tag == "fieldref":
        return (snake(e.get("name")), n, snake(kids[0].text), 1)
    if (len(kids) == 1 and kids[0].tag == "op" and kids[0].get("op") == "*" and len(kids[0]) == 2 and
            kids[0][0].tag == "fieldref" and kids[0][1].tag == "value"):
        return (snake(e.get("name")), n, snake(kids[0][0].text), int(kids[0][1].text))
    return None


def read_spec(path):
    """The spec file: `opcodes EXT...` lines, and `KIND EXT NAME` lines (KIND: request,
    reply, event, struct; EXT: core or an xcb header name such as render), and `events EXT...`
    lines (enums of those extensions' event numbers)."""
    opcodes, events, msgs = [], [], []
    with open(path) as f:
        for line in f:
            words = line.split("#")[0].split()
            if not words:
                continue
            if words[0] == "opcodes":
                opcodes += words[1:]
            elif words[0] == "events":
                events += words[1:]
            elif words[0] in ("request", "body", "reply", "event", "struct", "enum") and len(words) == 3:
                msgs.append(tuple(words))
            else:
                raise SystemExit("%s: cannot read: %s" % (path, line.strip()))
    return opcodes, events, msgs


def find_message(ext, kind, name):
    root = ext["root"]
    if kind in ("request", "body", "reply"):
        el = root.find("request[@name='%s']" % name)
        if el is not None and kind == "reply":
            el = el.find("reply")
    elif kind == "event":
        el = root.find("event[@name='%s']" % name)
    else:
        el = root.find("struct[@name='%s']" % name)
    if el is None:
        raise SystemExit("gen_xproto.py: xcb-proto has no %s %s in %s" % (kind, name, ext["header"]))
    return el


def ld(f, var="m"):
    if f.pointer:
        return "%s + %d" % (var, f.at)
    if f.size == 1:
        return "(%s)%s[%d]" % (f.ctype, var, f.at) if f.ctype != "uint8_t" else "%s[%d]" % (var, f.at)
    fn = "ld16" if f.size == 2 else "ld32"
    if f.ctype in ("uint16_t", "uint32_t"):
        return "%s(%s + %d, msb)" % (fn, var, f.at)
    return "(%s)%s(%s + %d, msb)" % (f.ctype, fn, var, f.at)


def st(f, val):
    if f.pointer:
        return "if (%s) memcpy(m + %d, %s, %d);" % (val, f.at, val, f.size)
    if f.size == 1:
        return "m[%d] = (uint8_t)%s;" % (f.at, val)
    fn = "st16" if f.size == 2 else "st32"
    cast = "uint16_t" if f.size == 2 else "uint32_t"
    return "%s(m + %d, (%s)%s, msb);" % (fn, f.at, cast, val)


def emit_view(h, ext, kind, name, el, sizes, base):
    core = ext["xname"] is None
    prefix = "" if core else ext["header"] + "_"
    suffix = {"request": "_req", "body": "_body", "reply": "_reply", "event": "_event", "struct": ""}[kind]
    cname = "xp_" + prefix + snake(name) + suffix
    macro = cname.upper() + "_SIZE"
    header = []
    if kind == "body":  # a request after its header (4 bytes, or 8 with a BIG-REQUESTS length)
        fields, end, lst = wire_layout(el, 4, sizes, base, core)
        fields = [Field(f.name, f.at - 4, f.size, f.ctype, f.pointer) for f in fields if f.at >= 4]
        end = max(end, 4)
        if not lst:
            end = (end + 3) // 4 * 4
        end -= 4
        tag0 = tag1 = None
    elif kind == "request":
        fields, end, lst = wire_layout(el, 4, sizes, base, core)
        header = [Field("length", 2, 2, "uint16_t")]
        if not core:
            header = [Field("major_opcode", 0, 1, "uint8_t")] + header
        end = max(end, 4)
        if not lst:  # the request's fixed form is padded to 4 bytes
            end = (end + 3) // 4 * 4
        tag0 = None if not core else "XP_OP_%s" % upper_snake(name)
        tag1 = None if core else "XP_%s_OP_%s" % (ext["header"].upper(), upper_snake(name))
    elif kind == "reply":
        fields, end, lst = wire_layout(el, 8, sizes, base, True)
        header = [Field("sequence", 2, 2, "uint16_t"), Field("length", 4, 4, "uint32_t")]
        end, tag0, tag1 = max(end, 32), "1", None
    elif kind == "event":
        seq = el.get("no-sequence-number") != "true"
        fields, end, lst = wire_layout(el, 4 if seq else 1, sizes, base, seq)
        header = [Field("response_type", 0, 1, "uint8_t")] + ([Field("sequence", 2, 2, "uint16_t")] if seq else [])
        end, tag0, tag1 = 32, None, None
    else:
        fields, end, lst = wire_layout(el, 0, sizes, base, False)
        tag0 = tag1 = None
    names = [f.name for f in header + fields]
    if len(set(names)) != len(names):
        raise SystemExit("gen_xproto.py: %s: a field's name is taken twice: %s" % (cname, names))
    what = {"request": "request", "body": "request's body", "reply": "reply", "event": "event", "struct": "structure"}[kind]
    h.append("/* %s%s %s: %d bytes fixed. */" % ("" if core else ext["xname"] + " ", name, what, end))
    h.append("#define %s %d" % (macro, end))
    h.append("enum {  /* where each field is, for reading one field of a message that may be cut short */")
    for f in header + fields:
        h.append("    %s_%s_AT = %d," % (cname.upper(), f.name.upper(), f.at))
    h.append("};")
    h.append("struct %s {" % cname)
    for f in header + fields:
        h.append("    %s%s%s;%s" % (f.ctype, "" if f.pointer else " ", f.name,
                                     "  /* %d bytes */" % f.size if f.pointer else ""))
    if lst:
        h.append("    const uint8_t *%s;  /* %s%s items of %d byte(s); NULL when they run past the message */" %
                 (lst[0], lst[2], " * %d" % lst[3] if lst[3] != 1 else "", lst[1]))
    h.append("    const uint8_t *rest;  /* what follows the fixed part */")
    h.append("    size_t rest_len;")
    h.append("};")
    h.append("static inline bool %s_view(const uint8_t *m, size_t len, bool msb, struct %s *v)" % (cname, cname))
    h.append("{")
    h.append("    (void)msb;")
    h.append("    if (len < %s)" % macro)
    h.append("        return false;")
    for f in header + fields:
        h.append("    v->%s = %s;" % (f.name, ld(f)))
    if lst:
        h.append("    v->%s = (uint64_t)v->%s * %d <= len - %s ? m + %s : NULL;" %
                 (lst[0], lst[2], lst[1] * lst[3], macro, macro))
    h.append("    v->rest = m + %s;" % macro)
    h.append("    v->rest_len = len - %s;" % macro)
    h.append("    return true;")
    h.append("}")
    h.append("/* Writes the fixed part (padding zeroed, the %s's code set); false when cap is short. */" % what)
    h.append("static inline bool %s_put(uint8_t *m, size_t cap, bool msb, const struct %s *v)" % (cname, cname))
    h.append("{")
    h.append("    (void)msb;")
    h.append("    if (cap < %s)" % macro)
    h.append("        return false;")
    h.append("    memset(m, 0, %s);" % macro)
    if tag0:
        h.append("    m[0] = %s;" % tag0)
    if tag1:
        h.append("    m[1] = %s;" % tag1)
    for f in header + fields:
        h.append("    %s" % st(f, "v->" + f.name))
    h.append("    return true;")
    h.append("}\n")


GENERIC = '''/* The headers every message shares (the X protocol's encoding, not in xcb-proto's XML). */
#define XP_REQUEST_HEADER_SIZE 4
#define XP_BIG_REQUEST_HEADER_SIZE 8   /* BIG-REQUESTS: length 0, then a 32-bit length */
#define XP_SERVER_MSG_SIZE 32          /* events, errors and a reply's fixed part */
#define XP_SETUP_PREFIX_SIZE 8         /* a setup reply's status, version and length */
#define XP_REPLY_HEADER_SIZE 8         /* a reply's code, data byte, sequence number and length */
#define XP_SEQUENCE_AT 2               /* a server message's sequence number (2 bytes) */
#define XP_REPLY_LENGTH_AT 4           /* a reply's length (4 bytes), after its sequence number */
enum { XP_ERROR = 0, XP_REPLY = 1 };   /* byte 0 of a server message; events are 2 and up */
struct xp_request_header {
    uint8_t major, data;   /* data: a core request's first byte field, an extension's minor opcode */
    uint16_t length;       /* in 4-byte units; 0: a BIG-REQUESTS length follows */
    uint32_t big_length;   /* when length is 0 and 8 bytes are in, else 0 */
};
static inline bool xp_request_header_view(const uint8_t *m, size_t len, bool msb, struct xp_request_header *v)
{
    if (len < XP_REQUEST_HEADER_SIZE)
        return false;
    v->major = m[0];
    v->data = m[1];
    v->length = ld16(m + 2, msb);
    v->big_length = !v->length && len >= XP_BIG_REQUEST_HEADER_SIZE ? ld32(m + 4, msb) : 0;
    return true;
}
/* Sets a request's length field (4-byte units), or the BIG-REQUESTS one (big). */
static inline void xp_request_set_length(uint8_t *m, uint32_t units, bool big, bool msb)
{
    if (big) {
        st16(m + 2, 0, msb);
        st32(m + 4, units, msb);
    } else {
        st16(m + 2, (uint16_t)units, msb);
    }
}
/* A reply, event or error: its first bytes (a reply's length only means something for a reply,
 * a GenericEvent's for that event). */
struct xp_server_header {
    uint8_t code;          /* 0 error, 1 reply, else an event's code (bit 7: SendEvent) */
    uint8_t data;          /* a reply's first byte field, an event's detail, an error's code */
    uint16_t sequence;     /* not in KeymapNotify */
    uint32_t length;       /* replies and GenericEvents: 4-byte units after the first 32 bytes */
};
static inline bool xp_server_header_view(const uint8_t *m, size_t len, bool msb, struct xp_server_header *v)
{
    if (len < 8)
        return false;
    v->code = m[0];
    v->data = m[1];
    v->sequence = ld16(m + 2, msb);
    v->length = ld32(m + 4, msb);
    return true;
}
static inline void xp_server_set_sequence(uint8_t *m, uint16_t seq, bool msb) { st16(m + 2, seq, msb); }
static inline void xp_server_set_length(uint8_t *m, uint32_t units, bool msb) { st32(m + 4, units, msb); }
/* A GenericEvent's header: its extension's major opcode and the event's type within it. */
struct xp_generic_event_header {
    uint8_t extension;
    uint16_t sequence;
    uint32_t length;       /* 4-byte units after the first 32 bytes */
    uint16_t event_type;
};
static inline bool xp_generic_event_header_view(const uint8_t *m, size_t len, bool msb, struct xp_generic_event_header *v)
{
    if (len < 10)
        return false;
    v->extension = m[1];
    v->sequence = ld16(m + 2, msb);
    v->length = ld32(m + 4, msb);
    v->event_type = ld16(m + 8, msb);
    return true;
}
/* The error message's fields. */
#define XP_ERROR_SIZE 32
struct xp_error {
    uint8_t error_code;
    uint16_t sequence;
    uint32_t bad_value;
    uint16_t minor_opcode;
    uint8_t major_opcode;
};
static inline bool xp_error_view(const uint8_t *m, size_t len, bool msb, struct xp_error *v)
{
    if (len < XP_ERROR_SIZE || m[0] != 0)
        return false;
    v->error_code = m[1];
    v->sequence = ld16(m + 2, msb);
    v->bad_value = ld32(m + 4, msb);
    v->minor_opcode = ld16(m + 8, msb);
    v->major_opcode = m[10];
    return true;
}
/* The i-th 32-bit value of a value list (a mask's values, one per bit set, in bit order) or
 * of any list of CARD32; false when the list is shorter. */
static inline bool xp_card32_at(const uint8_t *list, size_t len, size_t i, bool msb, uint32_t *out)
{
    if (i >= len / 4)
        return false;
    *out = ld32(list + 4 * i, msb);
    return true;
}
/* The value of one bit (a mask of one bit set, such as XP_GC_GRAPHICS_EXPOSURES) in a value
 * list (values in the order of their bits); false when the mask lacks it or the list is cut short. */
static inline bool xp_mask_value(uint32_t mask, uint32_t bit, const uint8_t *list, size_t len, bool msb, uint32_t *out)
{
    if (!bit || (bit & (bit - 1)) || !(mask & bit))
        return false;
    return xp_card32_at(list, len, (size_t)__builtin_popcount(mask & (bit - 1)), msb, out);
}
static inline bool xp_card32_put(uint8_t *list, size_t len, size_t i, uint32_t v, bool msb)
{
    if (i >= len / 4)
        return false;
    st32(list + 4 * i, v, msb);
    return true;
}
/* One field of a message that may be shorter than its fixed part (at: an XP_..._AT constant);
 * false when the message ends before the field does. */
static inline bool xp_peek32(const uint8_t *m, size_t len, size_t at, bool msb, uint32_t *out)
{
    if (len < 4 || at > len - 4)
        return false;
    *out = ld32(m + at, msb);
    return true;
}
static inline bool xp_peek16(const uint8_t *m, size_t len, size_t at, bool msb, uint16_t *out)
{
    if (len < 2 || at > len - 2)
        return false;
    *out = ld16(m + at, msb);
    return true;
}
static inline bool xp_card16_at(const uint8_t *list, size_t len, size_t i, bool msb, uint16_t *out)
{
    if (i >= len / 2)
        return false;
    *out = ld16(list + 2 * i, msb);
    return true;
}
static inline bool xp_card16_put(uint8_t *list, size_t len, size_t i, uint16_t v, bool msb)
{
    if (i >= len / 2)
        return false;
    st16(list + 2 * i, v, msb);
    return true;
}
'''


def emit_enum(h, ext, name):
    """An enum of xcb-proto (values, or bits as masks): XP_[EXT_]ENUM_ITEM."""
    el = ext["root"].find("enum[@name='%s']" % name)
    if el is None:
        raise SystemExit("gen_xproto.py: xcb-proto has no enum %s in %s" % (name, ext["header"]))
    prefix = "XP_" + ("" if ext["xname"] is None else ext["header"].upper() + "_") + upper_snake(name) + "_"
    h.append("enum {  /* %s%s */" % ("" if ext["xname"] is None else ext["xname"] + " ", name))
    for item in el.findall("item"):
        v, b = item.find("value"), item.find("bit")
        val = v.text if v is not None else "1u << %s" % b.text
        h.append("    %s%s = %s," % (prefix, upper_snake(item.get("name")), val))
    h.append("};\n")


def emit_wire(exts, version, spec, out_w):
    opcodes, events, msgs = read_spec(spec)
    by_header = {("core" if e["xname"] is None else e["header"]): e for e in exts}
    sizes = type_sizes([e["root"] for e in exts])
    base = base_types([e["root"] for e in exts])
    h = ["/* xproto_wire.h -- generated by tools/gen_xproto.py from xcb-proto %s and %s. DO NOT EDIT." %
         (version, os.path.basename(spec)),
         " * Typed, bounds-checked access to the messages tincan reads or writes: a view of a message's",
         " * fixed part (xp_NAME_view: false when the message is shorter), and its writer (xp_NAME_put).",
         " * Fields are in the connection's byte order (msb); views read a request in its plain form",
         " * (4-byte header). */",
         "#ifndef TINCAN_XPROTO_WIRE_H\n#define TINCAN_XPROTO_WIRE_H\n",
         "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n",
         '#include "common/buf.h"\n#include "xproto_tables.h"\n']
    for x in opcodes:
        e = by_header.get(x)
        if e is None or e["xname"] is None:
            raise SystemExit("gen_xproto.py: %s: no extension %s in xcb-proto" % (spec, x))
        h.append("/* %s's minor opcodes. */" % e["xname"])
        h.append("enum xp_%s_opcode {" % x)
        for op, r in sorted(e["requests"].items()):
            h.append("    XP_%s_OP_%s = %d," % (x.upper(), upper_snake(r[0]), op))
        h.append("};\n")
    for x in events:  # an extension's events by their number: added to its first event code, or
        e = by_header.get(x)  # a GenericEvent's type, or XKEYBOARD's xkbType
        if e is None or e["xname"] is None:
            raise SystemExit("gen_xproto.py: %s: no extension %s in xcb-proto" % (spec, x))
        h.append("/* %s's events by number (GenericEvent types among them). */" % e["xname"])
        h.append("enum xp_%s_event {" % x)
        for n, name in sorted(list(e["events"].items()) + list(e["xge_events"].items())):
            h.append("    XP_%s_EV_%s = %d," % (x.upper(), upper_snake(name), n))
        h.append("};\n")
    h.append(GENERIC)
    for kind, x, name in msgs:
        e = by_header.get(x)
        if e is None:
            raise SystemExit("gen_xproto.py: %s: no extension %s in xcb-proto" % (spec, x))
        if kind == "enum":
            emit_enum(h, e, name)
        else:
            emit_view(h, e, kind, name, find_message(e, kind, name), sizes, base)
    h.append("#endif")
    with open(out_w, "w") as f:
        f.write("\n".join(h) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--xml-dir", default="/usr/share/xcb")
    ap.add_argument("--out-c", required=True)
    ap.add_argument("--out-h", required=True)
    ap.add_argument("--spec", help="the messages to give typed access to (tools/xproto_wire.spec)")
    ap.add_argument("--out-wire", help="where the typed access goes (xproto_wire.h)")
    a = ap.parse_args()
    try:
        version = subprocess.run(["pkg-config", "--modversion", "xcb-proto"], capture_output=True,
                                 text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        version = "unknown"
    files = sorted(glob.glob(os.path.join(a.xml_dir, "*.xml")))
    if not any(os.path.basename(f) == "xproto.xml" for f in files):
        raise SystemExit("gen_xproto.py: no xproto.xml in %s (install the xcb-proto package)" % a.xml_dir)
    exts = [parse_file(f) for f in files]
    emit(exts, version, a.out_c, a.out_h)
    if a.spec and a.out_wire:
        emit_wire(exts, version, a.spec, a.out_wire)


if __name__ == "__main__":
    main()
