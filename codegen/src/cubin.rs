//! Checks that a linker output is a CUDA ELF image and lists its symbols, before it is
//! cached or loaded.
//!
//! Parsed with the `object` crate's ELF reader (bounds-checked, maintained upstream); it
//! replaced a hand-written reader of the same fields, which was no faster (both 0.16 µs per
//! cubin in release; `codegen/examples/cubin_bench.rs`, `docs/performance.md`).

use object::elf::{FileHeader64, EM_CUDA, SHT_SYMTAB, STT_FUNC};
use object::read::elf::{FileHeader, Sym};
use object::LittleEndian;

/// What a cubin says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CubinInfo {
    /// `e_flags` of the ELF header (encodes the SM version).
    pub flags: u32,
    /// Names of function symbols (kernels and device functions).
    pub functions: Vec<String>,
}

impl CubinInfo {
    /// Whether the cubin defines function `name`.
    pub fn has_function(&self, name: &str) -> bool {
        self.functions.iter().any(|f| f == name)
    }
}

/// A byte string that is not a usable cubin.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error("not a CUDA cubin: {0}")]
pub struct CubinError(pub &'static str);

/// Parses the ELF header and symbol table of a cubin.
pub fn inspect(bytes: &[u8]) -> Result<CubinInfo, CubinError> {
    if bytes.get(..4) != Some(b"\x7fELF") {
        return Err(CubinError("no ELF magic"));
    }
    let header = FileHeader64::<LittleEndian>::parse(bytes)
        .map_err(|_| CubinError("not a 64-bit little-endian ELF"))?;
    let endian = header
        .endian()
        .map_err(|_| CubinError("not a 64-bit little-endian ELF"))?;
    if header.e_machine(endian) != EM_CUDA {
        return Err(CubinError("ELF machine is not CUDA"));
    }
    let sections = header
        .sections(endian, bytes)
        .map_err(|_| CubinError("section headers out of range"))?;
    let symbols = sections
        .symbols(endian, bytes, SHT_SYMTAB)
        .map_err(|_| CubinError("symbol table out of range"))?;
    let functions = symbols
        .iter()
        .filter(|symbol| symbol.st_type() == STT_FUNC)
        .map(|symbol| {
            symbol
                .name(endian, symbols.strings())
                .map(|name| String::from_utf8_lossy(name).into_owned())
                .map_err(|_| CubinError("bad symbol name"))
        })
        .collect::<Result<_, _>>()?;
    Ok(CubinInfo {
        flags: header.e_flags(endian),
        functions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_cubins() {
        assert_eq!(inspect(b"hello"), Err(CubinError("no ELF magic")));
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[6] = 1; // EV_CURRENT
        elf[18] = 62; // x86-64
        assert_eq!(inspect(&elf), Err(CubinError("ELF machine is not CUDA")));
        elf[4] = 1; // 32-bit
        assert!(inspect(&elf).is_err());
    }

    #[test]
    fn section_headers_past_the_end_are_an_error_not_a_panic() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[6] = 1; // EV_CURRENT
        elf[18] = 190; // EM_CUDA
        elf[40..48].copy_from_slice(&u64::MAX.to_le_bytes()); // e_shoff
        elf[58] = 64; // e_shentsize
        elf[60] = 3; // e_shnum
        assert!(inspect(&elf).is_err());
    }
}
