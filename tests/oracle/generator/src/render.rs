//! Programs as Rust source. The same text is compiled twice: once inside `#[kernel]` and
//! `#[device]` items (cudajit's front end), once as plain host Rust (rustc, the oracle).
//! Only the frame differs: the kernel runs its phases with `sync_threads()` between them,
//! the host function runs one phase per call, chosen by `phase`.

use std::cell::Cell;
use std::fmt::Write;

thread_local! {
    /// Whether the host program is being written (warp operations differ).
    static HOST: Cell<bool> = const { Cell::new(false) };
}

/// A warp operation as the GPU runs it, or as the host reads it from the lanes' shared
/// array (`lane` is `tid % 32`: blocks hold whole warps).
fn warp(op: &WarpOp) -> String {
    let host = HOST.with(Cell::get);
    match (op, host) {
        (WarpOp::Xor { array, mask, .. }, false) => format!("shfl_xor_sync(FULL_WARP, {array}[tid], {mask})"),
        (WarpOp::Xor { array, mask, .. }, true) => format!("{array}[tid ^ {mask}]"),
        (WarpOp::Down { array, delta, .. }, false) => format!("shfl_down_sync(FULL_WARP, {array}[tid], {delta})"),
        (WarpOp::Down { array, delta, .. }, true) => format!("(if tid % 32 + {delta} < 32 {{ {array}[tid + {delta}] }} else {{ {array}[tid] }})"),
        (WarpOp::Up { array, delta, .. }, false) => format!("shfl_up_sync(FULL_WARP, {array}[tid], {delta})"),
        (WarpOp::Up { array, delta, .. }, true) => format!("(if tid % 32 >= {delta} {{ {array}[tid - {delta}] }} else {{ {array}[tid] }})"),
        (WarpOp::Idx { array, lane, .. }, false) => format!("shfl_idx_sync(FULL_WARP, {array}[tid], {lane})"),
        (WarpOp::Idx { array, lane, .. }, true) => format!("{array}[tid - tid % 32 + {lane}]"),
        (WarpOp::Ballot { array, threshold, .. }, false) => format!("ballot_sync(FULL_WARP, {array}[tid] > {})", expr(threshold)),
        (WarpOp::Ballot { array, threshold, .. }, true) => format!(
            "(0..32usize).fold(0u32, |bits, lane| bits | (({array}[tid - tid % 32 + lane] > {}) as u32) << lane)",
            expr(threshold)
        ),
    }
}

use crate::ast::*;
use crate::types::Ty;

/// The parameters every generated kernel takes, in order (the harness passes them so).
pub const KERNEL_PARAMS: &str = "n: u32, s_i32: i32, s_u32: u32, s_i64: i64, s_u64: u64, s_f32: f32, s_f64: f64, s_b: bool, in_i8: &[i8], in_u16: &[u16], in_i32: &[i32], in_u32: &[u32], in_i64: &[i64], in_u64: &[u64], in_f32: &[f32], in_f64: &[f64], out_i: &mut [i64], out_f32: &mut [f32], out_f64: &mut [f64], cnt: &mut [u32]";

