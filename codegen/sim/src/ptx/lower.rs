//! A `ptx!` template's instructions selected into interpreter operations, with the
//! template's operands bound to the function frame's registers.
//!
//! The caller (`program/inline_ptx.rs`) gives each of the user's operand numbers its
//! registers: one for a scalar, one per element for a register array, and allocates
//! registers for the template's own `.reg` names through [`Emit`]. Instructions run in
//! order; each becomes ordinary operations ([`super::scalar`]) or one [`Op::Ptx`].

use super::super::program::{Op, Reg};
use super::template::{self, Instruction, Item, Operand};

mod hopper;
use super::{LdMatrix, Mma, MmaInputs, PtxOp};

/// What the lowering needs of the function being compiled.
pub(crate) trait Emit {
    /// A fresh register of the frame.
    fn register(&mut self) -> Reg;
    /// A register holding `bits`.
    fn constant(&mut self, bits: u64) -> Reg;
    /// The register holding the thread's lane (`%laneid`).
    fn lane_id(&mut self) -> Reg;
    fn emit(&mut self, op: Op);
}

/// What the simulator runs, for the message of an instruction it does not.
pub(crate) const SUPPORTED: &str = "mma.sync.aligned.m16n8k16.row.col.f32.{bf16.bf16,f16.f16}.f32, ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16, cp.async.{ca,cg}.shared.global (and commit_group, wait_group, wait_all), cvt.rn.{bf16x2,f16x2}.f32, ex2.approx[.ftz].f32, mov, add, sub, mul.lo, fma.rn, setp, selp, membar, fence.{sc,acq_rel,proxy.async,proxy.tensormap::generic,mbarrier_init}, mbarrier.{init,arrive,arrive.expect_tx,expect_tx,try_wait.parity,test_wait.parity}.shared::cta.b64, setmaxnreg, wgmma.{fence,commit_group,wait_group}, wgmma.mma_async m64nNk16 (bf16, f16) and m64nNk32 (e4m3), cp.async.bulk.tensor.{1..5}d.shared::cluster.global.mbarrier::complete_tx::bytes and .global.shared::cta.bulk_group, cp.async.bulk.{commit_group,wait_group[.read]}, prefetch.tensormap";

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
            Operand::Special(name) if name == "laneid" => Ok(self.out.lane_id()),
            // The simulator refuses cluster launches, so every block is a cluster of one
            // (as a launch without clusters is on the GPU).
            Operand::Special(name) if name == "cluster_ctarank" => Ok(self.out.constant(0)),
            Operand::Special(name) if name == "cluster_nctarank" => Ok(self.out.constant(1)),
            Operand::Special(name) => Err(format!(
                "the special register `%{name}` is not simulated (only `%laneid`, `%cluster_ctarank` and `%cluster_nctarank`; read the others with the kernel language's built-ins)"
            )),
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
        if super::scalar::lower(instruction, self).map_err(with)? {
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
            ["mma", "sync", "aligned", "m16n8k16", "row", "col", "f32", x, y, "f32"]
                if x == y && (*x == "bf16" || *x == "f16") =>
            {
                let [d, a, b, c] = operands.as_slice() else {
                    return Err(with("takes {d}, {a}, {b}, {c}".into()));
                };
                PtxOp::Mma(Mma {
                    inputs: if *x == "bf16" {
                        MmaInputs::Bf16
                    } else {
                        MmaInputs::F16
                    },
                    d: self.fixed(d, true, "D").map_err(with)?,
                    a: self.fixed(a, false, "A").map_err(with)?,
                    b: self.fixed(b, false, "B").map_err(with)?,
                    c: self.fixed(c, false, "C").map_err(with)?,
                })
            }
            ["ldmatrix", "sync", "aligned", "m8n8", count, rest @ ..] => {
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
                let [dst, address] = operands.as_slice() else {
                    return Err(with("takes {destinations}, [address]".into()));
                };
                let regs = self.outputs(dst).map_err(with)?;
                if regs.len() != matrices as usize {
                    return Err(with(format!(
                        "loads {matrices} registers, not {}",
                        regs.len()
                    )));
                }
                let mut dst = [regs[0]; 4];
                dst[..regs.len()].copy_from_slice(&regs);
                PtxOp::LdMatrix(LdMatrix {
                    matrices,
                    trans,
                    dst,
                    address: self.address(address).map_err(with)?,
                })
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

fn unsupported(opcode: &str) -> String {
    format!("the PTX instruction `{opcode}` (the simulator runs {SUPPORTED})")
}
