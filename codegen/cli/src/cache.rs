//! `cudajit cache list|stats|verify [--remove]|clear`: the disk cache, read without the program (each
//! entry carries its kernel name, specialisation and architecture).

use std::collections::BTreeMap;
use std::path::PathBuf;

use cudajit::codegen::cache::{self, DiskCache};

use super::format;
use super::{OK, PROBLEM};

/// `cudajit cache [--dir DIR] ACTION`.
#[derive(Debug, clap::Args)]
pub struct CacheArgs {
    /// The cache directory (default: the one programs use).
    #[arg(long, global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Clone, Copy, clap::Subcommand)]
enum Action {
    /// Entries: kernel, specialisation, arch, size, last use.
    List,
    /// Totals per kernel and architecture, and the size cap.
    Stats,
    /// Re-checks every entry's header, key and checksum and reports damaged ones, changing
    /// nothing (exit 1 if any is damaged); --remove also deletes them.
    ///
    /// A damaged entry is never loaded: a program discards it and recompiles on its own.
    Verify {
        /// Delete the damaged entries (their kernels are recompiled on next use).
        #[arg(long)]
        remove: bool,
    },
    /// Removes every entry.
    Clear,
}

/// Runs `cudajit cache ...`.
pub fn run(args: &CacheArgs) -> Result<i32, String> {
    let disk = match open(args.dir.clone()) {
        Ok(disk) => disk,
        Err(message) => {
            eprintln!("cudajit: {message}");
            return Ok(PROBLEM);
        }
    };
    match args.action {
        Action::List => Ok(list(&disk)),
        Action::Stats => Ok(stats(&disk)),
        Action::Verify { remove } => Ok(verify(&disk, remove)),
        Action::Clear => {
            let removed = disk.clear();
            println!("removed {removed} entries from {}", disk.root().display());
            Ok(OK)
        }
    }
}

/// The cache named by `--dir`, else by the environment as programs would find it.
fn open(dir: Option<PathBuf>) -> Result<DiskCache, String> {
    let env = |name: &str| std::env::var(name).ok();
    let dir = match dir {
        Some(dir) => dir,
        None => cache::configured_dir(env)
            .map_err(|e| e.to_string())?
            .ok_or(
            "the disk cache is off (CUDAJIT_CACHE=0); pass --dir DIR to look at a cache directory",
        )?,
    };
    let max = cache::configured_max_bytes(env).map_err(|e| e.to_string())?;
    DiskCache::open(&dir)
        .map(|d| d.with_max_bytes(max))
        .map_err(|e| {
            format!(
                "cannot open the cache directory {} ({e}); check CUDAJIT_CACHE_DIR",
                dir.display()
            )
        })
}

fn list(disk: &DiskCache) -> i32 {
    let mut entries = disk.entries();
    entries.sort_by_key(|e| std::cmp::Reverse(e.last_used));
    println!("{}", disk.root().display());
    println!(
        "{:<28} {:<24} {:<7} {:>10}  {:<22} KEY",
        "KERNEL", "SPECIALISATION", "ARCH", "SIZE", "LAST USED"
    );
    let mut unreadable = 0;
    for entry in &entries {
        let used = entry
            .last_used
            .map(|t| format!("{} ({})", format::ago(t), format::utc(t)))
            .unwrap_or_else(|| "?".into());
        match &entry.meta {
            Ok((key, meta)) => {
                let spec = if meta.specialisation.is_empty() {
                    "-"
                } else {
                    &meta.specialisation
                };
                println!(
                    "{:<28} {:<24} {:<7} {:>10}  {:<22} {}",
                    meta.kernel,
                    spec,
                    meta.arch,
                    format::bytes(entry.size),
                    used,
                    &key.hex()[..12]
                );
            }
            Err(why) => {
                unreadable += 1;
                println!("{:<28} {why} ({})", "<unreadable>", entry.path.display());
            }
        }
    }
    println!(
        "{} entries, {}",
        entries.len(),
        format::bytes(entries.iter().map(|e| e.size).sum())
    );
    if unreadable > 0 {
        println!("{unreadable} unreadable: `cudajit cache verify --remove` removes them");
    }
    OK
}

fn stats(disk: &DiskCache) -> i32 {
    let entries = disk.entries();
    let total: u64 = entries.iter().map(|e| e.size).sum();
    let mut per_kernel: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    let mut per_arch: BTreeMap<String, usize> = BTreeMap::new();
    let mut unreadable = 0;
    for entry in &entries {
        match &entry.meta {
            Ok((_, meta)) => {
                let slot = per_kernel.entry(meta.kernel.clone()).or_default();
                slot.0 += 1;
                slot.1 += entry.size;
                *per_arch.entry(meta.arch.clone()).or_default() += 1;
            }
            Err(_) => unreadable += 1,
        }
    }
    println!("directory   {}", disk.root().display());
    println!("entries     {} ({})", entries.len(), format::bytes(total));
    match disk.max_bytes() {
        Some(max) => println!(
            "size cap    {} (CUDAJIT_CACHE_MAX_BYTES), {:.1}% used; least recently used entries are evicted",
            format::bytes(max),
            100.0 * total as f64 / max as f64
        ),
        None => println!("size cap    none (CUDAJIT_CACHE_MAX_BYTES=0)"),
    }
    let oldest = entries.iter().filter_map(|e| e.last_used).min();
    let newest = entries.iter().filter_map(|e| e.last_used).max();
    if let (Some(oldest), Some(newest)) = (oldest, newest) {
        println!(
            "last use    oldest {}, newest {}",
            format::ago(oldest),
            format::ago(newest)
        );
    }
    let archs: Vec<String> = per_arch.iter().map(|(a, n)| format!("{a}: {n}")).collect();
    println!("per arch    {}", archs.join(", "));
    println!("per kernel");
    for (kernel, (count, size)) in &per_kernel {
        println!(
            "  {kernel:<32} {count:>4} entries {:>10}",
            format::bytes(*size)
        );
    }
    if unreadable > 0 {
        println!("unreadable  {unreadable} (`cudajit cache verify --remove` removes them)");
    }
    OK
}

fn verify(disk: &DiskCache, remove: bool) -> i32 {
    let verdicts = if remove {
        disk.remove_damaged()
    } else {
        disk.verify()
    };
    let mut damaged = 0;
    for (path, verdict) in &verdicts {
        if let Err(why) = verdict {
            damaged += 1;
            let removed = if remove { " (removed)" } else { "" };
            println!("DAMAGED {}: {why}{removed}", path.display());
        }
    }
    println!(
        "{} entries checked in {}: {} valid, {damaged} damaged",
        verdicts.len(),
        disk.root().display(),
        verdicts.len() - damaged
    );
    match (damaged, remove) {
        (0, _) => OK,
        (_, true) => {
            println!("Damaged entries were removed; the kernels are recompiled on next use.");
            OK
        }
        (_, false) => {
            println!(
                "Nothing was changed (programs skip damaged entries and recompile); `cudajit cache verify --remove` deletes them."
            );
            PROBLEM
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudajit::codegen::cache::entry;
    use cudajit::codegen::cache::{EntryMeta, KeyBuilder};

    #[test]
    fn verify_reports_and_only_remove_deletes() {
        let dir = std::env::temp_dir().join(format!("cudajit-cli-verify-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let disk = DiskCache::open(&dir).unwrap();
        let key = KeyBuilder::new("cli-test").field("k", b"v").finish();
        let mut bytes = entry::encode(&key, &EntryMeta::default(), b"0123456789");
        *bytes.last_mut().unwrap() ^= 1;
        let path = disk.path_for(&key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(verify(&disk, false), PROBLEM);
        assert!(path.exists(), "verify deletes nothing");
        assert_eq!(verify(&disk, true), OK);
        assert!(!path.exists(), "verify --remove deletes the damaged entry");
        assert_eq!(verify(&disk, false), OK);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn verify_takes_remove() {
        use clap::Parser;
        let cli = super::super::Cli::try_parse_from(["cudajit", "cache", "verify", "--remove"]);
        assert!(cli.is_ok(), "{cli:?}");
    }
}
