//! Fingerprints the code generator's own sources (`CUDAJIT_SOURCE_FINGERPRINT`), so JIT
//! cache entries made by one build are never served to another; the language front end
//! does the same (`cudajit_core::SOURCE_FINGERPRINT`) and the cache key holds both.

fn main() {
    cudajit_build_fingerprint::emit_source_fingerprint("CUDAJIT_SOURCE_FINGERPRINT");
}
