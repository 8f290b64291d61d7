//! The generated layouts against the real headers: for 2.28.3 and 2.32.3 by default
//! (`CUDAJIT_NCCL_LAYOUT_VERSIONS` for others), nvcc compiles a probe printing every
//! probed struct's size and alignment and every field's offset and size, and the test
//! compares them with `sys::layout`. Headers come from fetch-wheels.sh's cache.

mod common;

use std::path::Path;
use std::process::Command;

use cudajit_nccl::device_code::nvcc::{self, Nvcc};
use cudajit_nccl::sys::layout::{self, Generation};
use cudajit_nccl::NcclVersion;

fn versions() -> Vec<String> {
    std::env::var("CUDAJIT_NCCL_LAYOUT_VERSIONS")
        .unwrap_or_else(|_| "2.28.3 2.32.3".into())
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn generation_of(version: &str) -> &'static Generation {
    let v = version
        .split('.')
        .map(|p| p.parse::<u32>().unwrap())
        .collect::<Vec<_>>();
    let v = NcclVersion::new(v[0], v[1], v[2]);
    let sel = layout::select(v).expect("supported release");
    assert!(sel.exact, "no generated layouts for {version}");
    sel.generation
}

fn probe_source(g: &Generation) -> String {
    let mut s = String::from("#include <nccl.h>\n#include <nccl_device.h>\n#include <cstdio>\n#include <cstddef>\nint main() {\n");
    for st in g.structs {
        s += &format!(
            "  printf(\"struct {0} %zu %zu\\n\", sizeof({0}), alignof({0}));\n",
            st.strukt
        );
    }
    for f in g.fields {
        s += &format!(
            "  printf(\"field {0} {1} %zu %zu\\n\", offsetof({0}, {1}), sizeof((({0}*)0)->{1}));\n",
            f.strukt, f.field
        );
    }
    s += "  return 0;\n}\n";
    s
}

fn compile_and_run(nvcc: &Nvcc, include: &Path, src: &str, work: &Path) -> Result<String, String> {
    let file = work.join("probe.cu");
    std::fs::write(&file, src).map_err(|e| e.to_string())?;
    let exe = work.join("probe");
    // The same nvcc, CUDA include path and header fallbacks as the bridge build.
    let build = |defines: &[&str]| {
        let mut cmd = nvcc.command(include);
        cmd.args(defines).arg("-o").arg(&exe).arg(&file);
        cmd
    };
    nvcc::run_with_header_fallbacks(build)
        .map_err(|(command, out)| format!("nvcc failed:\n$ {command}\n{out}"))?;
    let run = Command::new(&exe).output().map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}

#[test]
fn generated_layouts_match_the_real_headers() {
    let nvcc = match Nvcc::locate(&common::tools_env()) {
        Ok(nvcc) => nvcc,
        Err(e) => {
            common::skip(&format!("no nvcc with CUDA headers: {e}"));
            return;
        }
    };
    for version in versions() {
        let Some(dir) = common::release_dir(&version) else {
            common::skip(&format!(
                "no NCCL {version} headers in {}",
                common::cache_root().display()
            ));
            continue;
        };
        let g = generation_of(&version);
        let work = std::env::temp_dir().join(format!(
            "cudajit-nccl-layout-{}-{version}",
            std::process::id()
        ));
        std::fs::create_dir_all(&work).unwrap();
        let out = compile_and_run(&nvcc, &dir.join("include"), &probe_source(g), &work)
            .unwrap_or_else(|e| panic!("NCCL {version}: {e}"));
        let _ = std::fs::remove_dir_all(&work);
        let mut checked = 0;
        for line in out.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["struct", name, size, align] => {
                    let st = g.struct_layout(name).unwrap();
                    assert_eq!(
                        (st.size.to_string(), st.align.to_string()),
                        (size.to_string(), align.to_string()),
                        "NCCL {version}: {name} size/align"
                    );
                }
                ["field", strukt, field, offset, size] => {
                    let f = g
                        .fields
                        .iter()
                        .find(|f| f.strukt == *strukt && f.field == *field)
                        .unwrap();
                    assert_eq!(
                        (f.offset.to_string(), f.size.to_string()),
                        (offset.to_string(), size.to_string()),
                        "NCCL {version}: {strukt}.{field}"
                    );
                }
                _ => panic!("unexpected probe output {line:?}"),
            }
            checked += 1;
        }
        assert_eq!(
            checked,
            g.structs.len() + g.fields.len(),
            "NCCL {version}: probe output incomplete"
        );
        eprintln!(
            "NCCL {version}: {checked} sizes/offsets match the headers (generation {})",
            g.name
        );
    }
}

#[test]
fn headers_declare_the_release_their_directory_names() {
    for version in versions() {
        let Some(dir) = common::release_dir(&version) else {
            common::skip(&format!("no NCCL {version} headers"));
            continue;
        };
        let v = NcclVersion::from_header(&dir.join("include/nccl.h")).unwrap();
        assert_eq!(v.to_string(), version);
    }
}
