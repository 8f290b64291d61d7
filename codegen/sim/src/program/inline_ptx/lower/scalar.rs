//! PTX instructions of one thread with a plain register counterpart: each becomes the
//! interpreter's ordinary `Unary`/`Binary`/`Ternary`/`Copy` operations, so they cost what
//! the kernel language's own arithmetic costs.
//!
//! Registers hold values zero-extended from their width (`value.rs`); PTX's typed
//! instructions read the low bits of theirs and write results of their width.

use super::super::template::Instruction;
use super::Binder;
use crate::isa::{Op, Reg};
use crate::value::{BinaryFn, CanonicalNan, TernaryFn, UnaryFn};

/// A PTX fundamental type as an instruction suffix names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `.bN`, `.uN`: bits, unsigned.
    Unsigned(u32),
    /// `.sN`.
    Signed(u32),
    F32,
    F64,
}

fn kind(suffix: &str) -> Option<Kind> {
    let width = |digits: &str| match digits {
        "16" => Some(16),
        "32" => Some(32),
        "64" => Some(64),
        _ => None,
    };
    match suffix {
        "f32" => Some(Kind::F32),
        "f64" => Some(Kind::F64),
        _ => match suffix.split_at_checked(1)? {
            ("b" | "u", digits) => width(digits).map(Kind::Unsigned),
            ("s", digits) => width(digits).map(Kind::Signed),
            _ => None,
        },
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn f32_of(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

fn f32_bits(x: f32) -> u64 {
    u64::from(x.canonical().to_bits())
}

fn f64_bits(x: f64) -> u64 {
    x.canonical().to_bits()
}

fn sign_extend(bits: u64, width: u32) -> i64 {
    let shift = 64 - width;
    ((bits << shift) as i64) >> shift
}

/// Lowers `instruction` if it is one of this module's; `Ok(false)` if it is not.
pub(super) fn lower(instruction: &Instruction, binder: &mut Binder<'_>) -> Result<bool, String> {
    let parts: Vec<&str> = instruction.opcode.split('.').collect();
    let operands = &instruction.operands;
    let ty = parts.last().copied().and_then(kind);
    match (parts.as_slice(), ty) {
        (["mov", _], Some(Kind::Unsigned(bits) | Kind::Signed(bits))) => {
            mov(binder, instruction, bits)?
        }
        (["mov", "f32" | "f64"], Some(k)) => {
            let bits = if k == Kind::F32 { 32 } else { 64 };
            mov(binder, instruction, bits)?
        }
        (["add" | "sub", ..], Some(k)) | (["mul", "lo", _], Some(k)) => {
            let f = arithmetic(parts[0], k).ok_or_else(|| unsupported_type(instruction))?;
            let [d, a, b] = three(binder, instruction)?;
            binder.emit(Op::Binary { f, dst: d, a, b });
        }
        (["fma", "rn", _], Some(k)) => {
            let f: TernaryFn = match k {
                Kind::F32 => |a, b, c| f32_bits(f32_of(a).mul_add(f32_of(b), f32_of(c))),
                Kind::F64 => |a, b, c| {
                    f64_bits(f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)))
                },
                _ => return Err(unsupported_type(instruction)),
            };
            let [d, a, b, c] = four(binder, instruction)?;
            binder.emit(Op::Ternary { f, dst: d, a, b, c });
        }
        (["setp", compare, _], Some(k)) => {
            let f = comparison(compare, k).ok_or_else(|| unsupported_type(instruction))?;
            let [d, a, b] = three(binder, instruction)?;
            binder.emit(Op::Binary { f, dst: d, a, b });
        }
        (["selp", _], Some(k)) => {
            let f: TernaryFn = match k {
                Kind::Unsigned(bits) | Kind::Signed(bits) if bits >= 32 => {
                    |a, b, p| if p & 1 != 0 { a } else { b }
                }
                Kind::F32 | Kind::F64 => |a, b, p| if p & 1 != 0 { a } else { b },
                _ => return Err(unsupported_type(instruction)),
            };
            let [d, a, b, p] = four(binder, instruction)?;
            binder.emit(Op::Ternary {
                f,
                dst: d,
                a,
                b,
                c: p,
            });
        }
        // `cvt.rn.bf16x2.f32 d, a, b`: `a` rounded into the upper half, `b` into the lower.
        (["cvt", "rn", "bf16x2" | "f16x2", "f32"], _) => {
            let f: BinaryFn = if parts[2] == "bf16x2" {
                |a, b| pack_halves(bf16_bits(f32_of(a)), bf16_bits(f32_of(b)))
            } else {
                |a, b| pack_halves(f16_bits(f32_of(a)), f16_bits(f32_of(b)))
            };
            let [d, a, b] = three(binder, instruction)?;
            binder.emit(Op::Binary { f, dst: d, a, b });
        }
        // `cvt.{u,s}M.{u,s}N d, a`: `a` read as its N-bit type (zero- or sign-extended),
        // kept to M bits (a 16-bit TMA multicast mask from a 32-bit operand, say).
        (["cvt", to, from], _)
            if matches!(kind(to), Some(Kind::Unsigned(_) | Kind::Signed(_)))
                && matches!(kind(from), Some(Kind::Unsigned(_) | Kind::Signed(_))) =>
        {
            let (Some(Kind::Unsigned(to_bits) | Kind::Signed(to_bits)), Some(source)) =
                (kind(to), kind(from))
            else {
                unreachable!("both integer kinds");
            };
            let [d, a] = two(binder, instruction)?;
            let (from_bits, signed) = match source {
                Kind::Signed(bits) => (bits, true),
                Kind::Unsigned(bits) => (bits, false),
                _ => unreachable!("an integer kind"),
            };
            let narrowed = binder.register();
            let from_mask = binder.constant(mask(from_bits));
            binder.emit(Op::Binary {
                f: |a, m| a & m,
                dst: narrowed,
                a,
                b: from_mask,
            });
            let extended = if signed {
                let extended = binder.register();
                let width = binder.constant(u64::from(from_bits));
                binder.emit(Op::Binary {
                    f: |a, w| sign_extend(a, w as u32) as u64,
                    dst: extended,
                    a: narrowed,
                    b: width,
                });
                extended
            } else {
                narrowed
            };
            let to_mask = binder.constant(mask(to_bits));
            binder.emit(Op::Binary {
                f: |a, m| a & m,
                dst: d,
                a: extended,
                b: to_mask,
            });
        }
        // `cvt.rna.tf32.f32 d, a`: `a` rounded to tf32, ties away from zero.
        (["cvt", "rna", "tf32", "f32"], _) => {
            let f: UnaryFn = |a| u64::from(crate::ptx::numeric::round_to_tf32(f32_of(a)));
            let [d, a] = two(binder, instruction)?;
            binder.emit(Op::Unary { f, dst: d, a });
        }
        // The SFU's 2^x: computed exactly here (the GPU's is within 2 ulp), with `.ftz`
        // flushing subnormal inputs and results to zero of the same sign.
        (["ex2", "approx", "ftz", "f32"], _) | (["ex2", "approx", "f32"], _) => {
            let f: UnaryFn = if parts[2] == "ftz" {
                |a| {
                    let x = flush(f32_of(a));
                    f32_bits(flush(x.exp2()))
                }
            } else {
                |a| f32_bits(f32_of(a).exp2())
            };
            let [d, a] = two(binder, instruction)?;
            binder.emit(Op::Unary { f, dst: d, a });
        }
        // Every simulated access is already ordered as a host `SeqCst` fence orders it.
        (["membar", "cta" | "gl" | "sys"], _)
        | (["fence", "sc" | "acq_rel", "cta" | "cluster" | "gpu" | "sys"], _) => {
            if !operands.is_empty() {
                return Err(format!("`{}` takes no operands", instruction.opcode));
            }
            binder.emit(Op::Fence);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn unsupported_type(instruction: &Instruction) -> String {
    format!(
        "the PTX instruction `{}` (this operation is simulated for other types only)",
        instruction.opcode
    )
}

fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn pack_halves(hi: u16, lo: u16) -> u64 {
    (u64::from(hi) << 16) | u64::from(lo)
}

/// Round to nearest even; NaN becomes the canonical `0x7fff`, as `cvt.rn.bf16x2` gives.
fn bf16_bits(x: f32) -> u16 {
    if x.is_nan() {
        0x7fff
    } else {
        half::bf16::from_f32(x).to_bits()
    }
}

fn f16_bits(x: f32) -> u16 {
    if x.is_nan() {
        0x7fff
    } else {
        half::f16::from_f32(x).to_bits()
    }
}

fn arithmetic(op: &str, kind: Kind) -> Option<BinaryFn> {
    Some(match (op, kind) {
        ("add", Kind::Unsigned(32) | Kind::Signed(32)) => {
            |a, b| u64::from((a as u32).wrapping_add(b as u32))
        }
        ("add", Kind::Unsigned(64) | Kind::Signed(64)) => |a, b| a.wrapping_add(b),
        ("sub", Kind::Unsigned(32) | Kind::Signed(32)) => {
            |a, b| u64::from((a as u32).wrapping_sub(b as u32))
        }
        ("sub", Kind::Unsigned(64) | Kind::Signed(64)) => |a, b| a.wrapping_sub(b),
        ("mul", Kind::Unsigned(32) | Kind::Signed(32)) => {
            |a, b| u64::from((a as u32).wrapping_mul(b as u32))
        }
        ("mul", Kind::Unsigned(64) | Kind::Signed(64)) => |a, b| a.wrapping_mul(b),
        ("add", Kind::F32) => |a, b| f32_bits(f32_of(a) + f32_of(b)),
        ("sub", Kind::F32) => |a, b| f32_bits(f32_of(a) - f32_of(b)),
        ("add", Kind::F64) => |a, b| f64_bits(f64::from_bits(a) + f64::from_bits(b)),
        ("sub", Kind::F64) => |a, b| f64_bits(f64::from_bits(a) - f64::from_bits(b)),
        _ => return None,
    })
}

fn comparison(compare: &str, kind: Kind) -> Option<BinaryFn> {
    macro_rules! by {
        ($get:expr) => {
            match compare {
                "eq" => |a, b| u64::from($get(a) == $get(b)),
                "ne" => |a, b| u64::from($get(a) != $get(b)),
                "lt" => |a, b| u64::from($get(a) < $get(b)),
                "le" => |a, b| u64::from($get(a) <= $get(b)),
                "gt" => |a, b| u64::from($get(a) > $get(b)),
                "ge" => |a, b| u64::from($get(a) >= $get(b)),
                _ => return None,
            }
        };
    }
    Some(match kind {
        Kind::Unsigned(32) => by!(|x: u64| x as u32),
        Kind::Unsigned(64) => by!(|x: u64| x),
        Kind::Signed(32) => by!(|x: u64| sign_extend(x, 32)),
        Kind::Signed(64) => by!(|x: u64| x as i64),
        Kind::F32 => by!(f32_of),
        Kind::F64 => by!(f64::from_bits),
        _ => return None,
    })
}

/// `mov.bN d, a`; `mov.bN {d0, .., dk}, a` (unpack: `d0` the lowest bits); `mov.bN d,
/// {a0, .., ak}` (pack).
fn mov(binder: &mut Binder<'_>, instruction: &Instruction, bits: u32) -> Result<(), String> {
    let [to, from] = instruction.operands.as_slice() else {
        return Err(format!(
            "`{}` takes a destination and a source",
            instruction.opcode
        ));
    };
    let to = binder.outputs(to)?;
    let from = binder.inputs(from)?;
    match (to.as_slice(), from.as_slice()) {
        ([d], [a]) => {
            let m = binder.constant(mask(bits));
            binder.emit(Op::Binary {
                f: |a, m| a & m,
                dst: *d,
                a: *a,
                b: m,
            });
        }
        (parts, [a]) if (bits as usize).is_multiple_of(parts.len()) => {
            let width = bits / parts.len() as u32;
            let m = binder.constant(mask(width));
            for (i, &d) in parts.iter().enumerate() {
                let shift = binder.constant(u64::from(width) * i as u64);
                let shifted = binder.register();
                binder.emit(Op::Binary {
                    f: |a, s| a >> s,
                    dst: shifted,
                    a: *a,
                    b: shift,
                });
                binder.emit(Op::Binary {
                    f: |a, m| a & m,
                    dst: d,
                    a: shifted,
                    b: m,
                });
            }
        }
        ([d], parts) if (bits as usize).is_multiple_of(parts.len()) => {
            let width = bits / parts.len() as u32;
            let m = binder.constant(mask(width));
            let total = binder.register();
            let zero = binder.constant(0);
            binder.emit(Op::Copy {
                dst: total,
                src: zero,
            });
            for (i, &a) in parts.iter().enumerate() {
                let shift = binder.constant(u64::from(width) * i as u64);
                let piece = binder.register();
                binder.emit(Op::Binary {
                    f: |a, m| a & m,
                    dst: piece,
                    a,
                    b: m,
                });
                binder.emit(Op::Binary {
                    f: |a, s| a << s,
                    dst: piece,
                    a: piece,
                    b: shift,
                });
                binder.emit(Op::Binary {
                    f: |a, b| a | b,
                    dst: total,
                    a: total,
                    b: piece,
                });
            }
            binder.emit(Op::Copy {
                dst: *d,
                src: total,
            });
        }
        _ => {
            return Err(format!(
                "`{}` with {} destination and {} source registers: a move splits or joins {bits} bits into equal parts",
                instruction.opcode,
                to.len(),
                from.len()
            ))
        }
    }
    Ok(())
}

fn operands<const N: usize>(
    binder: &mut Binder<'_>,
    instruction: &Instruction,
) -> Result<[Reg; N], String> {
    if instruction.operands.len() != N {
        return Err(format!(
            "`{}` takes {N} operands, not {}",
            instruction.opcode,
            instruction.operands.len()
        ));
    }
    let mut regs = [0; N];
    regs[0] = binder.output(&instruction.operands[0])?;
    for (reg, operand) in regs.iter_mut().zip(&instruction.operands).skip(1) {
        *reg = binder.input(operand)?;
    }
    Ok(regs)
}

fn two(binder: &mut Binder<'_>, instruction: &Instruction) -> Result<[Reg; 2], String> {
    operands::<2>(binder, instruction)
}

fn three(binder: &mut Binder<'_>, instruction: &Instruction) -> Result<[Reg; 3], String> {
    operands::<3>(binder, instruction)
}

fn four(binder: &mut Binder<'_>, instruction: &Instruction) -> Result<[Reg; 4], String> {
    operands::<4>(binder, instruction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_round_to_nearest_even_with_a_in_the_upper_half() {
        // 1.0 + 2^-8 is halfway between two bf16 values: ties to even (1.0).
        let tie = f32::from_bits(0x3f80_8000);
        assert_eq!(bf16_bits(tie), 0x3f80);
        // Just above the tie rounds up.
        assert_eq!(bf16_bits(f32::from_bits(0x3f80_8001)), 0x3f81);
        assert_eq!(pack_halves(bf16_bits(2.0), bf16_bits(1.0)), 0x4000_3f80);
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(bf16_bits(f32::NAN), 0x7fff);
    }

    #[test]
    fn signed_comparisons_read_the_low_bits_as_signed() {
        let lt = comparison("lt", Kind::Signed(32)).unwrap();
        assert_eq!(lt(u64::from(u32::MAX), 0), 1); // -1 < 0
        let ltu = comparison("lt", Kind::Unsigned(32)).unwrap();
        assert_eq!(ltu(u64::from(u32::MAX), 0), 0);
        assert_eq!(kind("b16"), Some(Kind::Unsigned(16)));
        assert_eq!(kind("pred"), None);
    }
}
