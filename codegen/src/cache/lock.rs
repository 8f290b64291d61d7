//! At most one compile per key: across the threads of a process (a condition variable
//! over the keys being compiled) and across processes sharing a cache directory (an
//! exclusive lock on `<shard>/<key>.lock`), for example several ranks of one node starting
//! at once.
//!
//! The holder re-checks the caches after taking the lock: whoever waited finds the entry
//! the first holder published and compiles nothing.
//!
//! Lock files are never removed while held. Eviction and `cudajit cache clear` remove a
//! lock file only after taking its lock themselves; a process that locked a file which was
//! removed meanwhile notices (the path no longer names the file it holds) and retries.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::fs::create_private_dir;
use super::key::CacheKey;

pub use super::fs::lock_path_for;

/// How long to wait for another process's compile before compiling anyway.
const WAIT_LIMIT: Duration = Duration::from_secs(300);
/// After this long, say that we are waiting.
const WAIT_NOTICE: Duration = Duration::from_secs(2);

/// Held while a key is compiled; released on drop.
pub struct CompileLock {
    key: CacheKey,
    _file: Option<fs::File>,
}

impl CompileLock {
    /// Waits until no other thread of this process, and no other process using
    /// `lock_path` (when given), is compiling `key`. Never fails: when the lock file cannot
    /// be created or locked (a read-only directory), only the in-process lock is taken.
    pub fn acquire(key: &CacheKey, what: &str, lock_path: Option<&Path>) -> CompileLock {
        in_process_acquire(key);
        let file = lock_path.and_then(|path| lock_file(path, what));
        CompileLock {
            key: *key,
            _file: file,
        }
    }
}

impl Drop for CompileLock {
    fn drop(&mut self) {
        // The file lock goes with the file descriptor; then let the next thread in.
        let (set, released) = compiling();
        let mut keys = set.lock().unwrap_or_else(|p| p.into_inner());
        keys.remove(&self.key);
        released.notify_all();
    }
}

fn compiling() -> &'static (Mutex<HashSet<CacheKey>>, Condvar) {
    static COMPILING: OnceLock<(Mutex<HashSet<CacheKey>>, Condvar)> = OnceLock::new();
    COMPILING.get_or_init(Default::default)
}

fn in_process_acquire(key: &CacheKey) {
    let (set, released) = compiling();
    let mut keys = set.lock().unwrap_or_else(|p| p.into_inner());
    while keys.contains(key) {
        keys = released.wait(keys).unwrap_or_else(|p| p.into_inner());
    }
    keys.insert(*key);
}

/// Opens and exclusively locks `path`, retrying when the file was replaced while we
/// waited. `None` when locking is impossible here (logged at debug level).
fn lock_file(path: &Path, what: &str) -> Option<fs::File> {
    let started = Instant::now();
    let mut noticed = false;
    loop {
        // The entry's shard directory may not exist yet (an empty cache).
        if let Some(dir) = path.parent() {
            let _ = create_private_dir(dir);
        }
        let file = match fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
        {
            Ok(file) => file,
            Err(error) => {
                tracing::debug!(
                    "cudajit: no cross-process lock for {what} ({}: {error}); compiling without it",
                    path.display()
                );
                return None;
            }
        };
        match file.try_lock() {
            Ok(()) => {
                if same_file(&file, path) {
                    return Some(file);
                }
                // Removed or replaced while we waited: lock the file the path names now.
                continue;
            }
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(error)) => {
                tracing::debug!(
                    "cudajit: cannot lock {} ({error}); compiling {what} without a cross-process lock",
                    path.display()
                );
                return None;
            }
        }
        let waited = started.elapsed();
        if waited > WAIT_LIMIT {
            tracing::warn!(
                "cudajit: another process has held {} for {} s; compiling {what} anyway",
                path.display(),
                waited.as_secs()
            );
            return None;
        }
        if !noticed && waited > WAIT_NOTICE {
            noticed = true;
            tracing::info!("cudajit: waiting for another process compiling {what}");
        }
        std::thread::sleep(backoff(waited));
    }
}

fn backoff(waited: Duration) -> Duration {
    if waited < Duration::from_millis(50) {
        Duration::from_millis(1)
    } else if waited < Duration::from_secs(1) {
        Duration::from_millis(5)
    } else {
        Duration::from_millis(50)
    }
}

/// Whether `file` is still the file at `path`.
#[cfg(unix)]
fn same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(held), Ok(named)) => held.dev() == named.dev() && held.ino() == named.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &fs::File, path: &Path) -> bool {
    path.exists()
}

/// Removes the lock file at `path` if nobody holds it. Used by eviction and clearing.
pub fn remove_if_unlocked(path: &Path) -> bool {
    let Ok(file) = fs::File::options().write(true).open(path) else {
        return false;
    };
    if file.try_lock().is_err() {
        return false;
    }
    // Removed while held, so a process that opened it before sees the path change.
    fs::remove_file(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::key::KeyBuilder;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn one_thread_at_a_time_per_key() {
        let dir = std::env::temp_dir().join(format!("cudajit-lock-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.lock");
        let key = KeyBuilder::new("lock-test").finish();
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (inside, most, path) = (inside.clone(), most.clone(), path.clone());
                std::thread::spawn(move || {
                    let _lock = CompileLock::acquire(&key, "test", Some(&path));
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert!(remove_if_unlocked(&path));
        let _ = fs::remove_dir_all(&dir);
    }
}