pub fn expr(e: &Expr) -> String {
    match e {
        Expr::Lit { text, .. } => text.clone(),
        Expr::Var { name, .. } => name.clone(),
        Expr::Bin { op, lhs, rhs, .. } => {
            let (l, r) = (expr(lhs), expr(rhs));
            match op {
                BinOp::Div | BinOp::Rem => format!("({l} {} (({r} & 7) + 1))", op.token()),
                _ => format!("({l} {} {r})", op.token()),
            }
        }
        Expr::Unary { op, expr: inner, .. } => {
            let token = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
            };
            format!("({token}{})", expr(inner))
        }
        Expr::Cast { expr: inner, ty } => format!("({} as {})", expr(inner), ty.name()),
        Expr::Method { recv, name, args, .. } => {
            format!("{}.{name}({})", expr(recv), list(args))
        }
        Expr::PathMethod { on, name, args, .. } => {
            format!("{}::{name}({})", on.name(), list(args))
        }
        Expr::Call { func, args, .. } => {
            let args: Vec<String> = args.iter().map(arg).collect();
            format!("{func}({})", args.join(", "))
        }
        Expr::ClosureCall { name, arg, .. } => format!("{name}({})", expr(arg)),
        Expr::If { cond, then, els, .. } => format!(
            "(if {} {{ {} }} else {{ {} }})",
            expr(cond),
            expr(then),
            expr(els)
        ),
        Expr::Block { stmts, tail, .. } => {
            let mut out = String::from("{ ");
            for s in stmts {
                stmt(s, 0, &mut out);
            }
            let _ = write!(out, "{} }}", expr(tail));
            out
        }
        Expr::Index {
            base, index, len, ..
        } => match len {
            Some(len) => format!("{base}[({}) % {len}]", expr(index)),
            None => format!("{base}[({}) % {base}.len()]", expr(index)),
        },
        Expr::PtScalar { pt: p, part } => match part {
            PtPart::A => format!("{}.a", pt(p)),
            PtPart::B => format!("{}.b", pt(p)),
            PtPart::Norm1 => format!("{}.norm1()", pt(p)),
            PtPart::Key => format!("{}.key()", pt(p)),
        },
        Expr::Match {
            scrutinee, arms, ..
        } => {
            let mut out = format!("(match ({}) & 3 {{ ", expr(scrutinee));
            for (k, a) in arms.iter().enumerate() {
                let pattern = if k + 1 == arms.len() {
                    "_".to_owned()
                } else {
                    k.to_string()
                };
                let _ = write!(out, "{pattern} => {}, ", expr(a));
            }
            out.push_str("})");
            out
        }
        Expr::Chain { chain, .. } => {
            let mut out = chain_source(&chain.source);
            out.push_str(&stages(&chain.stages));
            out.push_str(&consumer(&chain.consumer));
            out
        }
        Expr::Wr { wr: w, part } => match part {
            WrPart::First => format!("{}.0", wr(w)),
            WrPart::Second => format!("{}.1", wr(w)),
            WrPart::Total => format!("{}.total()", wr(w)),
        },
        Expr::WrMatch {
            wr: w,
            lit,
            bound,
            k,
            y,
        } => format!(
            "(match {} {{ Wr({lit}, {y}) => {y}, Wr({k}, {y}) if {k} > {bound} => {y} - {k} as f32, Wr({k}, _) => {k} as f32 }})",
            wr(w)
        ),
        Expr::Opt { call, form, .. } => {
            let call = opt_call(call);
            match form {
                OptForm::UnwrapOr(default) => format!("{call}.unwrap_or({})", expr(default)),
                OptForm::MapUnwrapOr {
                    param,
                    pty,
                    body,
                    default,
                } => format!(
                    "{call}.map(|{param}: {}| {}).unwrap_or({})",
                    pty.name(),
                    expr(body),
                    expr(default)
                ),
                OptForm::Match {
                    var,
                    some,
                    none,
                    if_let: false,
                } => format!(
                    "(match {call} {{ Some({var}) => {}, None => {} }})",
                    expr(some),
                    expr(none)
                ),
                OptForm::Match {
                    var,
                    some,
                    none,
                    if_let: true,
                } => format!(
                    "(if let Some({var}) = {call} {{ {} }} else {{ {} }})",
                    expr(some),
                    expr(none)
                ),
                OptForm::IsSome => format!("{call}.is_some()"),
            }
        }
        Expr::PtDot { a, b, by_path } => match by_path {
            true => format!("Pt::dot(&{a}, &{b})"),
            false => format!("{a}.dot(&{b})"),
        },
        Expr::Table {
            name, index, len, ..
        } => format!("{name}[({}) % {len}]", expr(index)),
        Expr::LoopValue {
            counter,
            limit,
            cond,
            value,
            ..
        } => format!(
            "{{ let mut {counter} = 0u32; loop {{ {counter} += 1; if {counter} >= {limit} || {} {{ break {}; }} }} }}",
            expr(cond),
            expr(value)
        ),
    }
}

