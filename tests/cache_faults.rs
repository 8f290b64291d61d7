//! Fault injection against the real cache code, with real compiles, in child processes
//! (the disk cache is chosen once per process, as in production):
//! damaged entries of every kind, unsafe ownership, a read-only and a vanished directory,
//! the size cap, miss explanations, and 2 and 8 processes (and 8 threads) compiling the
//! same kernel at once: exactly one compile, every one gets a valid cubin.
//!
//! Each scenario is counted in docs/reliability.md.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use cudajit::codegen::cache::entry;
use cudajit::codegen::toolchain::invocation_counts;
use cudajit::prelude::*;
use cudajit::Arch;

#[kernel]
fn fault_a(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

#[kernel]
fn fault_b(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = a * x[i] - y[i];
    }
}

const CHILD: &str = "CUDAJIT_FAULT_CHILD";

/// The NVIDIA toolchain, or `None` after printing why the test is skipped. With
/// `CUDAJIT_REQUIRE_TOOLCHAIN=1` (set by `scripts/test.sh`) a missing toolchain fails.
fn toolchain_or_skip() -> Option<&'static cudajit::codegen::toolchain::Toolchain> {
    match cudajit::codegen::toolchain::Toolchain::global() {
        Ok(toolchain) => Some(toolchain),
        Err(error) if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") => {
            panic!("the NVIDIA toolchain is required (CUDAJIT_REQUIRE_TOOLCHAIN=1): {error}")
        }
        Err(error) => {
            eprintln!("skipped: no NVIDIA toolchain ({error}); run scripts/test.sh to install it");
            None
        }
    }
}

/// The child: compiles the kernels named by `CUDAJIT_FAULT_KERNELS` (`a`, `b`, `a,b`) for
/// `CUDAJIT_FAULT_ARCH` (default sm_90), optionally after waiting for a start file, with
/// several threads, or deleting the cache directory between two kernels; prints one
/// RESULT line.
#[test]
#[ignore = "run as a child process by the fault-injection tests"]
fn child() {
    assert!(
        std::env::var_os(CHILD).is_some(),
        "run by the parent tests only"
    );
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    // A program turns cudajit's log on itself; the scenarios without CUDAJIT_LOG run
    // without any subscriber.
    if std::env::var_os("CUDAJIT_LOG").is_some() {
        cudajit::log::init().expect("the stderr logger");
    }
    if let Some(go) = std::env::var_os("CUDAJIT_FAULT_GO") {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !Path::new(&go).exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let arch: Arch = var("CUDAJIT_FAULT_ARCH").parse().unwrap_or(Arch::SM_90);
    let threads: usize = var("CUDAJIT_FAULT_THREADS").parse().unwrap_or(1);
    let mut fields = Vec::new();
    for (i, name) in var("CUDAJIT_FAULT_KERNELS").split(',').enumerate() {
        if i > 0 && var("CUDAJIT_FAULT_DELETE_DIR") == "1" {
            std::fs::remove_dir_all(var("CUDAJIT_CACHE_DIR")).expect("deleting the cache dir");
        }
        let kernel = match name {
            "a" => &fault_a::KERNEL,
            "b" => &fault_b::KERNEL,
            other => panic!("unknown kernel {other}"),
        };
        let results: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| scope.spawn(|| kernel.compile_for_arch(arch)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect()
        });
        let compiled = results
            .into_iter()
            .map(|r| r.expect("compiling"))
            .next()
            .expect("one result");
        let valid = cudajit::codegen::cubin::inspect(&compiled.cubin)
            .is_ok_and(|info| info.has_function(&compiled.entry));
        fields.push(format!("origin_{name}={:?}", compiled.report.origin));
        fields.push(format!("valid_{name}={valid}"));
        fields.push(format!("cubin_{name}={}", digest(&compiled.cubin)));
        fields.push(format!(
            "file_{name}={}",
            compiled
                .report
                .cache_file
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ));
    }
    let counts = invocation_counts();
    println!(
        "RESULT {} nvvm={} link={} loaded={}",
        fields.join(" "),
        counts.nvvm_compiles,
        counts.nvjitlink_links,
        counts.libraries_loaded
    );
}

