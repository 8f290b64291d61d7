//! Hopper's warpgroup MMA (`wgmma.mma_async`): the 128 threads of a warpgroup multiply a
//! 64×K tile of A by a K×N tile of B, both read from shared memory through 64-bit matrix
//! descriptors, into 64×N f32 accumulators held N/2 per thread.
//!
//! **Descriptors** (PTX ISA, "Matrix Descriptor Format"): start address (bits 0–13), leading
//! byte offset (16–29) and stride byte offset (32–45), all in 16-byte units, base offset
//! (49–51, must be 0 here) and layout (62–63: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
//! swizzle). Element `(mn, k)` of a tile of `e`-byte elements is at `swizzle(start +
//! offset)`, the canonical layouts of CUTLASS's `make_gmma_desc`:
//!
//! | major | swizzle of `W` bytes | none |
//! | --- | --- | --- |
//! | K | `(mn % 8) W + (mn / 8) SBO + k e` | `(mn % 8) 16 + (mn / 8) SBO + (k e) % 16 + (k e / 16) LBO` |
//! | MN | `(mn % (W/e)) e + (mn / (W/e)) LBO + (k % 8) W + (k / 8) SBO` | `(mn % (16/e)) e + (mn / (16/e)) SBO + (k % 8) 16 + (k / 8) LBO` |
//!
//! and the swizzle XORs address bits 4–6 (128 B), 4–5 (64 B) or 4 (32 B) with the bits from
//! 7 up, on the final shared address — so a k slice may start 32 bytes into a row. A tile
//! TMA wrote with another swizzle than the descriptor's is reported ([`super::swizzle`]).
//!
//! **Accumulators**: warp `w` of the group holds rows `16w..16w+16`; lane `(g, t)` holds,
//! for each 8-column block `j`, registers `4j..4j+4` = (g, 8j+2t), (g, 8j+2t+1), (g+8,
//! 8j+2t), (g+8, 8j+2t+1). Products are exact in f32 (bf16, f16, e4m3, e5m2 inputs), summed in
//! f64 in k order onto D (or zero, when `scale-d` is false) and rounded once to f32; the
//! GPU's tensor cores align and truncate, FP8 with fewer bits still (see
//! docs/simulator.md).

use super::super::memory::async_reads::AsyncReader;
use super::super::memory::{AccessFault, SharedMemory};
use super::super::value::CanonicalNan;
use super::numeric::{e4m3, e5m2};
use super::Lane;
use crate::thread_state::FaultKind;
use crate::thread_state::Reg;

/// Threads of a warpgroup.
pub(crate) const WARPGROUP: usize = 128;

/// The element type of A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WgmmaInputs {
    Bf16,
    F16,
    E4m3,
    E5m2,
}

impl WgmmaInputs {
    fn bytes(self) -> u32 {
        match self {
            WgmmaInputs::E4m3 | WgmmaInputs::E5m2 => 1,
            _ => 2,
        }
    }

    fn value(self, bits: u64) -> f64 {
        match self {
            WgmmaInputs::Bf16 => f64::from(half::bf16::from_bits(bits as u16).to_f32()),
            WgmmaInputs::F16 => half::f16::from_bits(bits as u16).to_f64(),
            WgmmaInputs::E4m3 => e4m3(bits as u8),
            WgmmaInputs::E5m2 => e5m2(bits as u8),
        }
    }
}

/// `wgmma.mma_async.sync.aligned.m64nNkK.f32.<in>.<in> d, a-desc, b-desc, scale-d,
/// imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b];`, or with A from registers
/// `d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-b];`
#[derive(Clone, Debug)]
pub(crate) struct Wgmma {
    pub inputs: WgmmaInputs,
    pub n: u32,
    pub k: u32,
    /// N/2 accumulators of each thread.
    pub d: Vec<Reg>,
    pub a: WgmmaA,
    pub b: Reg,
    /// The predicate: D accumulates when true, is overwritten when false.
    pub scale_d: Reg,
    pub negate_a: bool,
    pub negate_b: bool,
    /// MN-major (transposed) operands.
    pub trans_a: bool,
    pub trans_b: bool,
}

/// Where A comes from.
#[derive(Clone, Debug)]
pub(crate) enum WgmmaA {
    /// A shared-memory matrix descriptor, warpgroup-uniform.
    Descriptor(Reg),
    /// Four registers per thread holding its fragment of the 64 × K tile, laid out as
    /// `mma.sync`'s A fragments per warp (warp `w` rows `16w..16w+16`): registers 0–3 are
    /// (g, k 0–7 half), (g + 8, k 0–7 half), (g, k 8–15 half), (g + 8, k 8–15 half) of
    /// the thread's quad position, each two 16-bit (or four FP8) elements, the lower first.
    Registers(Vec<Reg>),
}

