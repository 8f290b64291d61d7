#!/usr/bin/env python3
"""Generates cudajit-nccl's per-generation struct layouts from real NCCL headers.

Run through scripts/regenerate-bindings.sh, which fetches the headers first. For every
NCCL release in the cache this script

1. preprocesses `nccl.h` + `nccl_device.h` with nvcc and reads the field lists of
   `ncclConfig_t`, `ncclDevCommRequirements`, `ncclCommProperties` and `ncclDevComm`;
2. compiles a host probe with nvcc that prints, as the C++ compiler computes them, the size,
   alignment and every field offset of those structs and the bytes of their
   `NCCL_*_INITIALIZER` values (zero-initialised where the release has no initializer);
3. groups releases whose layouts are identical into one *generation*, and writes one Rust
   module per generation (`#[repr(C)]` structs, initializers, the offset table the tests
   check, compile-time assertions that rustc's layout equals the C layout) plus the module
   index `generated/mod.rs`.

A release whose headers disagree with the Rust layout rustc computes fails the build of
the generated code itself (the assertions), so a wrong mapping cannot go unnoticed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

STRUCTS = {
    # Rust/C name -> regex finding the struct body in the preprocessed headers.
    "ncclConfig_t": r"typedef\s+struct\s+ncclConfig_v\d+\s*\{",
    "ncclDevCommRequirements": r"struct\s+ncclDevCommRequirements\s*\{",
    "ncclCommProperties": r"struct\s+ncclCommProperties\s*\{",
}
DEV_COMM_FIELDS = ["magic", "version", "rank", "nRanks", "lsaRank", "lsaSize"]

# The ncclDevCommRequirements fields cudajit sets, by the RequirementField variant.
REQUIREMENT_FIELDS = [
    ("LsaBarrierCount", "lsaBarrierCount"),
    ("BarrierCount", "barrierCount"),
    ("RailGinBarrierCount", "railGinBarrierCount"),
    ("WorldGinBarrierCount", "worldGinBarrierCount"),
    ("GinContextCount", "ginContextCount"),
    ("GinSignalCount", "ginSignalCount"),
    ("GinCounterCount", "ginCounterCount"),
]

# The ncclCommProperties fields read back, by the CommProperties field they fill.
PROPERTY_FIELDS = [
    ("rank", "rank", "int"),
    ("n_ranks", "nRanks", "int"),
    ("cuda_device", "cudaDev", "int"),
    ("device_api_support", "deviceApiSupport", "bool"),
    ("multimem_support", "multimemSupport", "bool"),
    ("n_lsa_teams", "nLsaTeams", "opt_int"),
    ("dev_comm_runtime_size", "devCommRuntimeVersionSize", "opt_usize"),
]

SCALARS = {
    "size_t": ("usize", 8, False),
    "unsigned int": ("c_uint", 4, False),
    "int": ("c_int", 4, True),
    "bool": ("u8", 1, False),
    "char": ("c_char", 1, True),
    "uint64_t": ("u64", 8, False),
    "int64_t": ("i64", 8, True),
    "uint32_t": ("u32", 4, False),
    "int32_t": ("i32", 4, True),
    "uint8_t": ("u8", 1, False),
    "float": ("f32", 4, None),
}


def die(msg):
    print(f"gen_layouts: {msg}", file=sys.stderr)
    sys.exit(1)


def struct_body(text, pattern):
    m = re.search(pattern, text)
    if not m:
        return None
    depth, i = 1, m.end()
    start = i
    while depth:
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
        i += 1
    return text[start : i - 1]


def parse_fields(body, enums):
    """[(name, c_type, is_pointer, array_len)] of a flat C struct body."""
    fields = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl or decl.startswith("#"):
            continue
        m = re.match(r"^((?:const\s+|struct\s+|unsigned\s+)*[A-Za-z_]\w*)\s*(.*)$", decl)
        if not m:
            die(f"cannot parse declaration {decl!r}")
        base, rest = m.group(1), m.group(2)
        base = base.replace("const ", "").replace("struct ", "").strip()
        for declarator in rest.split(","):
            declarator = declarator.strip()
            ptr = declarator.count("*")
            name_m = re.match(r"^\**\s*(?:const\s+)?(\w+)\s*(?:\[(\w+)\])?$", declarator)
            if not name_m:
                die(f"cannot parse declarator {declarator!r} in {decl!r}")
            name, arr = name_m.group(1), name_m.group(2)
            fields.append((name, base, ptr > 0, int(arr) if arr else None))
    return fields


def rust_type(c_type, is_ptr, enums):
    if is_ptr:
        return "*mut c_void"
    if c_type in SCALARS:
        return SCALARS[c_type][0]
    if c_type in enums:
        return SCALARS[enums[c_type]][0]  # the probe checks the size matches
    die(f"no Rust mapping for C type {c_type!r}")


def probe_source(structs, devcomm_fields):
    out = [
        "#include <nccl.h>",
        "#include <nccl_device.h>",
        "#include <cstdio>",
        "#include <cstddef>",
        "#include <cstring>",
        "static void bytes(const char* what, const void* p, size_t n) {",
        "  printf(\"%s \", what);",
        "  for (size_t i = 0; i < n; i++) printf(\"%02x\", ((const unsigned char*)p)[i]);",
        "  printf(\"\\n\");",
        "}",
    ]
    inits = {
        "ncclConfig_t": "NCCL_CONFIG_INITIALIZER",
        "ncclDevCommRequirements": "NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER",
        "ncclCommProperties": "NCCL_COMM_PROPERTIES_INITIALIZER",
    }
    for name in structs:
        macro = inits[name]
        out += [
            f"#ifdef {macro}",
            f"static {name} init_{name} = {macro};",
            "#else",
            f"static {name} init_{name} = {{}};",
            "#endif",
        ]
    out.append("int main() {")
    for name, fields in structs.items():
        out.append(f'  printf("struct {name} %zu %zu\\n", sizeof({name}), alignof({name}));')
        for f in fields:
            fname = f[0]
            out.append(
                f'  printf("field {name} {fname} %zu %zu\\n", offsetof({name}, {fname}), '
                f"sizeof((({name}*)0)->{fname}));"
            )
        out.append(f'  bytes("init {name}", &init_{name}, sizeof({name}));')
    out.append('  printf("struct ncclDevComm %zu %zu\\n", sizeof(ncclDevComm), alignof(ncclDevComm));')
    for f in devcomm_fields:
        out.append(
            f'  printf("field ncclDevComm {f} %zu %zu\\n", offsetof(ncclDevComm, {f}), '
            f"sizeof(((ncclDevComm*)0)->{f}));"
        )
    out.append('  printf("struct ncclUniqueId %zu %zu\\n", sizeof(ncclUniqueId), alignof(ncclUniqueId));')
    out.append('  printf("struct ncclWindow_vidmem %zu %zu\\n", sizeof(ncclWindow_vidmem), alignof(ncclWindow_vidmem));')
    out.append('  printf("version %d\\n", NCCL_VERSION_CODE);')
    out.append("  return 0;\n}")
    return "\n".join(out) + "\n"


def nvcc_flags(include, cuda, defines=()):
    return [
        *defines,
        "-I", include,
        "-I", os.path.join(cuda, "include"),
        "-I", os.path.join(cuda, "include", "cccl"),
        "-L", os.path.join(cuda, "lib"),
    ]


def probe_version(nvcc, include, cuda, work):
    src = os.path.join(work, "headers.cu")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\n#include <nccl_device.h>\n")
    defines = []
    pre = subprocess.run(
        [nvcc, "-E", *nvcc_flags(include, cuda), src], capture_output=True, text=True
    )
    if pre.returncode != 0 and "doca_gpunetio" in pre.stderr:
        # Some wheels (2.28.7) ship gin_gdaki.h without the DOCA headers it includes. GDAKI
        # only adds device functions; the structs probed here do not depend on it.
        defines = ["-DNCCL_GIN_GDAKI_ENABLE=0"]
        pre = subprocess.run(
            [nvcc, "-E", *nvcc_flags(include, cuda, defines), src], capture_output=True, text=True
        )
    if pre.returncode != 0:
        die(f"nvcc -E failed for {include}:\n{pre.stderr}")
    text = pre.stdout
    # C enums: name -> underlying C type (`int` unless declared `enum : uint8_t`).
    enums = {
        name: (base or "int")
        for base, name in re.findall(
            r"typedef\s+enum\s*\w*\s*(?::\s*(\w+))?\s*\{[^}]*\}\s*(\w+)\s*;", text
        )
    }
    structs = {}
    for name, pattern in STRUCTS.items():
        body = struct_body(text, pattern)
        if body is not None:
            structs[name] = parse_fields(body, enums)
    devcomm_body = struct_body(text, r"struct\s+ncclDevComm\s*\{")
    if devcomm_body is None:
        die(f"no struct ncclDevComm in {include}")
    devcomm_names = {n for (n, *_rest) in parse_fields_loose(devcomm_body)}
    devcomm_fields = [f for f in DEV_COMM_FIELDS if f in devcomm_names]

    probe = os.path.join(work, "probe.cu")
    with open(probe, "w") as f:
        f.write(probe_source(structs, devcomm_fields))
    exe = os.path.join(work, "probe")
    build = subprocess.run(
        [nvcc, *nvcc_flags(include, cuda, defines), "-o", exe, probe], capture_output=True, text=True
    )
    if build.returncode != 0:
        die(f"nvcc failed to build the probe for {include}:\n{build.stderr}")
    run = subprocess.run([exe], capture_output=True, text=True, check=True)
    result = parse_probe(run.stdout, structs, devcomm_fields, enums)
    result["defines"] = defines
    return result


def parse_fields_loose(body):
    """Field names of a struct whose members may be nested types (ncclDevComm)."""
    names = []
    for decl in body.split(";"):
        for part in " ".join(decl.split()).split(","):
            m = re.search(r"(\w+)\s*(?:\[[^\]]*\])?$", part.strip())
            if m:
                names.append((m.group(1),))
    return names


def parse_probe(output, structs, devcomm_fields, enums):
    result = {"structs": {}, "version": None}
    current = None
    for line in output.splitlines():
        parts = line.split()
        if parts[0] == "struct":
            current = {"size": int(parts[2]), "align": int(parts[3]), "fields": [], "init": None}
            result["structs"][parts[1]] = current
        elif parts[0] == "field":
            result["structs"][parts[1]]["fields"].append(
                {"name": parts[2], "offset": int(parts[3]), "size": int(parts[4])}
            )
        elif parts[0] == "init":
            result["structs"][parts[1]]["init"] = parts[2] if len(parts) > 2 else ""
        elif parts[0] == "version":
            result["version"] = int(parts[1])
    for name, fields in structs.items():
        probed = result["structs"][name]["fields"]
        for (fname, c_type, is_ptr, arr), p in zip(fields, probed):
            p["c_type"] = c_type + ("*" if is_ptr else "")
            p["scalar"] = "ptr" if is_ptr else enums.get(c_type, c_type)
            p["rust"] = rust_type(c_type, is_ptr, enums)
            p["array"] = arr
            elem = p["size"] // (arr or 1)
            scalar = enums.get(c_type, c_type)
            expected = 8 if is_ptr else SCALARS[scalar][1]
            if elem != expected:
                die(f"{name}.{fname}: C size {elem}, mapped Rust type {p['rust']} has {expected}")
    return result


def init_value(struct, field):
    raw = bytes.fromhex(struct["init"])
    chunk = raw[field["offset"] : field["offset"] + field["size"]]
    rust = field["rust"]
    if field["array"]:
        if any(chunk):
            die(f"non-zero initializer for array field {field['name']}")
        return f"[0; {field['array']}]"
    if rust == "*mut c_void":
        if any(chunk):
            die(f"non-null initializer for pointer field {field['name']}")
        return "core::ptr::null_mut()"
    signed = SCALARS[field["scalar"]][2]
    value = int.from_bytes(chunk, "little", signed=bool(signed))
    if rust == "c_int" and value == -(2**31):
        return "c_int::MIN"
    if value >= 0x10000 and not signed:
        return f"0x{value:x}"
    return str(value)


def layout_key(probe):
    s = dict(probe["structs"])
    return json.dumps(
        {k: {kk: vv for kk, vv in v.items() if kk != "init"} | {"init_shape": init_shape(v)}
         for k, v in s.items()},
        sort_keys=True,
    )


def init_shape(struct):
    """The initializer with the version field blanked (it differs per release)."""
    if struct.get("init") is None:
        return None
    raw = bytearray(bytes.fromhex(struct["init"]))
    for f in struct["fields"]:
        if f["name"] == "version":
            raw[f["offset"] : f["offset"] + f["size"]] = b"\0" * f["size"]
    return raw.hex()


def version_text(code):
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}"


def module_name(code):
    return "v" + version_text(code).replace(".", "_")


HEADER = """\
// @generated by nccl-device/scripts/gen_layouts.py from the headers of the
// nvidia-nccl-cu13 wheels {versions}. Do not edit.
// Regenerate with `nccl-device/scripts/regenerate-bindings.sh`.
"""


def emit_generation(codes, probe):
    s = probe["structs"]
    name = module_name(codes[0])
    lines = [HEADER.format(versions=", ".join(version_text(c) for c in codes)).rstrip("\n")]
    lines += [
        f"//! Layouts shared by NCCL {', '.join(version_text(c) for c in codes)}.",
        "#![allow(non_camel_case_types, non_snake_case, clippy::all)]",
        "",
        "use core::ffi::{c_int, c_uint, c_void};",
        "use core::mem::{align_of, offset_of, size_of};",
        "",
        "#[allow(unused_imports)]",
        "use crate::sys::layout::{",
        "    CommProperties, DevCommLayout, FieldLayout, Generation, PropertiesOps, RawStruct,",
        "    RequirementField, StructLayout,",
        "};",
        "",
        f"/// `NCCL_VERSION_CODE`s of the releases with these layouts.",
        f"pub const VERSIONS: &[u32] = &[{', '.join(str(c) for c in codes)}];",
        "",
    ]
    for sname in ["ncclConfig_t", "ncclDevCommRequirements", "ncclCommProperties"]:
        if sname not in s:
            continue
        st = s[sname]
        lines.append(f"/// `{sname}` ({st['size']} bytes, align {st['align']}).")
        lines.append("#[repr(C)]")
        lines.append("#[derive(Clone, Copy, Debug)]")
        lines.append(f"pub struct {sname} {{")
        for f in st["fields"]:
            ty = f"[{f['rust']}; {f['array']}]" if f["array"] else f["rust"]
            lines.append(f"    /// C `{f['c_type']}{'[' + str(f['array']) + ']' if f['array'] else ''}`, offset {f['offset']}.")
            lines.append(f"    pub {f['name']}: {ty},")
        lines.append("}")
        lines.append("")
        const = {
            "ncclConfig_t": "CONFIG_INITIALIZER",
            "ncclDevCommRequirements": "DEV_COMM_REQUIREMENTS_INITIALIZER",
            "ncclCommProperties": "COMM_PROPERTIES_INITIALIZER",
        }[sname]
        lines.append(f"/// The headers' initializer for `{sname}` (all zero where the release has none).")
        if any(f["name"] == "version" for f in st["fields"]):
            lines.append("/// `version` holds the first release's code; it is set at run time.")
        lines.append(f"pub const {const}: {sname} = {sname} {{")
        for f in st["fields"]:
            lines.append(f"    {f['name']}: {init_value(st, f)},")
        lines.append("};")
        lines.append("")
        lines.append("const _: () = {")
        lines.append(f"    assert!(size_of::<{sname}>() == {st['size']});")
        lines.append(f"    assert!(align_of::<{sname}>() == {st['align']});")
        for f in st["fields"]:
            lines.append(f"    assert!(offset_of!({sname}, {f['name']}) == {f['offset']});")
        lines.append("};")
        lines.append("")

    dc = s["ncclDevComm"]
    dcf = {f["name"]: f["offset"] for f in dc["fields"]}
    lines.append("/// `ncclDevComm`: opaque to Rust; size, alignment and the offsets cudajit reads.")
    lines.append("pub const DEV_COMM: DevCommLayout = DevCommLayout {")
    lines.append(f"    size: {dc['size']},")
    lines.append(f"    align: {dc['align']},")
    for rust, c in [("rank", "rank"), ("n_ranks", "nRanks"), ("lsa_rank", "lsaRank"), ("lsa_size", "lsaSize")]:
        lines.append(f"    {rust}: {dcf[c]},")
    lines.append("};")
    lines.append("")

    lines.append("/// Every probed field, for the tests that re-check them against the headers.")
    lines.append("pub const FIELDS: &[FieldLayout] = &[")
    for sname in ["ncclConfig_t", "ncclDevCommRequirements", "ncclCommProperties", "ncclDevComm"]:
        if sname not in s:
            continue
        for f in s[sname]["fields"]:
            lines.append(
                f'    FieldLayout {{ strukt: "{sname}", field: "{f["name"]}", offset: {f["offset"]}, size: {f["size"]} }},'
            )
    lines.append("];")
    lines.append("")
    lines.append("/// Struct sizes and alignments, for the same tests.")
    lines.append("pub const STRUCTS: &[StructLayout] = &[")
    for sname in ["ncclConfig_t", "ncclDevCommRequirements", "ncclCommProperties", "ncclDevComm",
                  "ncclUniqueId", "ncclWindow_vidmem"]:
        if sname in s:
            lines.append(
                f'    StructLayout {{ strukt: "{sname}", size: {s[sname]["size"]}, align: {s[sname]["align"]} }},'
            )
    lines.append("];")
    lines.append("")

    req_names = {f["name"] for f in s["ncclDevCommRequirements"]["fields"]}
    lines.append("fn config(blocking: bool, version: u32) -> RawStruct {")
    lines.append("    let mut c = CONFIG_INITIALIZER;")
    lines.append("    c.version = version;")
    lines.append("    c.blocking = c_int::from(blocking);")
    lines.append("    RawStruct::of(&c)")
    lines.append("}")
    lines.append("")
    lines.append("fn requirements(fields: &[(RequirementField, c_int)], version: u32) -> Result<RawStruct, RequirementField> {")
    lines.append("    let mut r = DEV_COMM_REQUIREMENTS_INITIALIZER;")
    if "version" in req_names:
        lines.append("    r.version = version;")
    else:
        lines.append("    let _ = version; // this generation's requirements carry no version")
    lines.append("    for &(field, value) in fields {")
    lines.append("        match field {")
    for variant, cname in REQUIREMENT_FIELDS:
        if cname in req_names:
            lines.append(f"            RequirementField::{variant} => r.{cname} = value,")
    lines.append("            #[allow(unreachable_patterns)]")
    lines.append("            other => return Err(other),")
    lines.append("        }")
    lines.append("    }")
    lines.append("    Ok(RawStruct::of(&r))")
    lines.append("}")
    lines.append("")
    props = s.get("ncclCommProperties")
    if props:
        pnames = {f["name"] for f in props["fields"]}
        lines.append("fn properties_init(version: u32) -> RawStruct {")
        lines.append("    let mut p = COMM_PROPERTIES_INITIALIZER;")
        lines.append("    p.version = version;")
        lines.append("    RawStruct::of(&p)")
        lines.append("}")
        lines.append("")
        lines.append("fn properties_read(raw: &RawStruct) -> CommProperties {")
        lines.append("    // SAFETY: every field of ncclCommProperties is an integer, a `u8` for `bool` or an")
        lines.append("    // array of those, so any bytes are a valid value; `read` checks the length.")
        lines.append("    let p: ncclCommProperties = unsafe { raw.read() };")
        lines.append("    CommProperties {")
        for rust, cname, kind in PROPERTY_FIELDS:
            present = cname in pnames
            if kind == "int":
                val = f"p.{cname}"
            elif kind == "bool":
                val = f"p.{cname} != 0"
            elif kind == "opt_int":
                val = f"Some(p.{cname})" if present else "None"
            elif kind == "opt_usize":
                val = f"Some(p.{cname})" if present else "None"
            if not present and kind in ("int", "bool"):
                die(f"ncclCommProperties lacks {cname}")
            lines.append(f"        {rust}: {val},")
        lines.append("    }")
        lines.append("}")
        lines.append("")
    lines.append("/// This generation, for run-time selection by version.")
    lines.append("pub static GENERATION: Generation = Generation {")
    lines.append(f'    name: "{version_text(codes[0])}",')
    lines.append("    versions: VERSIONS,")
    lines.append("    dev_comm: DEV_COMM,")
    lines.append("    fields: FIELDS,")
    lines.append("    structs: STRUCTS,")
    lines.append("    config,")
    lines.append("    requirements,")
    if props:
        lines.append("    properties: Some(PropertiesOps { init: properties_init, read: properties_read }),")
    else:
        lines.append("    properties: None,")
    lines.append("};")
    return name, "\n".join(lines) + "\n"


def emit_index(generations):
    all_codes = [c for codes, _ in generations for c in codes]
    lines = [HEADER.format(versions=", ".join(version_text(c) for c in all_codes)).rstrip("\n")]
    lines += [
        "//! One module per NCCL layout generation (releases with identical host-visible layouts).",
        "",
    ]
    for codes, _ in generations:
        lines.append(f"pub mod {module_name(codes[0])};")
    lines += ["", "use super::Generation;", "", "/// Every generation, oldest first.",
              "pub static ALL: &[&Generation] = &["]
    for codes, _ in generations:
        lines.append(f"    &{module_name(codes[0])}::GENERATION,")
    lines.append("];")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", required=True, help="fetch-wheels.sh cache root")
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--out", required=True, help="src/sys/layout/generated")
    ap.add_argument("--json", help="also write the raw probe results here")
    ap.add_argument("versions", nargs="+")
    args = ap.parse_args()

    cuda = os.path.join(args.cache, "cuda-13.0", "nvidia", "cu13")
    probes = {}
    with tempfile.TemporaryDirectory() as work:
        for v in args.versions:
            include = os.path.join(args.cache, v, "nvidia", "nccl", "include")
            if not os.path.isfile(os.path.join(include, "nccl.h")):
                die(f"no headers for {v} in {include}: run fetch-wheels.sh {v}")
            p = probe_version(args.nvcc, include, cuda, work)
            if version_text(p["version"]) != v:
                die(f"{include} says NCCL_VERSION_CODE {p['version']}, expected {v}")
            probes[p["version"]] = p
            s = p["structs"]
            print(
                f"  {v}: ncclDevComm {s['ncclDevComm']['size']} B, requirements "
                f"{s['ncclDevCommRequirements']['size']} B, config {s['ncclConfig_t']['size']} B, "
                f"properties {s.get('ncclCommProperties', {}).get('size', '-')} B, "
                f"window {s['ncclWindow_vidmem']['size']} B"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({str(k): v for k, v in probes.items()}, f, indent=1, sort_keys=True)

    groups = []
    for code in sorted(probes):
        key = layout_key(probes[code])
        if groups and groups[-1][0] == key:
            groups[-1][1].append(code)
        else:
            groups.append((key, [code]))
    generations = [(codes, probes[codes[0]]) for _, codes in groups]

    os.makedirs(args.out, exist_ok=True)
    for old in os.listdir(args.out):
        if old.endswith(".rs"):
            os.remove(os.path.join(args.out, old))
    for codes, probe in generations:
        name, text = emit_generation(codes, probe)
        with open(os.path.join(args.out, name + ".rs"), "w") as f:
            f.write(text)
    with open(os.path.join(args.out, "mod.rs"), "w") as f:
        f.write(emit_index(generations))
    rs = [os.path.join(args.out, n) for n in sorted(os.listdir(args.out)) if n.endswith(".rs")]
    subprocess.run(["rustfmt", "--edition", "2021", *rs], check=True)
    print(f"  {len(generations)} generations: "
          + "; ".join(", ".join(version_text(c) for c in codes) for codes, _ in generations))


if __name__ == "__main__":
    main()