/// A closure parameter pattern taking `depth` references off: `x3`, `&x3`, `&&x3`.
fn pattern(param: &str, depth: u32) -> String {
    format!("{}{param}", "&".repeat(depth as usize))
}

fn chain_source(s: &ChainSource) -> String {
    match s {
        ChainSource::Range { lo, hi, rev } => {
            let rev = if *rev { ".rev()" } else { "" };
            format!("({lo}u32..{hi}){rev}")
        }
        ChainSource::Slice { name, window, rev } => {
            let rev = if *rev { ".rev()" } else { "" };
            match window {
                Some((start, len)) => {
                    let start = format!("(({}) % 8)", expr(start));
                    format!("{name}[{start}..{start} + {len}].iter(){rev}")
                }
                None => format!("{name}.iter(){rev}"),
            }
        }
    }
}

fn stages(stages: &[ChainStage]) -> String {
    let mut out = String::new();
    for stage in stages {
        let _ = match stage {
            ChainStage::Map { param, depth, body } => {
                write!(out, ".map(|{}| {})", pattern(param, *depth), expr(body))
            }
            ChainStage::Filter { param, depth, body } => {
                write!(out, ".filter(|{}| {})", pattern(param, *depth), expr(body))
            }
            ChainStage::Take(n) => write!(out, ".take({n})"),
            ChainStage::Skip(n) => write!(out, ".skip({n})"),
            ChainStage::StepBy(n) => write!(out, ".step_by({n})"),
            ChainStage::Copied => write!(out, ".copied()"),
        };
    }
    out
}

fn consumer(c: &Consumer) -> String {
    match c {
        Consumer::Sum(ty) => format!(".sum::<{}>()", ty.name()),
        Consumer::Product(ty) => format!(".product::<{}>()", ty.name()),
        Consumer::Count => ".count()".into(),
        Consumer::Fold {
            init,
            acc,
            param,
            depth,
            body,
        } => format!(
            ".fold({}, |{acc}, {}| {})",
            expr(init),
            pattern(param, *depth),
            expr(body)
        ),
        Consumer::Any { param, depth, body } => {
            format!(".any(|{}| {})", pattern(param, *depth), expr(body))
        }
        Consumer::All { param, depth, body } => {
            format!(".all(|{}| {})", pattern(param, *depth), expr(body))
        }
        Consumer::Extreme { max, default } => format!(
            ".{}().unwrap_or({})",
            if *max { "max" } else { "min" },
            expr(default)
        ),
        Consumer::ExtremeBy {
            max,
            reversed,
            float,
            default,
        } => {
            let (a, b) = if *reversed { ("q", "p") } else { ("p", "q") };
            let order = if *float {
                format!("{a}.partial_cmp({b}).unwrap_or(core::cmp::Ordering::Equal)")
            } else {
                format!("{a}.cmp({b})")
            };
            format!(
                ".{}(|p, q| {order}).unwrap_or({})",
                if *max { "max_by" } else { "min_by" },
                expr(default)
            )
        }
        Consumer::Position {
            param,
            depth,
            body,
            default,
        } => format!(
            ".position(|{}| {}).unwrap_or({default})",
            pattern(param, *depth),
            expr(body)
        ),
        Consumer::Find {
            param,
            depth,
            body,
            default,
        } => format!(
            ".find(|{}| {}).unwrap_or({})",
            pattern(param, *depth),
            expr(body),
            expr(default)
        ),
        Consumer::Last { default } => format!(".last().unwrap_or({})", expr(default)),
    }
}

fn list(args: &[Expr]) -> String {
    args.iter().map(expr).collect::<Vec<_>>().join(", ")
}

pub fn pt(p: &PtExpr) -> String {
    match p {
        PtExpr::Var(name) => name.clone(),
        PtExpr::New(a, b) => format!("Pt::new({}, {})", expr(a), expr(b)),
        PtExpr::Add(l, r) => format!("({} + {})", pt(l), pt(r)),
        PtExpr::Mix(l, r) => format!("{}.mix({})", pt(l), pt(r)),
        PtExpr::Scaled(p, k) => format!("{}.scaled({})", pt(p), expr(k)),
    }
}