/// A decoded matrix descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Descriptor {
    start: u64,
    leading: u64,
    stride: u64,
    /// The swizzle's width in bytes (0: none).
    swizzle: u64,
}

fn decode(bits: u64, which: &str) -> Result<Descriptor, String> {
    let field = |shift: u32| ((bits >> shift) & 0x3fff) << 4;
    if (bits >> 49) & 7 != 0 {
        return Err(format!(
            "the {which} descriptor {bits:#x} has a base offset ({}), which the simulator does not model: start the tile at the swizzle's repeat (1024 bytes for 128-byte swizzle)",
            (bits >> 49) & 7
        ));
    }
    Ok(Descriptor {
        start: field(0),
        leading: field(16),
        stride: field(32),
        swizzle: match bits >> 62 {
            1 => 128,
            2 => 64,
            3 => 32,
            _ => 0,
        },
    })
}

impl Descriptor {
    /// The shared address of element (`mn`, `k`) of `e`-byte elements.
    fn address(&self, mn: u64, k: u64, e: u64, mn_major: bool) -> u64 {
        let width = self.swizzle;
        let offset = match (mn_major, width) {
            (false, 0) => {
                (mn % 8) * 16 + (mn / 8) * self.stride + (k * e) % 16 + (k * e / 16) * self.leading
            }
            (false, w) => (mn % 8) * w + (mn / 8) * self.stride + k * e,
            (true, 0) => {
                let per = 16 / e;
                (mn % per) * e + (mn / per) * self.stride + (k % 8) * 16 + (k / 8) * self.leading
            }
            (true, w) => {
                let per = w / e;
                (mn % per) * e + (mn / per) * self.leading + (k % 8) * w + (k / 8) * self.stride
            }
        };
        let address = self.start + offset;
        let bits = match width {
            128 => 7,
            64 => 3,
            32 => 1,
            _ => 0,
        };
        address ^ (((address >> 7) & bits) << 4)
    }
}

