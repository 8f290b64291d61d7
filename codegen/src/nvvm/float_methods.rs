//! Writing the float methods Rust defines from exact operations (`fract`, `signum`,
//! `clamp`, `div_euclid`, `rem_euclid`): the same operations in the same order as Rust's
//! standard library, with libdevice's exact `trunc`, `fmod`, `fabs` and `copysign`, so the
//! GPU's bits are Rust's (the simulator computes them with Rust's methods). Bit casts
//! (`to_bits`, `from_bits`) are `bitcast`s.

use cudajit_core::math::MathFunction;
use cudajit_core::Scalar;

use super::function::Writer;
use super::math::libdevice_name;
use super::types;

/// Rust's `f32::NAN` and `f64::NAN` (what `signum` of a NaN returns), in LLVM's
/// hexadecimal double notation, which names an `f32` constant too.
const RUST_NAN: &str = "0x7FF8000000000000";

impl Writer<'_> {
    /// `x.function(args)` for an `f32`/`f64` `x` of type `s`, if `function` is one of this
    /// module's.
    pub(super) fn float_method(
        &mut self,
        function: MathFunction,
        s: Scalar,
        x: &str,
        args: &[String],
    ) -> Option<String> {
        use MathFunction as M;
        let ty = types::scalar(s);
        let arg = |k: usize| args.get(k).cloned().unwrap_or_default();
        Some(match function {
            M::Fract => {
                let whole = self.libdevice(M::Trunc, s, &[x]);
                self.value(format!("fsub {ty} {x}, {whole}"))
            }
            M::Signum => {
                let one = self.libdevice(M::Copysign, s, &["1.0", x]);
                let nan = self.value(format!("fcmp uno {ty} {x}, {x}"));
                self.value(format!("select i1 {nan}, {ty} {RUST_NAN}, {ty} {one}"))
            }
            M::Clamp => {
                // Rust's order: raise to `min`, then lower to `max`; a NaN `x` stays.
                let (min, max) = (arg(0), arg(1));
                let below = self.value(format!("fcmp olt {ty} {x}, {min}"));
                let raised = self.value(format!("select i1 {below}, {ty} {min}, {ty} {x}"));
                let above = self.value(format!("fcmp ogt {ty} {raised}, {max}"));
                self.value(format!("select i1 {above}, {ty} {max}, {ty} {raised}"))
            }
            M::DivEuclid => {
                let y = arg(0);
                let quotient = self.value(format!("fdiv {ty} {x}, {y}"));
                let q = self.libdevice(M::Trunc, s, &[&quotient]);
                let r = self.fmod(s, x, &y);
                let negative = self.value(format!("fcmp olt {ty} {r}, 0.0"));
                let y_positive = self.value(format!("fcmp ogt {ty} {y}, 0.0"));
                let down = self.value(format!("fsub {ty} {q}, 1.0"));
                let up = self.value(format!("fadd {ty} {q}, 1.0"));
                let adjusted =
                    self.value(format!("select i1 {y_positive}, {ty} {down}, {ty} {up}"));
                self.value(format!("select i1 {negative}, {ty} {adjusted}, {ty} {q}"))
            }
            M::RemEuclid => {
                let y = arg(0);
                let r = self.fmod(s, x, &y);
                let negative = self.value(format!("fcmp olt {ty} {r}, 0.0"));
                let abs_y = self.libdevice(M::Abs, s, &[&y]);
                let adjusted = self.value(format!("fadd {ty} {r}, {abs_y}"));
                self.value(format!("select i1 {negative}, {ty} {adjusted}, {ty} {r}"))
            }
            _ => return None,
        })
    }

    /// `x.to_bits()` and `T::from_bits(x)`: the same bits in the other type (bf16 already
    /// lives in an `i16`).
    pub(super) fn bit_cast(&mut self, from: Scalar, to: Scalar, x: &str) -> String {
        let (from_ty, to_ty) = (types::scalar(from), types::scalar(to));
        if from_ty == to_ty {
            return x.to_owned();
        }
        self.value(format!("bitcast {from_ty} {x} to {to_ty}"))
    }

    /// A call of libdevice's version of `function` for `s` on `args` (all of type `s`).
    fn libdevice(&mut self, function: MathFunction, s: Scalar, args: &[&str]) -> String {
        let ty = types::scalar(s);
        let name = libdevice_name(function, s);
        let params = vec![ty; args.len()].join(", ");
        self.declare(format!("declare {ty} @{name}({params}) nounwind readnone"));
        let operands: Vec<String> = args.iter().map(|a| format!("{ty} {a}")).collect();
        self.value(format!("call {ty} @{name}({})", operands.join(", ")))
    }

    /// Rust's float `%`: C's `fmod`, exact (as the writer's `%` computes it).
    fn fmod(&mut self, s: Scalar, x: &str, y: &str) -> String {
        let ty = types::scalar(s);
        let name = if s == Scalar::F32 {
            "__nv_fmodf"
        } else {
            "__nv_fmod"
        };
        self.declare(format!(
            "declare {ty} @{name}({ty}, {ty}) nounwind readnone"
        ));
        self.value(format!("call {ty} @{name}({ty} {x}, {ty} {y})"))
    }
}