pub fn arg(a: &Arg) -> String {
    match a {
        Arg::Value(e) => expr(e),
        Arg::Array(name) | Arg::ClosureName(name) => name.clone(),
        Arg::RefMut(name) => format!("&mut {name}"),
        // Braces make even a bare local a value (a parenthesised one is still a place).
        Arg::RefMutTemporary(value) => format!("&mut {{ {} }}", expr(value)),
        Arg::Pt(p) => pt(p),
        Arg::Closure { param, pty, body } => format!("|{param}: {}| {}", pty.name(), expr(body)),
    }
}

fn indent(depth: usize, out: &mut String) {
    for _ in 0..depth {
        out.push_str("    ");
    }
}

fn block(stmts: &[Stmt], depth: usize, out: &mut String) {
    out.push_str("{\n");
    for s in stmts {
        stmt(s, depth + 1, out);
    }
    indent(depth, out);
    out.push('}');
}

fn range(r: &Range) -> String {
    match r {
        Range::Up { lo, hi } => format!("{lo}u32..{hi}"),
        Range::Rev { lo, hi } => format!("({lo}u32..{hi}).rev()"),
        Range::Step { lo, hi, step } => format!("({lo}u32..{hi}).step_by({step})"),
        Range::Inclusive { lo, hi } => format!("{lo}u32..={hi}"),
    }
}

/// A `Wr` value: a local or `Wr(a, b)`.
fn wr(w: &WrExpr) -> String {
    match w {
        WrExpr::Var(name) => name.clone(),
        WrExpr::New(a, b) => format!("Wr({}, {})", expr(a), expr(b)),
    }
}

fn opt_call(c: &OptCall) -> String {
    match &c.prev {
        None => format!("{}({})", c.func, expr(&c.arg)),
        Some(prev) => format!("{}({}, {})", c.func, expr(&c.arg), opt_arg(prev)),
    }
}

fn opt_arg(a: &OptArg) -> String {
    match a {
        OptArg::Param(name) => name.clone(),
        OptArg::None => "None".to_owned(),
        OptArg::Some(e) => format!("Some({})", expr(e)),
        OptArg::Call(c) => opt_call(c),
    }
}

/// A function returning an `Option`, with an early `return None` and `?`.
pub fn option_fn(f: &OptionFn) -> String {
    let (t, u) = (f.param_ty.name(), f.inner.name());
    let prev = match &f.prev {
        Some(name) => format!(", {name}: Option<{u}>"),
        None => String::new(),
    };
    let mut out = format!(
        "#[device]\npub fn {}({}: {t}{prev}) -> Option<{u}> {{\n    if {} {{\n        return None;\n    }}\n    let {} = {};\n",
        f.name,
        f.param,
        expr(&f.guard),
        f.value_name,
        expr(&f.value)
    );
    if let Some((name, source)) = &f.chained {
        let _ = writeln!(out, "    let {name} = {}?;", opt_arg(source));
    }
    let _ = writeln!(out, "    Some({})\n}}", expr(&f.result));
    out
}

fn place(p: &Place) -> String {
    match p {
        Place::Var(name) => name.clone(),
        Place::Index { base, index, len } => format!("{base}[({}) % {len}]", expr(index)),
        Place::PtField { base, part } => match part {
            PtPart::A => format!("{base}.a"),
            _ => format!("{base}.b"),
        },
        Place::WrField { base, part } => match part {
            WrPart::First => format!("{base}.0"),
            _ => format!("{base}.1"),
        },
    }
}

