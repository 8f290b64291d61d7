//! Constructs that `#[kernel]` rejects at compile time, each with cudajit's own message at
//! the offending span. Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test --test compile_fail`.

#[test]
fn rejected_constructs() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
