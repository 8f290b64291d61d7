//! Writing atomics: read-modify-write operations at device, block or system scope, and
//! ordered atomics (loads, stores and read-modify-writes with a memory ordering).

use cudajit_core::intrinsics::{AtomicAccess, AtomicOp, AtomicScope, MemoryOrder, MemoryOrdering};
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
        self.ptx_atomic(op, ptx_scope(scope), ty, values)
    }

    /// An ordered atomic as CUDA's `cuda::atomic_ref` writes it: `ld.acquire.gpu`,
    /// `st.release.gpu`, `atom.acq_rel.gpu.add`...; `SeqCst` is `fence.sc` then an acquiring
    /// access (a relaxed one for stores). Returns the loaded or previous value, if any.
    pub(super) fn ordered_atomic(
        &mut self,
        access: AtomicAccess,
        ordering: MemoryOrdering,
        ty: Scalar,
        values: &[String],
    ) -> Option<String> {
        let scope = ptx_scope(ordering.scope);
        if ordering.order == MemoryOrder::SeqCst {
            self.line(format!(
                "call void asm sideeffect \"fence.sc.{scope};\", \"~{{memory}}\"()"
            ));
        }
        let semantics = match (ordering.order, access) {
            (MemoryOrder::Relaxed, _) | (MemoryOrder::SeqCst, AtomicAccess::Store) => "relaxed",
            (MemoryOrder::Acquire | MemoryOrder::SeqCst, _) => "acquire",
            (MemoryOrder::Release, _) => "release",
            (MemoryOrder::AcqRel, _) => "acq_rel",
        };
        let qualifiers = format!("{semantics}.{scope}");
        let t = types::scalar(ty);
        let (letter, ptx_ty) = register_class(ty);
        let ptx_ty = if ty.is_float() {
            ptx_ty
        } else {
            if ty.bits() == 64 {
                "b64"
            } else {
                "b32"
            }
        };
        let address = self.value(format!("ptrtoint {t}* {} to i64", values[0]));
        let result = match access {
            AtomicAccess::Load => Some(self.value(format!(
                "call {t} asm sideeffect \"ld.{qualifiers}.{ptx_ty} $0, [$1];\", \"={letter},l,~{{memory}}\"(i64 {address})"
            ))),
            AtomicAccess::Store => {
                self.line(format!(
                    "call void asm sideeffect \"st.{qualifiers}.{ptx_ty} [$0], $1;\", \"l,{letter},~{{memory}}\"(i64 {address}, {t} {})",
                    values[1]
                ));
                None
            }
            AtomicAccess::ReadModifyWrite(op) => Some(self.ptx_atomic(op, &qualifiers, ty, values)),
        };
        // libNVVM refuses LLVM's compiler-only fence (`syncscope("singlethread")`), so the
        // asm's memory clobber is the optimiser's barrier: it covers every slice whose
        // address escaped, not a `noalias` slice the kernel never hands out
        // (docs/language.md says to read published data with atomics).
        result
    }

    /// `atom.<qualifiers>.<op>.<type>` in inline PTX (qualifiers: a scope, or an ordering
    /// and a scope); returns the previous value.
    fn ptx_atomic(
        &mut self,
        op: AtomicOp,
        qualifiers: &str,
        ty: Scalar,
        values: &[String],
    ) -> String {
        let scope = qualifiers;
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
        let (letter, _) = register_class(ty);
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

/// PTX's name of a scope.
fn ptx_scope(scope: AtomicScope) -> &'static str {
    match scope {
        AtomicScope::Block => "cta",
        AtomicScope::Device => "gpu",
        AtomicScope::System => "sys",
    }
}

/// The inline-asm register class of a 32- or 64-bit scalar, and its PTX type for a move.
fn register_class(ty: Scalar) -> (&'static str, &'static str) {
    match (ty.is_float(), ty.bits() == 64) {
        (true, true) => ("d", "f64"),
        (true, false) => ("f", "f32"),
        (false, true) => ("l", "u64"),
        (false, false) => ("r", "u32"),
    }
}
