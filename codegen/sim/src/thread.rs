//! One thread's interpreter: runs a thread's compiled code until it exits, fails, or
//! reaches an operation that needs other threads (a barrier, a warp shuffle or vote,
//! `activemask`), and leaves its state ready to be resumed there.

use super::externs::{ExternBinding, ExternCall, MAX_EXTERN_ARGS};
use super::format;
use super::isa::{Op, BUILTINS};
use super::memory::{pointer, MemoryView, LOCAL_REGION, OFFSET_MASK, SHARED_REGION};
use super::program::Program;
use super::timer;
use super::watchdog::Stopwatch;
use super::ExternOutcome;

// The thread's state types live below the interpreter and the PTX instructions it runs,
// which both use them.
pub(crate) use super::thread_state::*;

/// What a thread needs besides its own state.
pub(crate) struct ThreadContext<'a> {
    pub program: &'a Program,
    pub builtins: &'a [u64; BUILTINS],
    pub dynamic_shared_bytes: u64,
    pub output: &'a super::PrintTarget,
    /// The host of the program's extern functions, if the launch has one.
    pub externs: Option<&'a ExternBinding<'a>>,
    /// The watchdog's limit (`None`: none).
    pub watchdog: Option<std::time::Duration>,
}

/// Starts `state` at the beginning of the kernel: the entry frame with `image` (the entry
/// function's registers with the launch's arguments in place) and the thread's built-ins
/// (`builtins`; the context's are the block's).
pub(crate) fn start(
    context: &ThreadContext<'_>,
    builtins: &[u64; BUILTINS],
    state: &mut ThreadState,
    regs: &mut [u64],
    local: &mut [u8],
    image: &[u64],
) {
    let program = context.program;
    let entry = &program.functions[program.entry as usize];
    regs[..image.len()].copy_from_slice(image);
    for &(reg, builtin) in &entry.builtins {
        regs[reg as usize] = builtins[builtin];
    }
    if entry.local_bytes > 0 {
        local[..entry.local_bytes as usize].fill(0);
    }
    let frame = Frame {
        function: program.entry,
        pc: 0,
        base: 0,
        local_base: 0,
        result: None,
    };
    // The frame of the thread's last run is reused: `Vec::push` is costly in a debug build.
    match state.frames.as_mut_slice() {
        [only] => *only = frame,
        _ => {
            state.frames.clear();
            state.frames.push(frame);
        }
    }
    state.status = Status::Ready;
}

