//! Checks that a linker output is a CUDA ELF image and lists its symbols, before it is
//! cached or loaded.

/// `e_machine` of CUDA ELF images.
const EM_CUDA: u16 = 190;
const SHT_SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;

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
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a CUDA cubin: {0}")]
pub struct CubinError(pub &'static str);

/// `N` little-endian bytes at `at`.
fn bytes_at<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], CubinError> {
    bytes
        .get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or(CubinError("truncated"))
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, CubinError> {
    bytes_at(bytes, at).map(u16::from_le_bytes)
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, CubinError> {
    bytes_at(bytes, at).map(u32::from_le_bytes)
}

fn u64_at(bytes: &[u8], at: usize) -> Result<usize, CubinError> {
    bytes_at(bytes, at).map(|b| u64::from_le_bytes(b) as usize)
}

/// Parses the ELF header and symbol table of a cubin.
pub fn inspect(bytes: &[u8]) -> Result<CubinInfo, CubinError> {
    if bytes.get(..4) != Some(b"\x7fELF") {
        return Err(CubinError("no ELF magic"));
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err(CubinError("not a 64-bit little-endian ELF"));
    }
    if u16_at(bytes, 18)? != EM_CUDA {
        return Err(CubinError("ELF machine is not CUDA"));
    }
    let flags = u32_at(bytes, 48)?;
    let section_offset = u64_at(bytes, 40)?;
    let section_size = usize::from(u16_at(bytes, 58)?);
    let section_count = usize::from(u16_at(bytes, 60)?);
    let section = |index: usize| section_offset + index * section_size;
    let mut functions = Vec::new();
    for index in 0..section_count {
        let header = section(index);
        if u32_at(bytes, header + 4)? != SHT_SYMTAB {
            continue;
        }
        let offset = u64_at(bytes, header + 24)?;
        let size = u64_at(bytes, header + 32)?;
        let link = u32_at(bytes, header + 40)? as usize;
        let entry_size = u64_at(bytes, header + 56)?.max(24);
        let strings = section(link);
        let strings_offset = u64_at(bytes, strings + 24)?;
        let strings_size = u64_at(bytes, strings + 32)?;
        let table = bytes
            .get(strings_offset..strings_offset + strings_size)
            .ok_or(CubinError("string table out of range"))?;
        for symbol in (offset..offset + size).step_by(entry_size) {
            let name = u32_at(bytes, symbol)? as usize;
            let info = *bytes.get(symbol + 4).ok_or(CubinError("truncated"))?;
            if info & 0xf != STT_FUNC {
                continue;
            }
            let rest = table.get(name..).ok_or(CubinError("bad symbol name"))?;
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            functions.push(String::from_utf8_lossy(&rest[..end]).into_owned());
        }
    }
    Ok(CubinInfo { flags, functions })
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
        elf[18] = 62; // x86-64
        assert_eq!(inspect(&elf), Err(CubinError("ELF machine is not CUDA")));
    }
}
