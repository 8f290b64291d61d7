//! Random statements: stores, `if`s, bounded loops with `break`/`continue`, atomics, and the
//! warp and block exchanges every thread of the block runs.

use cudajit_core::ast::{Axis, BinaryOp};
use cudajit_core::intrinsics::{AtomicOp, AtomicScope, Intrinsic, ShuffleMode, VoteOp};
use cudajit_core::ir::{
    Block, BuiltinValue, Expression, Handle, LocalVariable, LoopId, SharedVariable, Statement,
};
use cudajit_core::{Scalar, Span};

use super::*;

impl Generator<'_> {
    pub(crate) fn store_local(
        &mut self,
        block: &mut Block,
        local: Handle<LocalVariable>,
        name: &str,
        (value, text): Gen,
    ) {
        block.push(Statement::LocalStore { local, value }, Span::default());
        self.line(format!("{name} = {text};"));
    }

    pub(crate) fn statements(&mut self, block: &mut Block, count: u64, depth: u32) {
        for _ in 0..count {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            self.statement(block, depth);
        }
    }

    pub(crate) fn statement(&mut self, block: &mut Block, depth: u32) {
        let choice = self.rng.below(if self.uniform { 14 } else { 10 });
        match choice {
            0..=3 => {
                let (local, scalar, name) = self.rng.pick(&self.locals).clone();
                let value = self.expr(scalar, 3);
                self.store_local(block, local, &name, value);
            }
            4 if depth > 0 => self.if_statement(block, depth),
            5 if depth > 0 => self.loop_statement(block, depth),
            6 if !self.loops.is_empty() => {
                let target = *self.rng.pick(&self.loops);
                let is_break = self.rng.chance(50);
                let (condition, text) = self.expr(Scalar::Bool, 2);
                let mut accept = Block::new();
                accept.push(
                    if is_break {
                        Statement::Break { target }
                    } else {
                        Statement::Continue { target }
                    },
                    Span::default(),
                );
                block.push(
                    Statement::If {
                        condition,
                        accept,
                        reject: Block::new(),
                    },
                    Span::default(),
                );
                self.line(format!(
                    "if {text} {{ {} 'l{}; }}",
                    if is_break { "break" } else { "continue" },
                    target.0
                ));
            }
            7 if !self.arrays.is_empty() => {
                let (local, scalar, name) = self.rng.pick(&self.arrays).clone();
                let (pointer, target) = self.array_element(local, &name, 2);
                let (value, text) = self.expr(scalar, 3);
                block.push(Statement::Store { pointer, value }, Span::default());
                self.line(format!("{target} = {text};"));
            }
            8 if !self.helpers.is_empty() => {
                let (function, name, args, result) = self.rng.pick(self.helpers).clone();
                let targets: Vec<_> = self
                    .locals
                    .iter()
                    .filter(|l| l.1 == result)
                    .cloned()
                    .collect();
                if let Some((local, _, local_name)) = targets.first().cloned() {
                    let a = self.expr(args[0], 2);
                    let b = self.expr(args[1], 2);
                    block.push(
                        Statement::Call {
                            function,
                            arguments: vec![a.0, b.0],
                            result: Some(local),
                        },
                        Span::default(),
                    );
                    self.line(format!("{local_name} = {name}({}, {});", a.1, b.1));
                }
            }
            9 if self.is_kernel => self.atomic(block),
            10 => self.shuffle(block),
            11 => self.vote(block),
            12 | 13 => self.shared_exchange(block),
            _ => {
                let (local, scalar, name) = self.rng.pick(&self.locals).clone();
                let value = self.expr(scalar, 2);
                self.store_local(block, local, &name, value);
            }
        }
    }

    pub(crate) fn if_statement(&mut self, block: &mut Block, depth: u32) {
        let (condition, text) = self.expr(Scalar::Bool, 3);
        let uniform = std::mem::replace(&mut self.uniform, false);
        self.line(format!("if {text} {{"));
        self.indent += 1;
        let mut accept = Block::new();
        let n = 1 + self.rng.below(3);
        self.statements(&mut accept, n, depth - 1);
        self.indent -= 1;
        let mut reject = Block::new();
        if self.rng.chance(50) {
            self.line("} else {");
            self.indent += 1;
            let n = 1 + self.rng.below(3);
            self.statements(&mut reject, n, depth - 1);
            self.indent -= 1;
        }
        self.line("}");
        self.uniform = uniform;
        block.push(
            Statement::If {
                condition,
                accept,
                reject,
            },
            Span::default(),
        );
    }

    /// `for c in 0..bound { .. }` as the lowering builds it: a counter, a test at the top,
    /// the increment in the continuing block.
    pub(crate) fn loop_statement(&mut self, block: &mut Block, depth: u32) {
        let (counter, name) = self.local(Scalar::U32, "c");
        let zero = self.int_literal(0, Scalar::U32);
        block.push(
            Statement::LocalStore {
                local: counter,
                value: zero.0,
            },
            Span::default(),
        );
        let bound = if self.rng.chance(50) {
            let trips = self.rng.below(5);
            self.int_literal(trips, Scalar::U32)
        } else {
            let e = self.expr(Scalar::U32, 2);
            let three = self.int_literal(3, Scalar::U32);
            self.binary(BinaryOp::BitAnd, e, three)
        };
        let id = LoopId(self.next_loop);
        self.next_loop += 1;
        self.line(format!("'l{}: for {name} in 0..{} {{", id.0, bound.1));
        self.indent += 1;
        let uniform = std::mem::replace(&mut self.uniform, false);
        let mut body = Block::new();
        let current = self.add(Expression::LocalLoad(counter));
        let done = self.add(Expression::Binary {
            op: BinaryOp::Ge,
            left: current,
            right: bound.0,
        });
        let mut exit = Block::new();
        exit.push(Statement::Break { target: id }, Span::default());
        body.push(
            Statement::If {
                condition: done,
                accept: exit,
                reject: Block::new(),
            },
            Span::default(),
        );
        self.loops.push(id);
        let n = 1 + self.rng.below(3);
        self.statements(&mut body, n, depth - 1);
        self.loops.pop();
        self.uniform = uniform;
        self.indent -= 1;
        self.line("}");
        let mut continuing = Block::new();
        let current = self.add(Expression::LocalLoad(counter));
        let one = self.int_literal(1, Scalar::U32);
        let next = self.add(Expression::Binary {
            op: BinaryOp::Add,
            left: current,
            right: one.0,
        });
        continuing.push(
            Statement::LocalStore {
                local: counter,
                value: next,
            },
            Span::default(),
        );
        block.push(
            Statement::Loop {
                id,
                body,
                continuing,
            },
            Span::default(),
        );
    }

    /// A commutative atomic on a counter whose old value is unused; each operation has a
    /// counter of its own, so the final values do not depend on the order of the threads.
    pub(crate) fn atomic(&mut self, block: &mut Block) {
        let (argument, name, scalar) = if self.rng.chance(50) {
            (20u32, "counters_u32", Scalar::U32)
        } else {
            (21, "counters_u64", Scalar::U64)
        };
        const OPS: [AtomicOp; 7] = [
            AtomicOp::Add,
            AtomicOp::Sub,
            AtomicOp::Min,
            AtomicOp::Max,
            AtomicOp::And,
            AtomicOp::Or,
            AtomicOp::Xor,
        ];
        let which = self.rng.below(OPS.len() as u64);
        let op = OPS[which as usize];
        let index = self.int_literal(which, Scalar::Usize);
        let slice = self.add(Expression::FunctionArgument(argument));
        let pointer = self.add(Expression::ElementPointer {
            base: slice,
            index: index.0,
        });
        let scope = *self
            .rng
            .pick(&[AtomicScope::Device, AtomicScope::Block, AtomicScope::System]);
        let (value, text) = self.expr(scalar, 2);
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::Atomic(op, scope),
                arguments: vec![pointer, value],
                result: None,
            },
            Span::default(),
        );
        let suffix = match scope {
            AtomicScope::Device => "",
            AtomicScope::Block => "_block",
            AtomicScope::System => "_system",
        };
        self.line(format!(
            "atomic_{}{suffix}(&mut {name}[{which}], {text});",
            op.name()
        ));
    }

    pub(crate) fn full_mask(&mut self) -> Gen {
        self.int_literal(u64::from(u32::MAX), Scalar::U32)
    }

    /// `x = shfl_*_sync(FULL_WARP, x, lane)` on a local: every lane of the warp runs it.
    pub(crate) fn shuffle(&mut self, block: &mut Block) {
        if !self.uniform {
            return;
        }
        let (local, scalar, name) = self.rng.pick(&self.locals).clone();
        let mode = *self.rng.pick(&[
            ShuffleMode::Idx,
            ShuffleMode::Up,
            ShuffleMode::Down,
            ShuffleMode::Xor,
        ]);
        let mask = self.full_mask();
        let value = self.add(Expression::LocalLoad(local));
        let lane = if self.rng.chance(70) {
            let lane = self.rng.below(40);
            self.int_literal(lane, Scalar::U32)
        } else {
            self.expr(Scalar::U32, 2)
        };
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::Shuffle(mode),
                arguments: vec![mask.0, value, lane.0],
                result: Some(local),
            },
            Span::default(),
        );
        let mode = match mode {
            ShuffleMode::Idx => "idx",
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Xor => "xor",
        };
        let _ = scalar;
        self.line(format!(
            "{name} = shfl_{mode}_sync(FULL_WARP, {name}, {});",
            lane.1
        ));
    }

    pub(crate) fn vote(&mut self, block: &mut Block) {
        if !self.uniform {
            return;
        }
        let op = *self.rng.pick(&[VoteOp::Ballot, VoteOp::All, VoteOp::Any]);
        let result = if op == VoteOp::Ballot {
            Scalar::U32
        } else {
            Scalar::Bool
        };
        let targets: Vec<_> = self
            .locals
            .iter()
            .filter(|l| l.1 == result)
            .cloned()
            .collect();
        let Some((local, _, name)) = targets.first().cloned() else {
            return;
        };
        let mask = self.full_mask();
        let (predicate, text) = self.expr(Scalar::Bool, 2);
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::Vote(op),
                arguments: vec![mask.0, predicate],
                result: Some(local),
            },
            Span::default(),
        );
        let op = match op {
            VoteOp::Ballot => "ballot_sync",
            VoteOp::All => "all_sync",
            VoteOp::Any => "any_sync",
        };
        self.line(format!("{name} = {op}(FULL_WARP, {text});"));
    }

    /// Every thread writes its slot of a shared array, the block synchronises, each thread
    /// reads another thread's slot, and the block synchronises again before the array is
    /// written anew.
    pub(crate) fn shared_exchange(&mut self, block: &mut Block) {
        if !self.uniform {
            return;
        }
        let (local, scalar, name) = self.rng.pick(&self.locals).clone();
        let array = format!("shared{}", self.module.shared.len());
        let elem = self.scalar_ty(scalar);
        let shared = self.module.shared.append(SharedVariable {
            name: array.clone(),
            elem,
            len: Some(self.block),
        });
        let slice = self.add(Expression::SharedSlice(shared));
        let t = self.builtin(BuiltinValue::ThreadIdx(Axis::X), "thread_idx().x");
        let (mine, _) = self.cast(t, Scalar::U32, Scalar::Usize);
        let pointer = self.add(Expression::ElementPointer {
            base: slice,
            index: mine,
        });
        let (value, text) = self.expr(scalar, 2);
        block.push(Statement::Store { pointer, value }, Span::default());
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::SyncThreads,
                arguments: vec![],
                result: None,
            },
            Span::default(),
        );
        let offset = self.expr(Scalar::U32, 2);
        let t = self.builtin(BuiltinValue::ThreadIdx(Axis::X), "thread_idx().x");
        let sum = self.binary(BinaryOp::Add, t, offset);
        let d = self.builtin(BuiltinValue::BlockDim(Axis::X), "block_dim().x");
        let (other, other_text) = self.binary(BinaryOp::Rem, sum, d);
        let other = self.cast((other, other_text.clone()), Scalar::U32, Scalar::Usize);
        let slice = self.add(Expression::SharedSlice(shared));
        let pointer = self.add(Expression::ElementPointer {
            base: slice,
            index: other.0,
        });
        let loaded = self.add(Expression::Load { pointer });
        block.push(
            Statement::LocalStore {
                local,
                value: loaded,
            },
            Span::default(),
        );
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::SyncThreads,
                arguments: vec![],
                result: None,
            },
            Span::default(),
        );
        self.line(format!(
            "let {array} = shared_array::<{scalar}>({});",
            self.block
        ));
        self.line(format!("{array}[thread_idx().x as usize] = {text};"));
        self.line("sync_threads();");
        self.line(format!("{name} = {array}[{other_text} as usize];"));
        self.line("sync_threads();");
    }
}
