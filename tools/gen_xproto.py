#!/usr/bin/env python3
"""gen_xproto.py -- turns the xcb-proto XML descriptions into C tables for tincan.

Emits, per extension (and for the core protocol): request names by (minor) opcode and
whether each has a reply, event names by number (and GenericEvent sub-types), error names.
Only what the proxy needs to frame, account and route messages; everything else is
forwarded by its length. The output is marked generated and is never edited by hand.
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
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


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
    for n, name in sorted(core["events"].items()):
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


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--xml-dir", default="/usr/share/xcb")
    ap.add_argument("--out-c", required=True)
    ap.add_argument("--out-h", required=True)
    a = ap.parse_args()
    try:
        version = subprocess.run(["pkg-config", "--modversion", "xcb-proto"], capture_output=True,
                                 text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        version = "unknown"
    files = sorted(glob.glob(os.path.join(a.xml_dir, "*.xml")))
    if not any(os.path.basename(f) == "xproto.xml" for f in files):
        raise SystemExit("gen_xproto.py: no xproto.xml in %s (install the xcb-proto package)" % a.xml_dir)
    emit([parse_file(f) for f in files], version, a.out_c, a.out_h)


if __name__ == "__main__":
    main()