/// Runs `wgmma` over the 128 `lanes` of warpgroup `group`. Its operand tiles count as read
/// until a wait retires its group ([`crate::memory::async_reads`]). An error names the lane
/// whose operand caused it.
pub(crate) fn run_wgmma(
    wgmma: &Wgmma,
    group: u32,
    lanes: &mut [Lane<'_>],
    shared: &mut SharedMemory,
) -> Result<(), (usize, FaultKind)> {
    debug_assert_eq!(lanes.len(), WARPGROUP);
    let instruction = |detail: String| (0, FaultKind::Instruction { detail });
    // The descriptors are warpgroup-uniform: lane 0's are the instruction's.
    let regs = &lanes[0].regs;
    let a_descriptor = match &wgmma.a {
        WgmmaA::Descriptor(reg) => Some(*reg as usize),
        WgmmaA::Registers(_) => None,
    };
    for (lane, other) in lanes.iter().enumerate().skip(1) {
        let a_differs = a_descriptor.is_some_and(|a| other.regs[a] != regs[a]);
        if a_differs || other.regs[wgmma.b as usize] != regs[wgmma.b as usize] {
            return Err((
                lane,
                FaultKind::Instruction {
                    detail: "`wgmma.mma_async`'s descriptors differ between the threads of the warpgroup: every thread gives the same".into(),
                },
            ));
        }
    }
    let b = decode(regs[wgmma.b as usize], "B").map_err(instruction)?;
    let site = lanes[0].site;
    let e = u64::from(wgmma.inputs.bytes());
    let (m, n, k) = (64usize, wgmma.n as usize, wgmma.k as usize);
    let read = |shared: &mut SharedMemory,
                descriptor: &Descriptor,
                which: &str,
                mn: usize,
                kk: usize,
                mn_major: bool|
     -> Result<f64, (usize, FaultKind)> {
        let address = descriptor.address(mn as u64, kk as u64, e, mn_major);
        let reads_as = descriptor.swizzle as u32;
        if let Some(written) = shared.swizzles.written_with(address as usize) {
            if written != reads_as {
                return Err(instruction(format!(
                    "the {which} tile at shared byte {address} was written by TMA with {}, but the {which} descriptor reads it with {}: make the tensor map's swizzle and the descriptor's layout agree (`cudajit::tensor::layout::SharedTileSw128` gives both: `TensorMapLayout::with_swizzle_of::<SharedTileSw128>()` and its descriptors)",
                    crate::memory::swizzle::describe(written),
                    crate::memory::swizzle::describe(reads_as)
                )));
            }
        }
        let bits = shared.load_async(address, e as u32).map_err(|fault| match fault {
            AccessFault::OutOfRegion { offset, .. } => instruction(format!(
                "the {which} descriptor (start {:#x}) addresses shared byte {offset}, outside the block's shared memory: a descriptor's address is a `.shared` address (`shared_address(&tile[i])`)",
                descriptor.start
            )),
            other => (0, FaultKind::Access(other)),
        })?;
        shared
            .reads
            .read(AsyncReader::Wgmma(group), address as usize, e as u32, site);
        Ok(wgmma.inputs.value(bits))
    };
    let sign = |negate: bool| if negate { -1.0 } else { 1.0 };
    let mut a_tile = vec![0f64; m * k];
    match &wgmma.a {
        WgmmaA::Registers(registers) => {
            // Each thread's four registers: (row, k) pairs of its fragment, `per` elements
            // of `e` bytes each (2 × 16-bit, or 4 × FP8), K split in two halves.
            let per = 4 / e as usize;
            for (thread, lane) in lanes.iter().enumerate() {
                let (warp, g, t) = (thread / 32, (thread % 32) / 4, thread % 4);
                for (index, &reg) in registers.iter().enumerate() {
                    let row = 16 * warp + g + 8 * (index % 2);
                    let first = per * t + (k / 2) * (index / 2);
                    let word = lane.regs[reg as usize];
                    for x in 0..per {
                        let bits = (word >> (8 * e as usize * x)) & ((1u64 << (8 * e)) - 1);
                        a_tile[row * k + first + x] =
                            sign(wgmma.negate_a) * wgmma.inputs.value(bits);
                    }
                }
            }
        }
        &WgmmaA::Descriptor(reg) => {
            let a = decode(lanes[0].regs[reg as usize], "A").map_err(instruction)?;
            for row in 0..m {
                for kk in 0..k {
                    a_tile[row * k + kk] =
                        sign(wgmma.negate_a) * read(shared, &a, "A", row, kk, wgmma.trans_a)?;
                }
            }
        }
    }
    let mut b_tile = vec![0f64; n * k];
    for column in 0..n {
        for kk in 0..k {
            b_tile[column * k + kk] =
                sign(wgmma.negate_b) * read(shared, &b, "B", column, kk, wgmma.trans_b)?;
        }
    }
    for (thread, lane) in lanes.iter_mut().enumerate() {
        let (warp, g, t) = (thread / 32, (thread % 32) / 4, thread % 4);
        let accumulate = lane.regs[wgmma.scale_d as usize] & 1 != 0;
        for (index, &reg) in wgmma.d.iter().enumerate() {
            let (j, i) = (index / 4, index % 4);
            let row = 16 * warp + g + 8 * (i / 2);
            let column = 8 * j + 2 * t + i % 2;
            let start = if accumulate {
                f64::from(f32::from_bits(lane.regs[reg as usize] as u32))
            } else {
                0.0
            };
            let sum = (0..k).fold(start, |sum, kk| {
                sum + a_tile[row * k + kk] * b_tile[column * k + kk]
            });
            lane.regs[reg as usize] = u64::from((sum as f32).canonical().to_bits());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_decode_as_the_tensor_module_encodes_them() {
        // `k_major_sw128(0x2400)`: start, LBO 16, SBO 1024, 128-byte swizzle.
        let bits = (0x2400u64 >> 4) | (1 << 16) | ((1024u64 >> 4) << 32) | (1 << 62);
        let d = decode(bits, "A").unwrap();
        assert_eq!(
            d,
            Descriptor {
                start: 0x2400,
                leading: 16,
                stride: 1024,
                swizzle: 128
            }
        );
        // K-major, 128-byte swizzle: row r's 16-byte chunk c at chunk c ^ (r % 8).
        for row in 0..16u64 {
            for k in 0..64u64 {
                let plain = 0x2400 + (row / 8) * 1024 + (row % 8) * 128;
                let chunk = (k * 2 / 16) ^ (row % 8);
                assert_eq!(
                    d.address(row, k, 2, false),
                    plain + chunk * 16 + (k * 2) % 16
                );
            }
        }
        // A k slice 32 bytes on (the descriptor's start moves linearly).
        let slice = Descriptor {
            start: 0x2400 + 32,
            ..d
        };
        assert_eq!(slice.address(3, 0, 2, false), d.address(3, 16, 2, false));
        // MN-major, 128-byte swizzle, 64-column chunks 8 KiB apart.
        let mn = Descriptor {
            start: 0,
            leading: 8192,
            stride: 1024,
            swizzle: 128,
        };
        assert_eq!(
            mn.address(64 + 9, 10, 2, true),
            8192 + 1024 + 2 * 128 + ((1 ^ 2) * 16 + 2)
        );
    }
}
