//! A `ptx!` template's instructions selected into interpreter operations, with the
//! template's operands bound to the function frame's registers.
//!
//! The caller (`program/inline_ptx.rs`) gives each of the user's operand numbers its
//! registers: one for a scalar, one per element for a register array, and allocates
//! registers for the template's own `.reg` names through [`Emit`]. Instructions run in
//! order; each becomes ordinary operations ([`super::scalar`]) or one [`Op::Ptx`].

use super::template::{self, Instruction, Item, Operand};
use crate::isa::{Builtin, Op, Reg};

mod cluster;
mod hopper;
mod named_barrier;
mod scalar;
mod typed;
use crate::ptx::mma::{Mma, MmaAccumulator, MmaInputs};
use crate::ptx::{LdMatrix, PtxOp};
pub(crate) use typed::lower_typed;

/// What the lowering needs of the function being compiled.
pub(crate) trait Emit {
    /// A fresh register of the frame.
    fn register(&mut self) -> Reg;
    /// A register holding `bits`.
    fn constant(&mut self, bits: u64) -> Reg;
    /// The register holding a built-in value of the thread (`%laneid`, `%cluster_ctarank`..).
    fn builtin(&mut self, builtin: Builtin) -> Reg;
    fn emit(&mut self, op: Op);
}

/// What the simulator runs, for the message of an instruction it does not.
pub(crate) const SUPPORTED: &str = "mma.sync.aligned.m16n8k16.row.col.{f32,f16}.{bf16.bf16,f16.f16}.{f32,f16} (f16 accumulators with f16 inputs), m16n8k8.row.col.f32.tf32.tf32.f32, m16n8k32.row.col.f32.{e4m3.e4m3,e5m2.e5m2}.f32, m16n8k32.row.col[.satfinite].s32.{s8.s8,u8.u8}.s32, {ldmatrix,stmatrix}.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16, cp.async.{ca,cg}.shared.global (and commit_group, wait_group, wait_all), cvt.rn.{bf16x2,f16x2}.f32, cvt.rna.tf32.f32, cvt between {u,s,b}{16,32,64}, ex2.approx[.ftz].f32, mov, add, sub, mul.lo, fma.rn, setp, selp, membar, fence.{sc,acq_rel,proxy.async,proxy.tensormap::generic,mbarrier_init}, mbarrier.{init,arrive,arrive.expect_tx,expect_tx,try_wait.parity,test_wait.parity}.shared::cta.b64, mbarrier.arrive[.release.cluster].shared::cluster.b64 _, barrier.cluster.{arrive[.release],wait[.acquire]}[.aligned], mapa.shared::cluster.u32, {ld,st}.shared::cluster.{u32,s32,b32,f32,u64,s64,b64,f64}, setmaxnreg, wgmma.{fence,commit_group,wait_group}, wgmma.mma_async m64nNk16 (bf16, f16) and m64nNk32 (e4m3), cp.async.bulk.tensor.{1..5}d.shared::cluster.global.mbarrier::complete_tx::bytes[.multicast::cluster] and .global.shared::cta.bulk_group, cp.async.bulk.{commit_group,wait_group[.read]}, prefetch.tensormap, bar{.cta}.{sync,arrive} and barrier{.cta}.{sync,arrive}[.aligned] (named barriers 0-15)";

/// Lowers `template`, whose operand `$N` has the registers `operands[N]`.
pub(crate) fn lower(
    template: &str,
    operands: &[Vec<Reg>],
    out: &mut dyn Emit,
) -> Result<(), String> {
    let items = template::parse(template)?;
    let mut binder = Binder {
        operands,
        scopes: vec![Vec::new()],
        out,
    };
    for item in &items {
        match item {
            Item::Open => binder.scopes.push(Vec::new()),
            Item::Close => {
                if binder.scopes.len() == 1 {
                    return Err("a `}` closes no scope".into());
                }
                binder.scopes.pop();
            }
            Item::Declare { names } => {
                for name in names {
                    let reg = binder.out.register();
                    if let Some(scope) = binder.scopes.last_mut() {
                        scope.push((name.clone(), reg));
                    }
                }
            }
            Item::Instruction(instruction) => binder.instruction(instruction)?,
        }
    }
    if binder.scopes.len() != 1 {
        return Err("a `{` is never closed".into());
    }
    Ok(())
}

