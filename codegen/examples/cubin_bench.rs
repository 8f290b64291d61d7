//! cudajit's cubin check (`cudajit_codegen::cubin::inspect`, built on the `object` crate)
//! against the hand-written parser it replaced, on real cubins: both must agree, and each
//! is timed (`docs/performance.md#the-cubin-check`).
//!
//! ```sh
//! CUDAJIT_DUMP=/tmp/cj-cubins cargo test --test pipeline   # writes real cubins
//! cargo run --release -p cudajit-codegen --example cubin_bench -- /tmp/cj-cubins
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

/// A byte string that is not a usable cubin.
#[derive(Debug)]
#[allow(dead_code)]
struct HandError(&'static str);
const EM_CUDA: u16 = 190;
const SHT_SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;

/// `N` little-endian bytes at `at`.
fn bytes_at<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], HandError> {
    bytes
        .get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or(HandError("truncated"))
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, HandError> {
    bytes_at(bytes, at).map(u16::from_le_bytes)
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, HandError> {
    bytes_at(bytes, at).map(u32::from_le_bytes)
}

fn u64_at(bytes: &[u8], at: usize) -> Result<usize, HandError> {
    bytes_at(bytes, at).map(|b| u64::from_le_bytes(b) as usize)
}

/// cudajit's hand-written parser before it used `object` (codegen/src/cubin.rs until 2026-12).
fn hand_written(bytes: &[u8]) -> Result<(u32, Vec<String>), HandError> {
    if bytes.get(..4) != Some(b"\x7fELF") {
        return Err(HandError("no ELF magic"));
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err(HandError("not a 64-bit little-endian ELF"));
    }
    if u16_at(bytes, 18)? != EM_CUDA {
        return Err(HandError("ELF machine is not CUDA"));
    }
    let flags = u32_at(bytes, 48)?;
    let section_offset = u64_at(bytes, 40)?;
    let section_size = usize::from(u16_at(bytes, 58)?);
    let section_count = usize::from(u16_at(bytes, 60)?);
    let section = |index: usize| section_offset + index * section_size;
    let mut functions = Vec::new();
    for index in 0..section_count {
        let header = section(index);
        if u32_at(bytes, header + 4)? != SHT_SYMTAB {
            continue;
        }
        let offset = u64_at(bytes, header + 24)?;
        let size = u64_at(bytes, header + 32)?;
        let link = u32_at(bytes, header + 40)? as usize;
        let entry_size = u64_at(bytes, header + 56)?.max(24);
        let strings = section(link);
        let strings_offset = u64_at(bytes, strings + 24)?;
        let strings_size = u64_at(bytes, strings + 32)?;
        let table = bytes
            .get(strings_offset..strings_offset + strings_size)
            .ok_or(HandError("string table out of range"))?;
        for symbol in (offset..offset + size).step_by(entry_size) {
            let name = u32_at(bytes, symbol)? as usize;
            let info = *bytes.get(symbol + 4).ok_or(HandError("truncated"))?;
            if info & 0xf != STT_FUNC {
                continue;
            }
            let rest = table.get(name..).ok_or(HandError("bad symbol name"))?;
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            functions.push(String::from_utf8_lossy(&rest[..end]).into_owned());
        }
    }
    Ok((flags, functions))
}

fn cubins(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            cubins(&path, out);
        } else if path.extension().is_some_and(|e| e == "cubin") {
            out.push(path);
        }
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/cj-cubins".into());
    let mut paths = Vec::new();
    cubins(Path::new(&dir), &mut paths);
    let files: Vec<Vec<u8>> = paths.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    assert!(!files.is_empty(), "no .cubin under {dir}");
    let total: usize = files.iter().map(Vec::len).sum();
    let mut functions = 0;
    for (bytes, path) in files.iter().zip(&paths) {
        let ours = cudajit_codegen::cubin::inspect(bytes).expect("object");
        let theirs = hand_written(bytes).expect("hand-written");
        assert_eq!(
            (ours.flags, &ours.functions),
            (theirs.0, &theirs.1),
            "{}",
            path.display()
        );
        functions += ours.functions.len();
    }
    println!(
        "{} cubins ({} KB, {functions} functions) under {dir}: both parsers agree",
        files.len(),
        total / 1000
    );
    let rounds = (200_000_000 / total.max(1)).clamp(10, 100_000);
    let time = |name: &str, f: &dyn Fn(&[u8]) -> usize| {
        let started = Instant::now();
        let mut n = 0;
        for _ in 0..rounds {
            for bytes in &files {
                n += f(bytes);
            }
        }
        let per = started.elapsed().as_secs_f64() / (rounds * files.len()) as f64;
        println!(
            "  {name:<8} {:>7.2} µs per cubin ({n} functions seen)",
            per * 1e6
        );
    };
    time("object", &|b| {
        cudajit_codegen::cubin::inspect(b).map_or(0, |i| i.functions.len())
    });
    time("hand", &|b| hand_written(b).map_or(0, |i| i.1.len()));
}