pub fn stmt(s: &Stmt, depth: usize, out: &mut String) {
    indent(depth, out);
    match s {
        Stmt::Let {
            name,
            ty,
            mutable,
            init,
        } => {
            let m = if *mutable { "mut " } else { "" };
            let _ = writeln!(out, "let {m}{name}: {} = {};", ty.name(), expr(init));
        }
        Stmt::LetArray {
            name,
            ty,
            mutable,
            elems,
        } => {
            let m = if *mutable { "mut " } else { "" };
            let _ = writeln!(
                out,
                "let {m}{name}: [{}; {}] = [{}];",
                ty.name(),
                elems.len(),
                list(elems)
            );
        }
        Stmt::LetPt {
            name,
            mutable,
            init,
        } => {
            let m = if *mutable { "mut " } else { "" };
            let _ = writeln!(out, "let {m}{name}: Pt = {};", pt(init));
        }
        Stmt::LetWr {
            name,
            mutable,
            init,
        } => {
            let m = if *mutable { "mut " } else { "" };
            let _ = writeln!(out, "let {m}{name} = {};", wr(init));
        }
        Stmt::SplitWr {
            from,
            first,
            second,
        } => {
            let _ = writeln!(out, "let Wr({first}, {second}) = {};", wr(from));
        }
        Stmt::LetClosure {
            name,
            param,
            pty,
            body,
        } => {
            let _ = writeln!(
                out,
                "let {name} = |{param}: {}| {};",
                pty.name(),
                expr(body)
            );
        }
        Stmt::Assign {
            place: p,
            op,
            value,
        } => {
            let token = match op {
                Some(op) => format!("{}=", op.token()),
                None => "=".to_owned(),
            };
            let _ = writeln!(out, "{} {token} {};", place(p), expr(value));
        }
        Stmt::If { cond, then, els } => {
            let _ = write!(out, "if {} ", expr(cond));
            block(then, depth, out);
            if !els.is_empty() {
                out.push_str(" else ");
                block(els, depth, out);
            }
            out.push('\n');
        }
        Stmt::For {
            label,
            var,
            range: r,
            body,
        } => {
            let _ = write!(out, "'{label}: for {var} in {} ", range(r));
            block(body, depth, out);
            out.push('\n');
        }
        Stmt::ForArray {
            var, array, body, ..
        } => {
            let _ = write!(out, "for &{var} in {array}.iter() ");
            block(body, depth, out);
            out.push('\n');
        }
        Stmt::While {
            counter,
            limit,
            body,
        } => {
            let _ = writeln!(out, "let mut {counter} = 0u32;");
            indent(depth, out);
            let _ = write!(out, "while {counter} < {limit} ");
            let mut body = body.clone();
            body.push(Stmt::Assign {
                place: Place::Var(counter.clone()),
                op: Some(BinOp::Add),
                value: Expr::Lit {
                    ty: Ty::U32,
                    text: "1".into(),
                },
            });
            block(&body, depth, out);
            out.push('\n');
        }
        Stmt::Jump {
            cond,
            label,
            continue_,
        } => {
            let word = if *continue_ { "continue" } else { "break" };
            let _ = writeln!(out, "if {} {{ {word} '{label}; }}", expr(cond));
        }
        Stmt::Return { cond, value } => {
            let _ = writeln!(out, "if {} {{ return {}; }}", expr(cond), expr(value));
        }
        Stmt::Out { slot, value } => {
            let (slice, cast) = value.ty().out_slot();
            let slots = match slice {
                "out_f32" => F32_SLOTS,
                "out_f64" => F64_SLOTS,
                _ => INT_SLOTS,
            };
            let _ = writeln!(
                out,
                "{slice}[gid * {slots} + {slot}] = {}{cast};",
                expr(value)
            );
        }
        Stmt::Shared { array, value } => {
            let _ = writeln!(out, "{array}[tid] = {};", expr(value));
        }
        Stmt::Atomic { counter, value } => {
            let _ = writeln!(
                out,
                "{}(&mut cnt[{counter}], {});",
                COUNTER_OPS[*counter],
                expr(value)
            );
        }
        Stmt::Bump { name, by } => {
            let _ = writeln!(out, "{name}.bump({});", expr(by));
        }
        Stmt::Warp { name, op } => {
            let _ = writeln!(out, "let {name}: {} = {};", op.ty().name(), warp(op));
        }
        Stmt::CopyArray {
            name,
            from,
            mutable,
        } => {
            let m = if *mutable { "mut " } else { "" };
            let _ = writeln!(out, "let {m}{name} = {from};");
        }
        Stmt::AssignArray { to, from } => {
            let _ = writeln!(out, "{to} = {from};");
        }
        Stmt::ForChain {
            param,
            depth: refs,
            source: s,
            stages: st,
            body,
        } => {
            let _ = write!(
                out,
                "for {} in {}{} ",
                pattern(param, *refs),
                chain_source(s),
                stages(st)
            );
            block(body, depth, out);
            out.push('\n');
        }
    }
}