/// Runs a ready thread until it exits, waits or fails; on `Ok`, its status says which.
pub(crate) fn run(
    context: &ThreadContext<'_>,
    state: &mut ThreadState,
    regs: &mut [u64],
    memory: &mut MemoryView<'_, '_>,
) -> Result<(), Fault> {
    let program = context.program;
    let Some(&frame) = state.frames.last() else {
        state.status = Status::Exited;
        return Ok(());
    };
    let mut function_index = frame.function;
    let mut function = &program.functions[function_index as usize];
    let mut code: &[Op] = &function.code;
    let mut pc = frame.pc as usize;
    let mut base = frame.base as usize;
    let mut local_base = frame.local_base as usize;

    macro_rules! reg {
        ($r:expr) => {
            regs[base + $r as usize]
        };
    }
    macro_rules! site {
        () => {
            Site {
                function: function_index,
                pc: (pc - 1) as u32,
            }
        };
    }
    macro_rules! fault {
        ($kind:expr) => {
            return Err(Fault {
                kind: $kind,
                site: site!(),
            })
        };
    }
    macro_rules! suspend {
        ($status:expr) => {{
            if let Some(top) = state.frames.last_mut() {
                top.pc = pc as u32;
            }
            state.status = $status;
            return Ok(());
        }};
    }

    // Every loop iteration jumps backwards once: the watchdog counts those.
    let mut stopwatch = Stopwatch::new(context.watchdog);
    macro_rules! back_edge {
        ($to:expr) => {
            if ($to as usize) < pc {
                if let Some(elapsed) = stopwatch.back_edge() {
                    fault!(FaultKind::Hang { elapsed });
                }
            }
        };
    }

    loop {
        let op = &code[pc];
        pc += 1;
        match op {
            Op::Binary { f, dst, a, b } => {
                let value = f(reg!(*a), reg!(*b));
                reg!(*dst) = value;
            }
            Op::Unary { f, dst, a } => {
                let value = f(reg!(*a));
                reg!(*dst) = value;
            }
            Op::Ternary { f, dst, a, b, c } => {
                let value = f(reg!(*a), reg!(*b), reg!(*c));
                reg!(*dst) = value;
            }
            Op::Copy { dst, src } => {
                let value = reg!(*src);
                reg!(*dst) = value;
            }
            Op::Jump { to } => {
                back_edge!(*to);
                pc = *to as usize;
            }
            Op::JumpIf { cond, to } => {
                if reg!(*cond) != 0 {
                    back_edge!(*to);
                    pc = *to as usize;
                }
            }
            Op::JumpIfNot { cond, to } => {
                if reg!(*cond) == 0 {
                    back_edge!(*to);
                    pc = *to as usize;
                }
            }
            Op::SliceElement {
                dst,
                base: slice,
                index,
                size,
                extent,
            } => {
                let start = reg!(*slice);
                let len = reg!(*slice + 1);
                let i = reg!(*index);
                let extent = u64::from(*extent);
                if i >= len || len - i < extent {
                    fault!(FaultKind::OutOfBounds {
                        index: i.saturating_add(extent - 1),
                        len
                    });
                }
                reg!(*dst) = start.wrapping_add(i * u64::from(*size));
            }
            Op::SubSlice {
                dst,
                base: slice,
                start,
                end,
                size,
            } => {
                let address = reg!(*slice);
                let len = reg!(*slice + 1);
                let start = reg!(*start);
                let end = end.map_or(len, |end| reg!(end));
                if start > end || end > len {
                    fault!(FaultKind::RangeOutOfBounds { start, end, len });
                }
                reg!(*dst) = address.wrapping_add(start * u64::from(*size));
                reg!(*dst + 1) = end - start;
            }
            Op::PointerElement {
                dst,
                base: start,
                index,
                size,
            } => {
                let start = reg!(*start);
                let offset = (start & OFFSET_MASK)
                    .wrapping_add(reg!(*index).wrapping_mul(u64::from(*size)))
                    & OFFSET_MASK;
                reg!(*dst) = (start & !OFFSET_MASK) | offset;
            }
            Op::MemberElement {
                dst,
                base: start,
                index,
                size,
                len,
            } => {
                let i = reg!(*index);
                if i >= u64::from(*len) {
                    fault!(FaultKind::OutOfBounds {
                        index: i,
                        len: u64::from(*len)
                    });
                }
                let start = reg!(*start);
                let offset = (start & OFFSET_MASK).wrapping_add(i * u64::from(*size)) & OFFSET_MASK;
                reg!(*dst) = (start & !OFFSET_MASK) | offset;
            }
            Op::ArrayElement {
                dst,
                offset,
                len,
                index,
                size,
            } => {
                let i = reg!(*index);
                if i >= u64::from(*len) {
                    fault!(FaultKind::OutOfBounds {
                        index: i,
                        len: u64::from(*len)
                    });
                }
                let at = local_base as u64 + u64::from(*offset) + i * u64::from(*size);
                reg!(*dst) = pointer(LOCAL_REGION, at);
            }
            Op::Load {
                dst,
                pointer,
                size,
                mask,
            } => {
                let site = site!().pack();
                match memory.load(reg!(*pointer), *size, site) {
                    Ok(value) => reg!(*dst) = value & mask,
                    Err(fault) => fault!(FaultKind::Access(fault)),
                }
            }
            Op::Store { pointer, src, size } => {
                let site = site!().pack();
                if let Err(fault) = memory.store(reg!(*pointer), *size, reg!(*src), site) {
                    fault!(FaultKind::Access(fault));
                }
            }
            Op::CopyBytes { dst, src, size } => {
                let site = site!().pack();
                let (to, from) = (reg!(*dst), reg!(*src));
                // The widest accesses both addresses and the size allow.
                let chunk = [8u32, 4, 2, 1]
                    .into_iter()
                    .find(|&c| {
                        let c64 = u64::from(c);
                        size % c == 0 && to % c64 == 0 && from % c64 == 0
                    })
                    .unwrap_or(1);
                for at in (0..*size).step_by(chunk as usize) {
                    let at = u64::from(at);
                    let copied = memory
                        .load(from + at, chunk, site)
                        .and_then(|value| memory.store(to + at, chunk, value, site));
                    if let Err(fault) = copied {
                        fault!(FaultKind::Access(fault));
                    }
                }
            }
            Op::DynamicShared { dst, offset, size } => {
                reg!(*dst) = pointer(SHARED_REGION, u64::from(*offset));
                reg!(*dst + 1) = context.dynamic_shared_bytes / u64::from(*size);
            }
            Op::Call {
                function: callee,
                args,
                result,
            } => {
                if let Some(top) = state.frames.last_mut() {
                    top.pc = pc as u32;
                }
                let target = &program.functions[*callee as usize];
                let new_base = base + function.registers as usize;
                let new_local = local_base + function.local_bytes as usize;
                regs[new_base..new_base + target.registers as usize].copy_from_slice(&target.init);
                for (i, &arg) in args.iter().enumerate() {
                    regs[new_base + i] = regs[base + arg as usize];
                }
                for &(reg, builtin) in &target.builtins {
                    regs[new_base + reg as usize] = context.builtins[builtin];
                }
                memory.local[new_local..new_local + target.local_bytes as usize].fill(0);
                state.frames.push(Frame {
                    function: *callee,
                    pc: 0,
                    base: new_base as u32,
                    local_base: new_local as u32,
                    result: *result,
                });
                function_index = *callee;
                function = target;
                code = &function.code;
                pc = 0;
                base = new_base;
                local_base = new_local;
            }
            Op::Return { value } => {
                if state.frames.len() == 1 {
                    // The kernel returns. Its frame stays, for the thread's next start to
                    // reuse (a `Vec` push and pop per thread cost a debug build dearly).
                    state.status = Status::Exited;
                    return Ok(());
                }
                let value = value.map(|r| reg!(r));
                let finished = state.frames.pop();
                let Some(&caller) = state.frames.last() else {
                    state.status = Status::Exited;
                    return Ok(());
                };
                function_index = caller.function;
                function = &program.functions[function_index as usize];
                code = &function.code;
                pc = caller.pc as usize;
                base = caller.base as usize;
                local_base = caller.local_base as usize;
                if let (Some(dst), Some(value)) = (finished.and_then(|f| f.result), value) {
                    reg!(dst) = value;
                }
            }
            Op::VectorLoad {
                pointer,
                results,
                size,
            } => {
                let start = reg!(*pointer);
                let total = u64::from(*size) * results.len() as u64;
                if !(start & OFFSET_MASK).is_multiple_of(total) {
                    fault!(FaultKind::Misaligned {
                        offset: start & OFFSET_MASK,
                        align: total
                    });
                }
                let site = site!().pack();
                for (k, &dst) in results.iter().enumerate() {
                    let at = start + k as u64 * u64::from(*size);
                    match memory.load(at, *size, site) {
                        Ok(value) => reg!(dst) = value,
                        Err(fault) => fault!(FaultKind::Access(fault)),
                    }
                }
            }
            Op::VectorStore {
                pointer,
                values,
                size,
            } => {
                let start = reg!(*pointer);
                let total = u64::from(*size) * values.len() as u64;
                if !(start & OFFSET_MASK).is_multiple_of(total) {
                    fault!(FaultKind::Misaligned {
                        offset: start & OFFSET_MASK,
                        align: total
                    });
                }
                let site = site!().pack();
                for (k, &src) in values.iter().enumerate() {
                    let at = start + k as u64 * u64::from(*size);
                    if let Err(fault) = memory.store(at, *size, reg!(src), site) {
                        fault!(FaultKind::Access(fault));
                    }
                }
            }
            Op::Print { format, args } => {
                let format = &program.formats[*format as usize];
                let values: Vec<u64> = args.iter().map(|&r| reg!(r)).collect();
                context
                    .output
                    .print(&format::format(&format.pieces, &format.types, &values));
            }
            Op::Trap { message } => fault!(FaultKind::Assertion { message: *message }),
            Op::Atomic {
                op,
                kind,
                dst,
                pointer,
                a,
                b,
            } => match memory.atomic(reg!(*pointer), *kind, *op, reg!(*a), reg!(*b)) {
                Ok(old) => reg!(*dst) = old,
                Err(fault) => fault!(FaultKind::Access(fault)),
            },
            Op::Barrier => suspend!(Status::Barrier { site: site!() }),
            Op::GridBarrier => suspend!(Status::Grid { site: site!() }),
            Op::Fence => memory.fence(),
            Op::AtomicLoad {
                dst,
                pointer,
                size,
                mask,
            } => match memory.atomic_load(reg!(*pointer), *size) {
                Ok(value) => reg!(*dst) = value & mask,
                Err(fault) => fault!(FaultKind::Access(fault)),
            },
            Op::AtomicStore { pointer, src, size } => {
                if let Err(fault) = memory.atomic_store(reg!(*pointer), *size, reg!(*src)) {
                    fault!(FaultKind::Access(fault));
                }
            }
            Op::Timer { dst } => reg!(*dst) = timer::now_ns(),
            Op::NanoSleep { ns } => timer::sleep(reg!(*ns) & u64::from(u32::MAX)),
            Op::Shuffle {
                mode,
                kind,
                dst,
                mask,
                value,
                lane,
            } => suspend!(Status::Warp(WarpWait {
                op: WarpOp::Shuffle(*mode, *kind),
                mask: reg!(*mask) as u32,
                value: reg!(*value),
                lane: reg!(*lane) as u32,
                dst: base + *dst as usize,
                site: site!(),
            })),
            Op::Vote {
                op,
                dst,
                mask,
                predicate,
            } => suspend!(Status::Warp(WarpWait {
                op: WarpOp::Vote(*op),
                mask: reg!(*mask) as u32,
                value: reg!(*predicate),
                lane: 0,
                dst: base + *dst as usize,
                site: site!(),
            })),
            Op::ActiveMask { dst } => suspend!(Status::Warp(WarpWait {
                op: WarpOp::ActiveMask(site!()),
                mask: 0,
                value: 0,
                lane: 0,
                dst: base + *dst as usize,
                site: site!(),
            })),
            Op::CallExtern {
                function: callee,
                args,
                result,
            } => {
                let mut values = [0u64; MAX_EXTERN_ARGS];
                for (k, &arg) in args.iter().enumerate() {
                    values[k] = reg!(arg);
                }
                let info = &program.externs[*callee as usize];
                let Some(binding) = context.externs else {
                    fault!(FaultKind::Extern {
                        detail: format!(
                            "`{}` (`{}`) has no host implementation: the launch has no `SimOptions::externs`",
                            info.name, info.symbol
                        )
                    })
                };
                let Some(id) = binding.ids.get(*callee as usize).copied().flatten() else {
                    fault!(FaultKind::Extern {
                        detail: format!(
                            "`{}` (`{}`) has no host implementation in this launch's `SimOptions::externs`",
                            info.name, info.symbol
                        )
                    })
                };
                let site = site!();
                let mut call = ExternCall {
                    args: &values[..args.len()],
                    memory,
                    builtins: context.builtins,
                    member: binding.member,
                    site: site.pack(),
                };
                match binding.host.call(id, &mut call) {
                    Ok(ExternOutcome::Return(bits)) => {
                        if let Some((dst, scalar)) = result {
                            reg!(*dst) = super::value::canonical(bits, *scalar);
                        }
                    }
                    Ok(ExternOutcome::GroupBarrier) => suspend!(Status::Group {
                        site,
                        function: *callee
                    }),
                    Err(detail) => fault!(FaultKind::Extern {
                        detail: format!("in `{}` (`{}`): {detail}", info.name, info.symbol)
                    }),
                }
            }
            Op::Ptx(ptx) if ptx.is_collective() => suspend!(Status::Warp(WarpWait {
                op: WarpOp::Collective(site!()),
                mask: u32::MAX,
                value: 0,
                lane: 0,
                dst: base,
                site: site!(),
            })),
            Op::Ptx(ptx) => {
                let site = super::ptx::kernel_site(&state.frames, site!()).pack();
                match super::ptx::run_thread(ptx, &mut regs[base..], memory, site) {
                    Ok(super::ptx::Step::Next) => {}
                    Ok(super::ptx::Step::Wait {
                        barrier,
                        parity,
                        done,
                    }) => suspend!(Status::Mbarrier {
                        site: site!(),
                        barrier,
                        parity,
                        dst: base + done as usize,
                    }),
                    Ok(super::ptx::Step::ClusterWait) => {
                        suspend!(Status::ClusterWait { site: site!() })
                    }
                    Err(kind) => fault!(kind),
                }
            }
            Op::FellOff => fault!(FaultKind::FellOff),
            Op::CheckDivisor { divisor, remainder } => {
                if reg!(*divisor) == 0 {
                    fault!(FaultKind::DivisionByZero {
                        remainder: *remainder
                    });
                }
            }
        }
    }
}
