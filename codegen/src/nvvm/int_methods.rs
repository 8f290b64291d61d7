//! Writing the integer methods with Rust's exact semantics (`wrapping_*`, `saturating_*`,
//! rotations, `reverse_bits`, `swap_bytes`, `pow`, `abs_diff`, `clamp`, `signum`, the
//! Euclidean division): LLVM's intrinsics where one is the operation (`llvm.fshl` is PTX
//! `shf.l.wrap`, `llvm.bitreverse` is `brev`, the `*.with.overflow` pairs give the
//! saturation), PTX `prmt` for `swap_bytes` (as `__byte_perm`), compares and selects
//! otherwise, and `pow` as the square-and-multiply loop a
//! CUDA C++ programmer writes. The simulator's `int_methods` computes the same with Rust's
//! own methods.

use cudajit_core::math::MathFunction;
use cudajit_core::Scalar;

use super::function::Writer;
use super::types;

impl Writer<'_> {
    /// `x.function(args)` for an integer `x` of type `s`, if `function` is one of this
    /// module's (`args` are the extra arguments' values: `u32` amounts and exponents, the
    /// receiver's type otherwise).
    pub(super) fn int_method(
        &mut self,
        function: MathFunction,
        s: Scalar,
        x: &str,
        args: &[String],
    ) -> Option<String> {
        use MathFunction as M;
        let ty = types::scalar(s);
        let signed = s.is_signed();
        let arg = |k: usize| args.get(k).cloned().unwrap_or_default();
        Some(match function {
            M::WrappingAdd => self.value(format!("add {ty} {x}, {}", arg(0))),
            M::WrappingSub => self.value(format!("sub {ty} {x}, {}", arg(0))),
            M::WrappingMul => self.value(format!("mul {ty} {x}, {}", arg(0))),
            M::WrappingNeg => self.value(format!("sub {ty} 0, {x}")),
            M::WrappingShl | M::WrappingShr => {
                let amount = self.amount(&arg(0), s);
                let opcode = match (function, signed) {
                    (M::WrappingShl, _) => "shl",
                    (_, true) => "ashr",
                    (_, false) => "lshr",
                };
                self.value(format!("{opcode} {ty} {x}, {amount}"))
            }
            M::SaturatingAdd | M::SaturatingSub | M::SaturatingMul => {
                self.saturating(function, s, x, &arg(0))
            }
            M::RotateLeft | M::RotateRight => {
                // A funnel shift of a value with itself is a rotation; its amount is taken
                // modulo the width, as Rust's is (the `u32` narrowed to `ty` keeps the
                // residue, every width dividing 2^8).
                let amount = self.amount_unmasked(&arg(0), s);
                if s.bits() == 64 {
                    // `llvm.fshl.i64` by a large amount came back 0 from libNVVM on the H200
                    // (`x.rotate_left(u32::MAX)`, which is a rotation by 63): two shifts by
                    // amounts masked to 0..63, whose `or` is `x` itself for a rotation of 0.
                    let there = self.value(format!("and i64 {amount}, 63"));
                    let width_minus = self.value(format!("sub i64 64, {there}"));
                    let back = self.value(format!("and i64 {width_minus}, 63"));
                    let (first, second) = if function == M::RotateLeft {
                        ("shl", "lshr")
                    } else {
                        ("lshr", "shl")
                    };
                    let a = self.value(format!("{first} i64 {x}, {there}"));
                    let b = self.value(format!("{second} i64 {x}, {back}"));
                    return Some(self.value(format!("or i64 {a}, {b}")));
                }
                let name = if function == M::RotateLeft {
                    "fshl"
                } else {
                    "fshr"
                };
                self.declare(format!(
                    "declare {ty} @llvm.{name}.{ty}({ty}, {ty}, {ty}) nounwind readnone"
                ));
                self.value(format!(
                    "call {ty} @llvm.{name}.{ty}({ty} {x}, {ty} {x}, {ty} {amount})"
                ))
            }
            M::ReverseBits => {
                self.declare(format!(
                    "declare {ty} @llvm.bitreverse.{ty}({ty}) nounwind readnone"
                ));
                self.value(format!("call {ty} @llvm.bitreverse.{ty}({ty} {x})"))
            }
            M::SwapBytes => self.swap_bytes(s, x),
            M::Pow => self.pow(s, x, &arg(0)),
            M::AbsDiff => {
                // The difference of the larger and the smaller, wrapping: exact as the
                // unsigned type of the same width (`i32::MIN.abs_diff(i32::MAX)` is
                // `u32::MAX`).
                let less = if signed { "slt" } else { "ult" };
                let y = arg(0);
                let lt = self.value(format!("icmp {less} {ty} {x}, {y}"));
                let up = self.value(format!("sub {ty} {y}, {x}"));
                let down = self.value(format!("sub {ty} {x}, {y}"));
                self.value(format!("select i1 {lt}, {ty} {up}, {ty} {down}"))
            }
            M::Clamp => {
                let (less, greater) = if signed {
                    ("slt", "sgt")
                } else {
                    ("ult", "ugt")
                };
                let (min, max) = (arg(0), arg(1));
                let below = self.value(format!("icmp {less} {ty} {x}, {min}"));
                let above = self.value(format!("icmp {greater} {ty} {x}, {max}"));
                let high = self.value(format!("select i1 {above}, {ty} {max}, {ty} {x}"));
                self.value(format!("select i1 {below}, {ty} {min}, {ty} {high}"))
            }
            M::Signum => {
                let positive = self.value(format!("icmp sgt {ty} {x}, 0"));
                let negative = self.value(format!("icmp slt {ty} {x}, 0"));
                let one = self.value(format!("zext i1 {positive} to {ty}"));
                let minus = self.value(format!("zext i1 {negative} to {ty}"));
                self.value(format!("sub {ty} {one}, {minus}"))
            }
            M::DivCeil => {
                // `x / y + (x % y != 0)`, the unsigned quotient rounded up.
                let y = arg(0);
                let q = self.value(format!("udiv {ty} {x}, {y}"));
                let r = self.value(format!("urem {ty} {x}, {y}"));
                let inexact = self.value(format!("icmp ne {ty} {r}, 0"));
                let up = self.value(format!("zext i1 {inexact} to {ty}"));
                self.value(format!("add {ty} {q}, {up}"))
            }
            M::DivEuclid | M::RemEuclid if !signed => {
                // Unsigned remainders are never negative: Euclid's division is `/`.
                let opcode = if function == M::DivEuclid {
                    "udiv"
                } else {
                    "urem"
                };
                self.value(format!("{opcode} {ty} {x}, {}", arg(0)))
            }
            M::DivEuclid => {
                let y = arg(0);
                let q = self.value(format!("sdiv {ty} {x}, {y}"));
                let r = self.value(format!("srem {ty} {x}, {y}"));
                let negative = self.value(format!("icmp slt {ty} {r}, 0"));
                let y_positive = self.value(format!("icmp sgt {ty} {y}, 0"));
                let down = self.value(format!("sub {ty} {q}, 1"));
                let up = self.value(format!("add {ty} {q}, 1"));
                let adjusted =
                    self.value(format!("select i1 {y_positive}, {ty} {down}, {ty} {up}"));
                self.value(format!("select i1 {negative}, {ty} {adjusted}, {ty} {q}"))
            }
            M::RemEuclid => {
                // `r.wrapping_add(rhs.wrapping_abs())` for a negative `r`, as Rust writes it.
                let y = arg(0);
                let r = self.value(format!("srem {ty} {x}, {y}"));
                let negative = self.value(format!("icmp slt {ty} {r}, 0"));
                let y_negative = self.value(format!("icmp slt {ty} {y}, 0"));
                let minus_y = self.value(format!("sub {ty} 0, {y}"));
                let abs_y = self.value(format!("select i1 {y_negative}, {ty} {minus_y}, {ty} {y}"));
                let adjusted = self.value(format!("add {ty} {r}, {abs_y}"));
                self.value(format!("select i1 {negative}, {ty} {adjusted}, {ty} {r}"))
            }
            _ => return None,
        })
    }

    /// `swap_bytes`: PTX `prmt` (CUDA C++'s `__byte_perm(x, 0, 0x0123)`), which LLVM 7's
    /// `llvm.bswap` does not select (it expands to shifts and masks); a 64-bit value
    /// swaps its halves' bytes and the halves.
    fn swap_bytes(&mut self, s: Scalar, x: &str) -> String {
        let ty = types::scalar(s);
        match s.bits() {
            // One byte has nothing to swap.
            8 => x.to_owned(),
            16 => {
                let wide = self.value(format!("zext i16 {x} to i32"));
                // Bytes 1, 0 of `x`, then zero bytes (selector 4 reads the zero operand).
                let swapped = self.byte_permute(&wide, "0x4401");
                self.value(format!("trunc i32 {swapped} to i16"))
            }
            32 => self.byte_permute(x, "0x0123"),
            _ => {
                let low = self.value(format!("trunc {ty} {x} to i32"));
                let high_wide = self.value(format!("lshr {ty} {x}, 32"));
                let high = self.value(format!("trunc {ty} {high_wide} to i32"));
                let low = self.byte_permute(&low, "0x0123");
                let high = self.byte_permute(&high, "0x0123");
                let new_low = self.value(format!("zext i32 {high} to i64"));
                let new_high = self.value(format!("zext i32 {low} to i64"));
                let new_high = self.value(format!("shl i64 {new_high}, 32"));
                self.value(format!("or i64 {new_high}, {new_low}"))
            }
        }
    }

    /// `prmt.b32 d, x, 0, selector`: the bytes of `x` (0..3) or zero (4) the selector's
    /// nibbles name, lowest first.
    fn byte_permute(&mut self, x: &str, selector: &str) -> String {
        self.value(format!(
            "call i32 asm \"prmt.b32 $0, $1, 0, {selector};\", \"=r,r\"(i32 {x})"
        ))
    }

    /// A `u32` shift amount taken modulo the width of `s`, in `s`'s type.
    fn amount(&mut self, amount: &str, s: Scalar) -> String {
        let masked = self.value(format!("and i32 {amount}, {}", s.bits() - 1));
        self.amount_unmasked(&masked, s)
    }

    /// A `u32` amount in `s`'s type (truncated or zero-extended).
    fn amount_unmasked(&mut self, amount: &str, s: Scalar) -> String {
        let ty = types::scalar(s);
        match s.bits() {
            32 => amount.to_owned(),
            64 => self.value(format!("zext i32 {amount} to i64")),
            _ => self.value(format!("trunc i32 {amount} to {ty}")),
        }
    }

    /// `saturating_add`/`_sub`/`_mul`: the wrapped result unless LLVM's overflow bit is
    /// set, then the bound the exact result passed (for signed addition and subtraction,
    /// the sign of `x` tells which; for multiplication, the signs of both).
    fn saturating(&mut self, function: MathFunction, s: Scalar, x: &str, y: &str) -> String {
        let ty = types::scalar(s);
        let bits = s.bits();
        let signed = s.is_signed();
        let op = match function {
            MathFunction::SaturatingAdd => "add",
            MathFunction::SaturatingSub => "sub",
            _ => "mul",
        };
        let prefix = if signed { "s" } else { "u" };
        let name = format!("llvm.{prefix}{op}.with.overflow.{ty}");
        self.declare(format!(
            "declare {{{ty}, i1}} @{name}({ty}, {ty}) nounwind readnone"
        ));
        let pair = self.value(format!("call {{{ty}, i1}} @{name}({ty} {x}, {ty} {y})"));
        let wrapped = self.value(format!("extractvalue {{{ty}, i1}} {pair}, 0"));
        let overflow = self.value(format!("extractvalue {{{ty}, i1}} {pair}, 1"));
        let all_ones = types::int_constant(u64::MAX, bits);
        let bound = if !signed {
            if op == "sub" {
                "0".to_owned()
            } else {
                all_ones
            }
        } else {
            let max = types::int_constant((1u64 << (bits - 1)) - 1, bits);
            let min = types::int_constant(1u64 << (bits - 1), bits);
            let sign_source = if op == "mul" {
                self.value(format!("xor {ty} {x}, {y}"))
            } else {
                x.to_owned()
            };
            let negative = self.value(format!("icmp slt {ty} {sign_source}, 0"));
            self.value(format!("select i1 {negative}, {ty} {min}, {ty} {max}"))
        };
        self.value(format!(
            "select i1 {overflow}, {ty} {bound}, {ty} {wrapped}"
        ))
    }

    /// `x.pow(n)`: square and multiply over the bits of `n`, wrapping (the product modulo
    /// 2^bits does not depend on the order Rust's `pow` multiplies in).
    fn pow(&mut self, s: Scalar, x: &str, n: &str) -> String {
        let ty = types::scalar(s);
        let entry = self.current_label.clone();
        let head = self.label("pow.head");
        let body = self.label("pow.body");
        let end = self.label("pow.end");
        // The loop-carried values are named before their definitions, for the phis.
        let [acc, base, exp, next_acc, next_base, next_exp] = [0; 6].map(|_| self.fresh_name());
        self.branch(&head);
        self.start(&head);
        self.line(format!(
            "{acc} = phi {ty} [ 1, %{entry} ], [ {next_acc}, %{body} ]"
        ));
        self.line(format!(
            "{base} = phi {ty} [ {x}, %{entry} ], [ {next_base}, %{body} ]"
        ));
        self.line(format!(
            "{exp} = phi i32 [ {n}, %{entry} ], [ {next_exp}, %{body} ]"
        ));
        let done = self.value(format!("icmp eq i32 {exp}, 0"));
        self.line(format!("br i1 {done}, label %{end}, label %{body}"));
        self.terminated = true;
        self.start(&body);
        let low = self.value(format!("and i32 {exp}, 1"));
        let odd = self.value(format!("icmp ne i32 {low}, 0"));
        let product = self.value(format!("mul {ty} {acc}, {base}"));
        self.line(format!(
            "{next_acc} = select i1 {odd}, {ty} {product}, {ty} {acc}"
        ));
        self.line(format!("{next_base} = mul {ty} {base}, {base}"));
        self.line(format!("{next_exp} = lshr i32 {exp}, 1"));
        self.branch(&head);
        self.start(&end);
        acc
    }

    /// A new value name, for an instruction written later.
    pub(super) fn fresh_name(&mut self) -> String {
        let name = format!("%v{}", self.next_value);
        self.next_value += 1;
        name
    }
}