pub fn device_fn(f: &DeviceFn) -> String {
    let mut generics = Vec::new();
    let mut params = Vec::new();
    for p in &f.params {
        match p {
            Param::Scalar(name, ty) => params.push(format!("{name}: {}", ty.name())),
            Param::RefMut(name, ty) => params.push(format!("{name}_ref: &mut {}", ty.name())),
            Param::Array(name, ty, len) => params.push(format!("{name}: [{}; {len}]", ty.name())),
            Param::Pt(name) => params.push(format!("{name}: Pt")),
            Param::Closure {
                name,
                generic,
                arg,
                ret,
            } => {
                generics.push(format!("{generic}: Fn({}) -> {}", arg.name(), ret.name()));
                params.push(format!("{name}: {generic}"));
            }
        }
    }
    let generics = if generics.is_empty() {
        String::new()
    } else {
        format!("<{}>", generics.join(", "))
    };
    let mut out = format!(
        "#[device]\npub fn {}{generics}({}) -> {} {{\n",
        f.name,
        params.join(", "),
        f.ret.name()
    );
    // A `&mut` parameter is read once into its local, which the body uses, and written
    // back before the tail (an early `return` leaves it as it was, in both compilations).
    let references: Vec<&String> = f
        .params
        .iter()
        .filter_map(|p| match p {
            Param::RefMut(name, _) => Some(name),
            _ => None,
        })
        .collect();
    for name in &references {
        let _ = writeln!(out, "    let mut {name} = *{name}_ref;");
    }
    for s in &f.body {
        stmt(s, 1, &mut out);
    }
    for name in &references {
        let _ = writeln!(out, "    *{name}_ref = {name};");
    }
    let _ = writeln!(out, "    {}\n}}", expr(&f.tail));
    out
}

/// The shared arrays of a program with `phases` phases: phase `k` writes `sh{k}_i` and
/// `sh{k}_f` (every thread its own element), later phases read them.
pub fn shared_arrays(phases: usize) -> Vec<(String, Ty)> {
    let mut arrays = Vec::new();
    for k in 0..phases.saturating_sub(1) {
        arrays.push((format!("sh{k}_i"), Ty::I64));
        arrays.push((format!("sh{k}_f"), Ty::F32));
    }
    arrays
}

fn prologue(p: &Program, out: &mut String) {
    out.push_str("    let tid = thread_idx().x as usize;\n    let gid = global_index();\n");
    if p.phases.len() == 1 {
        out.push_str("    if gid >= n as usize {\n        return;\n    }\n");
    }
    for (name, ty) in shared_arrays(p.phases.len()) {
        let _ = writeln!(
            out,
            "    let {name} = shared_array::<{}>({});",
            ty.name(),
            p.block
        );
    }
}

/// The program as a `#[kernel]`, named `name`.
pub fn kernel(p: &Program, name: &str) -> String {
    let mut out = format!("#[kernel]\npub fn {name}({KERNEL_PARAMS}) {{\n");
    prologue(p, &mut out);
    for (k, phase) in p.phases.iter().enumerate() {
        if k > 0 {
            out.push_str("    sync_threads();\n");
        }
        indent(1, &mut out);
        block(phase, 1, &mut out);
        out.push('\n');
    }
    out.push_str("}\n");
    out
}