fn digest(bytes: &[u8]) -> String {
    // FNV-1a: enough to compare cubins between processes.
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// A child process compiling `kernels` with the cache in `dir` and extra `env`.
fn spawn(dir: &Path, kernels: &str, env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(std::env::current_exe().expect("test binary path"));
    command
        .args([
            "--ignored",
            "--exact",
            "child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("CUDAJIT_CACHE_DIR", dir)
        .env("CUDAJIT_FAULT_KERNELS", kernels)
        .env_remove("CUDAJIT_CACHE")
        .env_remove("CUDAJIT_CACHE_MAX_BYTES")
        .env_remove("CUDAJIT_DUMP")
        .env_remove("CUDAJIT_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    command.spawn().expect("starting a child")
}

/// The child's RESULT line and its stderr.
fn result(output: Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.to_owned()))
        .unwrap_or_else(|| panic!("no RESULT line in:\n{stdout}"));
    (line, stderr)
}

fn run(dir: &Path, kernels: &str, env: &[(&str, &str)]) -> (String, String) {
    result(
        spawn(dir, kernels, env)
            .wait_with_output()
            .expect("child output"),
    )
}

fn field<'a>(result: &'a str, name: &str) -> &'a str {
    result
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {result}"))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cudajit-faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A cache holding a valid entry for `fault_a`; returns the entry's path.
fn populated(dir: &Path) -> PathBuf {
    let (first, _) = run(dir, "a", &[]);
    assert_eq!(field(&first, "origin_a"), "Compiled", "{first}");
    PathBuf::from(field(&first, "file_a"))
}

/// After damaging the entry: the next process recompiles (never loads it), writes a valid
/// entry, and the process after that loads it from disk without loading any compiler.
fn assert_recovers(dir: &Path, scenario: &str) {
    let (second, _) = run(dir, "a", &[]);
    assert_eq!(
        field(&second, "origin_a"),
        "Compiled",
        "{scenario}: {second}"
    );
    assert_eq!(field(&second, "valid_a"), "true", "{scenario}: {second}");
    let (third, _) = run(dir, "a", &[]);
    assert_eq!(field(&third, "origin_a"), "Disk", "{scenario}: {third}");
    assert_eq!(field(&third, "loaded"), "0", "{scenario}: {third}");
    assert_eq!(
        field(&third, "cubin_a"),
        field(&second, "cubin_a"),
        "{scenario}"
    );
}

#[test]
fn damaged_entries_are_recompiled_never_loaded() {
    if toolchain_or_skip().is_none() {
        return;
    }
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 7] = [
        ("truncated payload", |b| b.truncate(b.len() - 100)),
        ("truncated header", |b| b.truncate(40)),
        ("empty file", |b| b.clear()),
        ("flipped payload byte", |b| {
            let at = b.len() - 7;
            b[at] ^= 0x40;
        }),
        ("flipped metadata byte", |b| {
            b[entry::HEADER_LEN + 2] ^= 0x01
        }),
        ("wrong format version", |b| {
            b[8..12].copy_from_slice(&1u32.to_le_bytes())
        }),
        ("foreign file", |b| {
            *b = b"\x7fELF not a cudajit entry".repeat(10)
        }),
    ];
    let mut scenarios = 0;
    for (scenario, damage) in damages {
        let dir = fresh_dir("damage");
        let path = populated(&dir);
        let mut bytes = std::fs::read(&path).expect("entry");
        damage(&mut bytes);
        std::fs::write(&path, &bytes).expect("damaging");
        assert_recovers(&dir, scenario);
        scenarios += 1;
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!("damaged-entry scenarios passed: {scenarios}");
}

#[test]
fn an_entry_of_another_key_is_refused() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("other-key");
    let (both, _) = run(&dir, "a,b", &[]);
    let (a, b) = (field(&both, "file_a"), field(&both, "file_b"));
    // fault_b's entry, whole and valid, under fault_a's name.
    std::fs::copy(b, a).expect("copying");
    assert_recovers(&dir, "entry from another key");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn entries_writable_by_others_or_owned_by_another_user_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("ownership");
    let path = populated(&dir);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    assert_recovers(&dir, "world-writable entry");
    if effective_uid() == 0 {
        // Only root can give a file away: make the entry another user's.
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).expect("chown");
        assert_recovers(&dir, "entry owned by another user");
    } else {
        eprintln!("skipped: entry owned by another user (needs root to chown)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
fn effective_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    // The owner of a file this process just created.
    let probe = std::env::temp_dir().join(format!("cudajit-uid-{}", std::process::id()));
    std::fs::write(&probe, b"").expect("probe file");
    let uid = std::fs::metadata(&probe).expect("probe").uid();
    let _ = std::fs::remove_file(&probe);
    uid
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_degrades_to_memory_with_one_warning() {
    use std::os::unix::fs::PermissionsExt;
    if toolchain_or_skip().is_none() {
        return;
    }
    // Root ignores permission bits, so as root take a directory the kernel refuses writes
    // to whatever the permissions: this process's /proc/self (owned by its user).
    let (dir, restore) = if effective_uid() == 0 {
        (PathBuf::from("/proc/self"), None)
    } else {
        let dir = fresh_dir("read-only");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).expect("chmod");
        (dir.clone(), Some(dir))
    };
    // Without any logger (the default) and with one: exactly one warning either way, and
    // no report names a file that was not written.
    for env in [&[][..], &[("CUDAJIT_LOG", "warn")][..]] {
        let (out, stderr) = run(&dir, "a,b", env);
        assert_eq!(field(&out, "origin_a"), "Compiled", "{out}");
        assert_eq!(field(&out, "origin_b"), "Compiled", "{out}");
        assert_eq!(field(&out, "valid_b"), "true", "{out}");
        assert_eq!(field(&out, "file_a"), "", "nothing was written: {out}");
        assert_eq!(field(&out, "file_b"), "", "nothing was written: {out}");
        let warnings = stderr.matches("cannot write the JIT cache").count();
        assert_eq!(
            warnings, 1,
            "exactly one warning for two kernels ({env:?}):\n{stderr}"
        );
    }
    if let Some(dir) = restore {
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn an_unusable_directory_degrades_to_memory_with_one_warning() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("unusable");
    std::fs::write(&dir, b"a file where the directory should be").expect("file");
    for env in [&[][..], &[("CUDAJIT_LOG", "warn")][..]] {
        let (out, stderr) = run(&dir.join("cache"), "a,b", env);
        assert_eq!(field(&out, "origin_b"), "Compiled", "{out}");
        assert_eq!(field(&out, "file_a"), "", "no disk cache: {out}");
        assert_eq!(stderr.matches("JIT cache").count(), 1, "{env:?}: {stderr}");
    }
    let _ = std::fs::remove_file(&dir);
}

#[test]
fn a_directory_deleted_mid_run_is_recreated() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("deleted");
    let (out, _) = run(&dir, "a,b", &[("CUDAJIT_FAULT_DELETE_DIR", "1")]);
    assert_eq!(field(&out, "origin_b"), "Compiled", "{out}");
    let entry_b = PathBuf::from(field(&out, "file_b"));
    assert!(
        entry_b.is_file(),
        "fault_b's entry written after the deletion: {out}"
    );
    assert!(!PathBuf::from(field(&out, "file_a")).exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).expect("dir").permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "recreated private");
    }
    let (again, _) = run(&dir, "b", &[]);
    assert_eq!(field(&again, "origin_b"), "Disk", "{again}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `processes` processes released at once compile the same kernel into an empty cache.
fn concurrent_processes(processes: usize) {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir(&format!("concurrent-{processes}"));
    let go = dir.with_extension("go");
    let _ = std::fs::remove_file(&go);
    let go_text = go.display().to_string();
    let children: Vec<Child> = (0..processes)
        .map(|_| spawn(&dir, "a", &[("CUDAJIT_FAULT_GO", go_text.as_str())]))
        .collect();
    // Let them all reach the start line, then release them together.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&go, b"go").expect("start file");
    let results: Vec<String> = children
        .into_iter()
        .map(|c| result(c.wait_with_output().expect("child")).0)
        .collect();
    let compiles: u64 = results
        .iter()
        .map(|r| field(r, "nvvm").parse::<u64>().expect("count"))
        .sum();
    assert_eq!(
        compiles, 1,
        "exactly one compile among {processes} processes: {results:#?}"
    );
    let compiled = results
        .iter()
        .filter(|r| field(r, "origin_a") == "Compiled")
        .count();
    assert_eq!(compiled, 1, "{results:#?}");
    for r in &results {
        assert_eq!(field(r, "valid_a"), "true", "{r}");
        assert_eq!(
            field(r, "cubin_a"),
            field(&results[0], "cubin_a"),
            "same cubin everywhere"
        );
    }
    let (after, _) = run(&dir, "a", &[]);
    assert_eq!(field(&after, "origin_a"), "Disk", "{after}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&go);
}

#[test]
fn two_processes_compile_once() {
    concurrent_processes(2);
}

#[test]
fn eight_processes_compile_once() {
    concurrent_processes(8);
}

#[test]
fn eight_threads_compile_once() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("threads");
    let (out, _) = run(&dir, "a", &[("CUDAJIT_FAULT_THREADS", "8")]);
    assert_eq!(field(&out, "nvvm"), "1", "{out}");
    assert_eq!(field(&out, "link"), "1", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_size_cap_evicts_the_least_recently_used() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("cap");
    let entry_a = populated(&dir);
    let size = std::fs::metadata(&entry_a).expect("entry").len();
    // Room for one entry and a half: writing fault_b's evicts fault_a's, not its own.
    let cap = (size + size / 2).to_string();
    let (out, _) = run(&dir, "b", &[("CUDAJIT_CACHE_MAX_BYTES", cap.as_str())]);
    assert!(PathBuf::from(field(&out, "file_b")).is_file(), "{out}");
    assert!(!entry_a.exists(), "least recently used entry evicted");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_miss_says_which_key_component_is_new() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("explain");
    let (_, first) = run(&dir, "a", &[("CUDAJIT_LOG", "debug")]);
    assert!(first.contains("no cached entry of this kernel"), "{first}");
    let (_, second) = run(
        &dir,
        "a",
        &[("CUDAJIT_LOG", "debug"), ("CUDAJIT_FAULT_ARCH", "sm_80")],
    );
    assert!(
        second.contains("new arch sm_80 (cached: sm_90)"),
        "{second}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_entry_is_the_reason_given_for_its_miss() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("explain-damaged");
    // An entry of the same kernel for another arch, which an explanation comparing with
    // the remaining entries would call "new arch".
    let (other, _) = run(&dir, "a", &[("CUDAJIT_FAULT_ARCH", "sm_80")]);
    assert_eq!(field(&other, "origin_a"), "Compiled", "{other}");
    let path = populated(&dir);
    let mut bytes = std::fs::read(&path).expect("entry");
    let at = bytes.len() - 7;
    bytes[at] ^= 0x40;
    std::fs::write(&path, &bytes).expect("damaging");
    let (out, stderr) = run(&dir, "a", &[("CUDAJIT_LOG", "debug")]);
    assert_eq!(field(&out, "origin_a"), "Compiled", "{out}");
    assert!(
        stderr.contains("its entry was damaged and discarded"),
        "{stderr}"
    );
    assert!(!stderr.contains("new arch"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_warm_start_reads_the_toolchain_memo_instead_of_hashing() {
    if toolchain_or_skip().is_none() {
        return;
    }
    let dir = fresh_dir("memo");
    let (_, first) = run(&dir, "a", &[("CUDAJIT_LOG", "debug")]);
    assert!(
        first.contains("hashed "),
        "the first process hashes the libraries:\n{first}"
    );
    let memo = dir.join(cudajit::codegen::cache::compiler_identity::MEMO_FILE);
    assert!(memo.is_file());
    let (out, second) = run(&dir, "a", &[("CUDAJIT_LOG", "debug")]);
    assert_eq!(field(&out, "origin_a"), "Disk", "{out}");
    assert_eq!(field(&out, "loaded"), "0", "{out}");
    assert!(
        !second.contains("hashed "),
        "a warm start hashes nothing:\n{second}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
