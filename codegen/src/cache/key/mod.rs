//! Cache keys: BLAKE3 over tagged, length-prefixed fields of everything that changes a
//! cubin, and the identity ranks agree on before a communicating kernel's first launch.
//!
//! - [`builder`]: the key builder, its readable components and the key itself;
//! - [`encode`]: canonical, length-prefixed bytes of a specialisation and a struct layout;
//! - [`library`]: what identifies a device library in a key.
//!
//! The keys of a kernel compile (`cache_key`, `launch_identity`) are composed above this, in
//! `crate::compile::key`: they name the compile's options and the compiler's identity.

pub mod builder;
pub mod encode;
pub mod library;

pub use builder::{hex, short_hash, CacheKey, KeyBuilder, KeyComponent, KeyParts};
pub use library::library_identity;