/// The program as host Rust: one call runs phase `phase` of the calling (simulated)
/// thread.
pub fn host(p: &Program, name: &str) -> String {
    HOST.with(|h| h.set(true));
    let text = host_text(p, name);
    HOST.with(|h| h.set(false));
    text
}

fn host_text(p: &Program, name: &str) -> String {
    let mut out = format!("pub fn {name}(phase: usize, {KERNEL_PARAMS}) {{\n");
    prologue(p, &mut out);
    out.push_str("    match phase {\n");
    for (k, phase) in p.phases.iter().enumerate() {
        let _ = write!(out, "        {k} => ");
        block(phase, 2, &mut out);
        out.push('\n');
    }
    out.push_str("        _ => {}\n    }\n}\n");
    out
}

/// The lints generated code trips by design (constant overflow, unused names, parentheses
/// around every operation, comparisons that are always true): every warning, and the
/// deny-by-default lints of constant arithmetic.
const ALLOWS: &str = "#[allow(warnings, arithmetic_overflow, unconditional_panic, overflowing_literals, clippy::all)]";

/// The device functions and kernel of `p`, as a report shows them.
pub fn source(p: &Program) -> String {
    let mut out = String::new();
    for f in &p.option_fns {
        out.push_str(&option_fn(f));
        out.push('\n');
    }
    for f in &p.device_fns {
        out.push_str(&device_fn(f));
        out.push('\n');
    }
    out.push_str(&kernel(p, &format!("p{}", p.seed)));
    out
}

/// The module `p{seed}` of one program, for the `cudajit-oracle` crate: the device
/// functions once, the kernel and the host function from the same statements, a launcher
/// over the harness's buffers and the `PROGRAM` entry.
pub fn program_module(p: &Program) -> String {
    let name = format!("p{}", p.seed);
    let mut out = String::new();
    let _ = writeln!(out, "{ALLOWS}\npub mod {name} {{");
    out.push_str("pub mod device {\n    use cudajit::prelude::*;\n    use crate::{Pt, Wr};\n    pub use crate::tables::*;\n");
    for f in &p.option_fns {
        out.push_str(&option_fn(f));
    }
    for f in &p.device_fns {
        out.push_str(&device_fn(f));
    }
    out.push_str("}\npub mod kernel {\n    use cudajit::prelude::*;\n    use crate::{Pt, Wr};\n    use super::device::*;\n");
    out.push_str(&kernel(p, &name));
    out.push_str("}\npub mod host {\n    use crate::host_rt::*;\n    use crate::{Pt, Wr};\n    use super::device::*;\n");
    out.push_str(&host(p, &name));
    out.push_str("}\n");
    let _ = writeln!(
        out,
        "pub fn launch(stream: &cudajit::Stream, config: cudajit::LaunchConfig, a: &crate::Args, d: &mut crate::DeviceData) -> Result<(), cudajit::Error> {{\n    kernel::{name}::launch(stream, config, a.n, a.s_i32, a.s_u32, a.s_i64, a.s_u64, a.s_f32, a.s_f64, a.s_b, &d.in_i8, &d.in_u16, &d.in_i32, &d.in_u32, &d.in_i64, &d.in_u64, &d.in_f32, &d.in_f64, &mut d.out_i, &mut d.out_f32, &mut d.out_f64, &mut d.cnt)\n}}"
    );
    let _ = writeln!(
        out,
        "pub const PROGRAM: crate::Program = crate::Program {{ seed: {}, grid: {}, block: {}, active: {}, phases: {}, launch, host: host::{name}, source: {:?} }};\n}}",
        p.seed,
        p.grid,
        p.block,
        p.active,
        p.phases.len(),
        source(p)
    );
    out
}

/// The programs' modules and the `PROGRAMS` table.
pub fn programs_module(programs: &[Program]) -> String {
    let mut out = String::new();
    for p in programs {
        out.push_str(&program_module(p));
    }
    out.push_str("/// Every program of this build.\npub const PROGRAMS: &[Program] = &[\n");
    for p in programs {
        let _ = writeln!(out, "    p{}::PROGRAM,", p.seed);
    }
    out.push_str("];\n");
    out
}
