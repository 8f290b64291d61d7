//! Fingerprints the language front end's sources (`SOURCE_FINGERPRINT`): lowering changes
//! the IR, and so the generated code, without changing the version number, and the code
//! generator's JIT cache key must tell such builds apart.

fn main() {
    cudajit_build_fingerprint::emit_source_fingerprint("CUDAJIT_CORE_SOURCE_FINGERPRINT");
}
