//! Writing atomics: read-modify-write operations at device, block or system scope.

use cudajit_core::intrinsics::{AtomicOp, AtomicScope};
use cudajit_core::Scalar;

use super::function::Writer;
use super::types;

impl Writer<'_> {
    /// A relaxed, device-scope atomic (CUDA's `atomicAdd` and friends). Floats use NVVM's
    /// add intrinsics, or their integer bits for exchange and compare-exchange.
    pub(super) fn atomic(&mut self, op: AtomicOp, ty: Scalar, values: &[String]) -> String {
        let t = types::scalar(ty);
        let pointer = &values[0];
        if ty.is_float() && matches!(op, AtomicOp::Add | AtomicOp::Sub) {
            let suffix = if ty == Scalar::F32 {
                "f32.p0f32"
            } else {
                "f64.p0f64"
            };
            let name = format!("llvm.nvvm.atomic.load.add.{suffix}");
            self.declare(format!("declare {t} @{name}({t}*, {t}) nounwind"));
            let operand = if op == AtomicOp::Sub {
                self.value(format!("fsub {t} -0.0, {}", values[1]))
            } else {
                values[1].clone()
            };
            return self.value(format!("call {t} @{name}({t}* {pointer}, {t} {operand})"));
        }
        if ty.is_float() {
            // Exchange and compare-exchange move bits: do them on the integer of that width.
            let int = if ty == Scalar::F32 {
                Scalar::U32
            } else {
                Scalar::U64
            };
            let i = types::scalar(int);
            let int_pointer = self.value(format!("bitcast {t}* {pointer} to {i}*"));
            let mut int_values = vec![int_pointer];
            for value in &values[1..] {
                int_values.push(self.value(format!("bitcast {t} {value} to {i}")));
            }
            let old = self.atomic(op, int, &int_values);
            return self.value(format!("bitcast {i} {old} to {t}"));
        }
        if op == AtomicOp::CompareExchange {
            let pair = self.value(format!(
                "cmpxchg {t}* {pointer}, {t} {}, {t} {} monotonic monotonic",
                values[1], values[2]
            ));
            return self.value(format!("extractvalue {{ {t}, i1 }} {pair}, 0"));
        }
        let name = match (op, ty.is_signed()) {
            (AtomicOp::Add, _) => "add",
            (AtomicOp::Sub, _) => "sub",
            (AtomicOp::Min, true) => "min",
            (AtomicOp::Min, false) => "umin",
            (AtomicOp::Max, true) => "max",
            (AtomicOp::Max, false) => "umax",
            (AtomicOp::And, _) => "and",
            (AtomicOp::Or, _) => "or",
            (AtomicOp::Xor, _) => "xor",
            _ => "xchg",
        };
        self.value(format!(
            "atomicrmw {name} {t}* {pointer}, {t} {} monotonic",
            values[1]
        ))
    }

    /// A relaxed atomic at block or system scope, as PTX `atom.cta`/`atom.sys` (LLVM 7 has
    /// no scopes on `atomicrmw`, and NVVM's scoped intrinsics lack the unsigned min/max).
    pub(super) fn scoped_atomic(
        &mut self,
        op: AtomicOp,
        scope: AtomicScope,
        ty: Scalar,
        values: &[String],
    ) -> String {
        let scope = if scope == AtomicScope::Block {
            "cta"
        } else {
            "sys"
        };
        let t = types::scalar(ty);
        let wide = ty.bits() == 64;
        let (ptx_op, ptx_ty) = match op {
            AtomicOp::Add | AtomicOp::Sub if ty.is_float() => {
                ("add", if wide { "f64" } else { "f32" })
            }
            AtomicOp::Add | AtomicOp::Sub => ("add", if wide { "u64" } else { "u32" }),
            AtomicOp::Min | AtomicOp::Max => {
                let op = if op == AtomicOp::Min { "min" } else { "max" };
                let ty = match (ty.is_signed(), wide) {
                    (true, true) => "s64",
                    (true, false) => "s32",
                    (false, true) => "u64",
                    (false, false) => "u32",
                };
                (op, ty)
            }
            AtomicOp::And => ("and", if wide { "b64" } else { "b32" }),
            AtomicOp::Or => ("or", if wide { "b64" } else { "b32" }),
            AtomicOp::Xor => ("xor", if wide { "b64" } else { "b32" }),
            AtomicOp::Exchange => ("exch", if wide { "b64" } else { "b32" }),
            AtomicOp::CompareExchange => ("cas", if wide { "b64" } else { "b32" }),
        };
        let letter = match (ty.is_float(), wide) {
            (true, true) => "d",
            (true, false) => "f",
            (false, true) => "l",
            (false, false) => "r",
        };
        let address = self.value(format!("ptrtoint {t}* {} to i64", values[0]));
        let mut operands = vec![format!("i64 {address}")];
        let mut value = values[1].clone();
        if op == AtomicOp::Sub {
            value = if ty.is_float() {
                self.value(format!("fsub {t} -0.0, {value}"))
            } else {
                self.value(format!("sub {t} 0, {value}"))
            };
        }
        operands.push(format!("{t} {value}"));
        let (template, constraints) = if op == AtomicOp::CompareExchange {
            operands.push(format!("{t} {}", values[2]));
            (
                format!("atom.{scope}.{ptx_op}.{ptx_ty} $0, [$1], $2, $3;"),
                format!("={letter},l,{letter},{letter},~{{memory}}"),
            )
        } else {
            (
                format!("atom.{scope}.{ptx_op}.{ptx_ty} $0, [$1], $2;"),
                format!("={letter},l,{letter},~{{memory}}"),
            )
        };
        self.value(format!(
            "call {t} asm sideeffect \"{template}\", \"{constraints}\"({})",
            operands.join(", ")
        ))
    }
}
