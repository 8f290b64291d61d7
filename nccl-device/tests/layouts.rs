//! The generated layouts against the real headers: for 2.28.3 and 2.32.3 by default
//! (`CUDAJIT_NCCL_LAYOUT_VERSIONS` for others), nvcc compiles a probe printing every
//! probed struct's size and alignment and every field's offset and size, and the test
//! compares them with `sys::layout`. Headers come from fetch-wheels.sh's cache.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cudajit_nccl::sys::layout::{self, Generation};
use cudajit_nccl::NcclVersion;

fn versions() -> Vec<String> {
    std::env::var("CUDAJIT_NCCL_LAYOUT_VERSIONS")
        .unwrap_or_else(|_| "2.28.3 2.32.3".into())
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CUDAJIT_NVCC").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::var_os("CUDAJIT_TOOLS_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    dirs.push(home.join(".cache/cudajit-tools/cu13.0.88/site-packages"));
    dirs.push(home.join(".cache/cudajit-tools/site-packages"));
    dirs.into_iter()
        .map(|d| d.join("nvidia/cu13/bin/nvcc"))
        .find(|p| p.is_file())
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

fn compile_and_run(nvcc: &Path, include: &Path, src: &str, work: &Path) -> Result<String, String> {
    let cuda = common::cache_root().join("cuda-13.0/nvidia/cu13");
    let file = work.join("probe.cu");
    std::fs::write(&file, src).map_err(|e| e.to_string())?;
    let exe = work.join("probe");
    let build = |defines: &[&str]| {
        Command::new(nvcc)
            .args(defines)
            .arg("-I")
            .arg(include)
            .arg("-I")
            .arg(cuda.join("include"))
            .arg("-I")
            .arg(cuda.join("include/cccl"))
            .arg("-L")
            .arg(cuda.join("lib"))
            .arg("-o")
            .arg(&exe)
            .arg(&file)
            .output()
    };
    let mut out = build(&[]).map_err(|e| format!("running {}: {e}", nvcc.display()))?;
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("doca_gpunetio") {
        // 2.28.7's wheel lacks the DOCA headers gin_gdaki.h includes (as in gen_layouts.py).
        out = build(&["-DNCCL_GIN_GDAKI_ENABLE=0"]).map_err(|e| e.to_string())?;
    }
    if !out.status.success() {
        return Err(format!(
            "nvcc failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = Command::new(&exe).output().map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}

#[test]
fn generated_layouts_match_the_real_headers() {
    let Some(nvcc) = nvcc() else {
        common::skip(
            "no nvcc (CUDAJIT_NVCC, or the nvidia-cuda-nvcc wheel under CUDAJIT_TOOLS_DIR)",
        );
        return;
    };
    if !common::cache_root().join("cuda-13.0/.complete").is_file() {
        common::skip(&format!(
            "no CUDA headers in {}",
            common::cache_root().join("cuda-13.0").display()
        ));
        return;
    }
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
