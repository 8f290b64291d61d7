//! The cheap toolchain fingerprint.

use super::fake_tree::{s, TempTree};
use crate::toolchain::{Component, SearchEnv, Toolchain};

#[test]
fn identity_is_stable_and_notices_a_changed_file() {
    let t = TempTree::new("identity");
    let home = t.toolkit("home");
    let env = SearchEnv::isolated([("CUDA_HOME", s(&home))]);
    let tc = Toolchain::discover(&env).expect("discover");
    let a = tc.identity();
    let components: Vec<Component> = a.files.iter().map(|f| f.component).collect();
    assert_eq!(
        components,
        [Component::Nvvm, Component::Libdevice, Component::NvJitLink]
    );
    assert!(
        a.files
            .iter()
            .all(|f| f.size == Some(18) && f.modified.is_some()),
        "{a:?}"
    );
    assert_eq!(a.digest(), tc.identity().digest());

    std::fs::write(
        home.join("nvvm/libdevice/libdevice.10.bc"),
        b"a different libdevice",
    )
    .expect("rewrite");
    let b = tc.identity();
    assert_ne!(a, b);
    assert_ne!(a.digest(), b.digest());

    // Another installation with identical file contents still differs by path.
    let env2 = SearchEnv::isolated([("CUDA_HOME", s(&t.toolkit("home2")))]);
    let c = Toolchain::discover(&env2).expect("discover").identity();
    assert_ne!(a.digest(), c.digest());
}
