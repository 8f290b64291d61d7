//! Cache keys: BLAKE3 over tagged, length-prefixed fields of everything that changes a
//! cubin, and the identity ranks agree on before a communicating kernel's first launch.
//!
//! - [`builder`]: the key builder, its readable components and the key itself;
//! - [`encode`]: canonical, length-prefixed bytes of a specialisation and a struct layout;
//! - [`kernel`]: the keys of a kernel ([`cache_key`], [`launch_identity`]), sharing one
//!   helper for the fields both have;
//! - [`library`]: what identifies a device library in a key.

pub mod builder;
pub mod encode;
pub mod kernel;
pub mod library;

pub use builder::{hex, short_hash, CacheKey, KeyBuilder, KeyComponent, KeyParts};
pub use kernel::{cache_key, cubin_key, launch_identity, CUBIN_KEY_FORMAT, LAUNCH_IDENTITY_FORMAT};
pub use library::library_identity;