/// The template's names and operands as registers.
pub(crate) struct Binder<'a> {
    operands: &'a [Vec<Reg>],
    /// The `.reg` names of each open scope.
    scopes: Vec<Vec<(String, Reg)>>,
    out: &'a mut dyn Emit,
}

impl Binder<'_> {
    pub(super) fn emit(&mut self, op: Op) {
        self.out.emit(op);
    }

    pub(super) fn register(&mut self) -> Reg {
        self.out.register()
    }

    pub(super) fn constant(&mut self, bits: u64) -> Reg {
        self.out.constant(bits)
    }

    fn name(&self, name: &str) -> Result<Reg, String> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, reg)| *reg)
            .ok_or_else(|| format!("`{name}` is not a register declared in the template"))
    }

    fn user(&self, number: usize) -> Result<&[Reg], String> {
        self.operands.get(number).map(Vec::as_slice).ok_or_else(|| {
            format!(
                "`${number}` names no operand: the `ptx!` has {}",
                self.operands.len()
            )
        })
    }

    /// The registers an operand stands for: a vector's elements, a register array's, or
    /// one.
    pub(super) fn inputs(&mut self, operand: &Operand) -> Result<Vec<Reg>, String> {
        match operand {
            Operand::Vector(items) => {
                let mut regs = Vec::new();
                for item in items {
                    match item {
                        Operand::User(n) => regs.extend_from_slice(self.user(*n)?),
                        other => regs.push(self.input(other)?),
                    }
                }
                Ok(regs)
            }
            other => Ok(vec![self.input(other)?]),
        }
    }

    /// [`Self::inputs`] of a destination (no immediates; `_` is a scratch register).
    pub(super) fn outputs(&mut self, operand: &Operand) -> Result<Vec<Reg>, String> {
        match operand {
            Operand::Vector(items) => {
                let mut regs = Vec::new();
                for item in items {
                    match item {
                        Operand::User(n) => regs.extend_from_slice(self.user(*n)?),
                        other => regs.push(self.output(other)?),
                    }
                }
                Ok(regs)
            }
            other => Ok(vec![self.output(other)?]),
        }
    }

    /// One register read.
    pub(super) fn input(&mut self, operand: &Operand) -> Result<Reg, String> {
        match operand {
            Operand::User(n) => match self.user(*n)? {
                [reg] => Ok(*reg),
                regs => Err(format!(
                    "`${n}` is a register array of {} here, where one register is read (write `{{${n}}}`)",
                    regs.len()
                )),
            },
            Operand::Name(name) => self.name(name),
            Operand::Immediate(value) => Ok(self.out.constant(*value as u64)),
            Operand::Special(name) => match Builtin::special(name) {
                Some(builtin) => Ok(self.out.builtin(builtin)),
                None => Err(format!(
                    "the special register `%{name}` is not simulated (only `%laneid`, `%cluster_ctarank`, `%cluster_nctarank` and `%clusterid`, `%nclusterid`, `%cluster_ctaid`, `%cluster_nctaid` with `.x`, `.y`, `.z`; read the others with the kernel language's built-ins)"
                )),
            },
            Operand::Sink => Err("`_` is not a value".into()),
            Operand::Vector(_) => Err("a vector `{..}` where one register is read".into()),
            Operand::Address(_) => Err("an address `[..]` where a register is read".into()),
        }
    }

    /// One register written.
    pub(super) fn output(&mut self, operand: &Operand) -> Result<Reg, String> {
        match operand {
            Operand::Sink => Ok(self.out.register()),
            Operand::Immediate(_) | Operand::Special(_) => {
                Err("an instruction writes an immediate or a special register".into())
            }
            other => self.input(other),
        }
    }

    /// The register of an address operand `[a]`.
    pub(super) fn address(&mut self, operand: &Operand) -> Result<Reg, String> {
        match operand {
            Operand::Address(items) => match items.as_slice() {
                [one] => self.input(one),
                _ => Err("an address of several parts where one register is expected".into()),
            },
            _ => Err("a register where an address `[..]` is expected".into()),
        }
    }

    pub(super) fn immediate(operand: &Operand) -> Result<i64, String> {
        match operand {
            Operand::Immediate(value) => Ok(*value),
            _ => Err("an operand that must be an integer written in the template".into()),
        }
    }

    /// Exactly `N` registers of a vector operand.
    fn fixed<const N: usize>(
        &mut self,
        operand: &Operand,
        output: bool,
        what: &str,
    ) -> Result<[Reg; N], String> {
        let regs = if output {
            self.outputs(operand)?
        } else {
            self.inputs(operand)?
        };
        if regs.len() != N {
            return Err(format!("{what} takes {N} registers, not {}", regs.len()));
        }
        let mut fixed = [0; N];
        fixed.copy_from_slice(&regs);
        Ok(fixed)
    }

    fn instruction(&mut self, instruction: &Instruction) -> Result<(), String> {
        let opcode = instruction.opcode.as_str();
        let operands = &instruction.operands;
        let with = |detail: String| format!("`{opcode}`: {detail}");
        if scalar::lower(instruction, self).map_err(with)? {
            return Ok(());
        }
        match named_barrier::select(self, instruction).map_err(with)? {
            named_barrier::Selection::Op(op) => {
                self.emit(Op::Ptx(Box::new(op)));
                return Ok(());
            }
            named_barrier::Selection::SyncThreads => {
                self.emit(Op::Barrier);
                return Ok(());
            }
            named_barrier::Selection::Other => {}
        }
        if let Some(op) = cluster::select(self, instruction).map_err(with)? {
            self.emit(Op::Ptx(Box::new(op)));
            return Ok(());
        }
        match hopper::select(self, instruction).map_err(with)? {
            hopper::Selection::Op(op) => {
                self.emit(Op::Ptx(Box::new(op)));
                return Ok(());
            }
            hopper::Selection::Done => return Ok(()),
            hopper::Selection::Other => {}
        }
        let parts: Vec<&str> = opcode.split('.').collect();
        let op = match parts.as_slice() {
            ["mma", "sync", "aligned", shape, "row", "col", rest @ ..] => {
                let (accumulator, inputs) =
                    mma_form(shape, rest).ok_or_else(|| unsupported(opcode))?;
                let [d, a, b, c] = operands.as_slice() else {
                    return Err(with("takes {d}, {a}, {b}, {c}".into()));
                };
                let mut mma = Mma {
                    inputs,
                    accumulator,
                    d: [0; 4],
                    a: self.fixed(a, false, "A").map_err(with)?,
                    b: self.fixed(b, false, "B").map_err(with)?,
                    c: [0; 4],
                };
                if accumulator.registers() == 2 {
                    let d: [Reg; 2] = self.fixed(d, true, "D").map_err(with)?;
                    let c: [Reg; 2] = self.fixed(c, false, "C").map_err(with)?;
                    mma.d = [d[0], d[1], d[1], d[1]];
                    mma.c = [c[0], c[1], c[1], c[1]];
                } else {
                    mma.d = self.fixed(d, true, "D").map_err(with)?;
                    mma.c = self.fixed(c, false, "C").map_err(with)?;
                }
                PtxOp::Mma(mma)
            }
            [op @ ("ldmatrix" | "stmatrix"), "sync", "aligned", "m8n8", count, rest @ ..] => {
                let matrices = match *count {
                    "x1" => 1,
                    "x2" => 2,
                    "x4" => 4,
                    _ => return Err(unsupported(opcode)),
                };
                let (trans, rest) = match rest {
                    ["trans", rest @ ..] => (true, rest),
                    rest => (false, rest),
                };
                if !matches!(rest, ["shared", "b16"] | ["shared::cta", "b16"]) {
                    return Err(unsupported(opcode));
                }
                let load = *op == "ldmatrix";
                let (registers, address) = match (operands.as_slice(), load) {
                    ([registers, address], true) => (registers, address),
                    ([address, registers], false) => (registers, address),
                    (_, true) => return Err(with("takes {destinations}, [address]".into())),
                    (_, false) => return Err(with("takes [address], {sources}".into())),
                };
                let regs = if load {
                    self.outputs(registers)
                } else {
                    self.inputs(registers)
                }
                .map_err(with)?;
                if regs.len() != matrices as usize {
                    let verb = if load { "loads" } else { "stores" };
                    return Err(with(format!(
                        "{verb} {matrices} registers, not {}",
                        regs.len()
                    )));
                }
                let mut registers = [regs[0]; 4];
                registers[..regs.len()].copy_from_slice(&regs);
                let moved = LdMatrix {
                    matrices,
                    trans,
                    registers,
                    address: self.address(address).map_err(with)?,
                };
                if load {
                    PtxOp::LdMatrix(moved)
                } else {
                    PtxOp::StMatrix(moved)
                }
            }
            ["cp", "async", "ca" | "cg", "shared" | "shared::cta", "global"] => {
                let (to, from, size, source) = match operands.as_slice() {
                    [to, from, size] => (to, from, size, None),
                    [to, from, size, source] => (to, from, size, Some(source)),
                    _ => return Err(with("takes [shared], [global], size[, source size]".into())),
                };
                let bytes = Self::immediate(size).map_err(with)?;
                let allowed: &[i64] = if parts[2] == "cg" { &[16] } else { &[4, 8, 16] };
                if !allowed.contains(&bytes) {
                    return Err(with(format!(
                        "copies {allowed:?} bytes, not {bytes} (`.cg` copies 16 only)"
                    )));
                }
                PtxOp::CpAsync {
                    shared: self.address(to).map_err(with)?,
                    global: self.address(from).map_err(with)?,
                    bytes: bytes as u32,
                    source_bytes: source.map(|s| self.input(s)).transpose().map_err(with)?,
                }
            }
            ["cp", "async", "commit_group"] if operands.is_empty() => PtxOp::CpAsyncCommit,
            ["cp", "async", "wait_all"] if operands.is_empty() => PtxOp::CpAsyncWait { keep: None },
            ["cp", "async", "wait_group"] => {
                let [n] = operands.as_slice() else {
                    return Err(with("takes the number of groups left in flight".into()));
                };
                let keep = Self::immediate(n).map_err(with)?;
                let keep = u32::try_from(keep).map_err(|_| with(format!("{keep} groups")))?;
                PtxOp::CpAsyncWait { keep: Some(keep) }
            }
            _ => return Err(unsupported(opcode)),
        };
        self.emit(Op::Ptx(Box::new(op)));
        Ok(())
    }
}

/// The accumulator and input types of `mma.sync.aligned.<shape>.row.col<rest>`, if it is
/// a form the simulator runs: `[.satfinite].<d>.<a>.<b>.<c>`, with A and B of one type,
/// C of D's, and the shape the one the PTX ISA gives these inputs.
fn mma_form(shape: &str, rest: &[&str]) -> Option<(MmaAccumulator, MmaInputs)> {
    let (saturate, types) = match rest {
        ["satfinite", types @ ..] => (true, types),
        types => (false, types),
    };
    let [d, a, b, c] = types else {
        return None;
    };
    let inputs = MmaInputs::from_suffix(a)?;
    if a != b || c != d || shape != format!("m16n8k{}", inputs.k()) {
        return None;
    }
    let accumulator = match (*d, inputs) {
        ("s32", i) if i.is_integer() => MmaAccumulator::S32 { saturate },
        ("f32", i) if !i.is_integer() && !saturate => MmaAccumulator::F32,
        ("f16", MmaInputs::F16) if !saturate => MmaAccumulator::F16,
        _ => return None,
    };
    Some((accumulator, inputs))
}

fn unsupported(opcode: &str) -> String {
    format!("the PTX instruction `{opcode}` (the simulator runs {SUPPORTED})")
}
