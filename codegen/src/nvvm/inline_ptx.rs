//! Writing `ptx!`: one `asm sideeffect` call. LLVM wants every output operand before every
//! input, while the template numbers them as the user wrote them (the result first, then
//! one number per argument, a register array's number standing for its whole list), so the
//! template is renumbered to LLVM's order here.
//!
//! Operands take the register class of their type (`r` 32-bit, `l` 64-bit, `f`/`d`
//! floats); integers narrower than 32 bits and `bool`s travel as 32-bit registers. A tuple
//! result is one output per field (the call returns an LLVM struct whose members are stored
//! into the tuple local's fields). A read-write register array (`&mut acc`) is one output
//! per element with a tied input carrying the element's value in: the instruction reads and
//! replaces the same register, as `wgmma.mma_async`'s accumulators are.

use cudajit_core::ir::{Handle, LocalVariable, PtxOperand, TypeInner};
use cudajit_core::ptx_template::{pieces, TemplatePiece};
use cudajit_core::Scalar;

use super::function::{struct_type_name, WriteError, Writer};
use super::types;

/// The constraint letter and LLVM register type of a scalar operand.
fn register_class(s: Scalar) -> (&'static str, &'static str) {
    match (s.is_float(), s.bits()) {
        (true, 64) => ("d", "double"),
        (true, _) => ("f", "float"),
        (false, 64) => ("l", "i64"),
        (false, _) => ("r", "i32"),
    }
}

/// Where an output's value goes after the call.
enum OutputSlot {
    /// Field `index` of the tuple result (`Some(struct type)`) or the scalar result.
    Result { field: usize },
    /// Element `index` of a register array.
    ArrayElement {
        local: Handle<LocalVariable>,
        len: u32,
        index: u32,
    },
}

struct Output {
    ty: Scalar,
    slot: OutputSlot,
}

/// `template` with each `$N` (the user's numbering) replaced by LLVM's operands for it, a
/// register array's by the comma-separated list of its elements; `$$` stays a literal `$`.
fn renumber(template: &str, operands: &[Vec<usize>]) -> Result<String, usize> {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template) {
        match piece {
            TemplatePiece::Text(text) => out.push_str(text),
            TemplatePiece::Dollar => out.push_str("$$"),
            TemplatePiece::Operand(number, _) => {
                let number = number.unwrap_or(usize::MAX);
                let llvm = operands.get(number).ok_or(number)?;
                let list: Vec<String> = llvm.iter().map(|n| format!("${n}")).collect();
                out.push_str(&list.join(", "));
            }
        }
    }
    Ok(out)
}

impl Writer<'_> {
    /// The element type and length of register array `local`.
    fn register_array(&self, local: Handle<LocalVariable>) -> Result<(Scalar, u32), WriteError> {
        let ty = self.function.locals[local].ty;
        match self.module.types[ty].inner {
            TypeInner::Array { base, len } => match self.module.types[base].inner {
                TypeInner::Scalar(elem) if elem.bits() >= 32 => Ok((elem, len)),
                _ => Err(self.unsupported(
                    self.function.span,
                    "a `ptx!` register array of elements narrower than 32 bits",
                )),
            },
            _ => Err(self.unsupported(self.function.span, "a `ptx!` register array")),
        }
    }

    /// The pointer to element `index` of local array `local`.
    fn array_slot(
        &mut self,
        local: Handle<LocalVariable>,
        elem: Scalar,
        len: u32,
        index: u32,
    ) -> String {
        let mem = types::memory(elem);
        self.value(format!(
            "getelementptr inbounds [{len} x {mem}], [{len} x {mem}]* %local{}, i64 0, i64 {index}",
            local.index()
        ))
    }

    pub(super) fn inline_ptx(
        &mut self,
        template: &str,
        arguments: &[PtxOperand],
        result: Option<Handle<LocalVariable>>,
    ) -> Result<(), WriteError> {
        // The result's outputs: a scalar, or a tuple's fields.
        let (result_types, tuple) = match result {
            Some(local) => {
                let ty = self.function.locals[local].ty;
                match &self.module.types[ty].inner {
                    TypeInner::Scalar(scalar) => (vec![*scalar], None),
                    TypeInner::Struct { name, members, .. } => {
                        let mut scalars = Vec::new();
                        for member in members {
                            let Some(scalar) = self.module.types[member.ty].inner.scalar() else {
                                return Err(self.unsupported(
                                    self.function.span,
                                    "a `ptx!` tuple with a non-scalar element",
                                ));
                            };
                            scalars.push(scalar);
                        }
                        (scalars, Some(struct_type_name(name)))
                    }
                    _ => {
                        return Err(
                            self.unsupported(self.function.span, "a non-scalar `ptx!` result")
                        )
                    }
                }
            }
            None => (Vec::new(), None),
        };
        let mut outputs: Vec<Output> = result_types
            .iter()
            .enumerate()
            .map(|(field, &ty)| Output {
                ty,
                slot: OutputSlot::Result { field },
            })
            .collect();
        // The user's operand numbers: the result's (one per tuple field), then one per
        // argument; each maps to LLVM operand numbers, fixed once the outputs are counted.
        let mut user: Vec<Vec<usize>> = (0..outputs.len()).map(|i| vec![i]).collect();
        for argument in arguments {
            if let PtxOperand::Array {
                local,
                read_write: true,
            } = *argument
            {
                let (elem, len) = self.register_array(local)?;
                let first = outputs.len();
                outputs.extend((0..len).map(|index| Output {
                    ty: elem,
                    slot: OutputSlot::ArrayElement { local, len, index },
                }));
                user.push((first..first + len as usize).collect());
            } else {
                user.push(Vec::new());
            }
        }
        let mut constraints: Vec<String> = outputs
            .iter()
            .map(|output| format!("={}", register_class(output.ty).0))
            .collect();
        let mut operands = Vec::new();
        let input = |constraints: &mut Vec<String>| constraints.len();
        for (position, argument) in arguments.iter().enumerate() {
            let numbers = &mut user[result_types.len() + position];
            match *argument {
                PtxOperand::Value(value) => {
                    let ty = self.scalar_of(value)?;
                    let mut register_value = self.expr(value)?.scalar();
                    let (letter, register) = register_class(ty);
                    if !ty.is_float() && ty.bits() < 32 {
                        let op = if ty.is_signed() { "sext" } else { "zext" };
                        register_value = self.value(format!(
                            "{op} {} {register_value} to i32",
                            types::scalar(ty)
                        ));
                    }
                    numbers.push(input(&mut constraints));
                    constraints.push(letter.to_owned());
                    operands.push(format!("{register} {register_value}"));
                }
                PtxOperand::Array { local, read_write } => {
                    let (elem, len) = self.register_array(local)?;
                    let (letter, register) = register_class(elem);
                    let mem = types::memory(elem);
                    for index in 0..len {
                        let slot = self.array_slot(local, elem, len, index);
                        let loaded = self.value(format!("load {mem}, {mem}* {slot}"));
                        if read_write {
                            // Tied to its output: the template names the output's number.
                            constraints.push(numbers[index as usize].to_string());
                        } else {
                            numbers.push(input(&mut constraints));
                            constraints.push(letter.to_owned());
                        }
                        operands.push(format!("{register} {loaded}"));
                    }
                }
            }
        }
        constraints.push("~{memory}".into());
        let renumbered = renumber(template, &user).map_err(|number| {
            self.unsupported(
                self.function.span,
                &format!(
                    "`${number}` of a `ptx!` template that has {} operands",
                    user.len()
                ),
            )
        })?;
        let escaped: String = renumbered
            .bytes()
            .map(|b| {
                if b == b'"' || b == b'\\' || !(b.is_ascii_graphic() || b == b' ') {
                    format!("\\{b:02X}")
                } else {
                    (b as char).to_string()
                }
            })
            .collect();
        let call = format!(
            "asm sideeffect \"{escaped}\", \"{}\"({})",
            constraints.join(","),
            operands.join(", ")
        );
        if outputs.is_empty() {
            self.line(format!("call void {call}"));
            return Ok(());
        }
        let registers: Vec<&str> = outputs.iter().map(|o| register_class(o.ty).1).collect();
        let raws: Vec<String> = if registers.len() == 1 && tuple.is_none() {
            vec![self.value(format!("call {} {call}", registers[0]))]
        } else {
            let returned = format!("{{{}}}", registers.join(", "));
            let all = self.value(format!("call {returned} {call}"));
            (0..outputs.len())
                .map(|i| self.value(format!("extractvalue {returned} {all}, {i}")))
                .collect()
        };
        for (output, raw) in outputs.iter().zip(raws) {
            let ty = output.ty;
            let value = if !ty.is_float() && ty.bits() < 32 {
                if ty == Scalar::Bool {
                    self.value(format!("icmp ne i32 {raw}, 0"))
                } else {
                    self.value(format!("trunc i32 {raw} to {}", types::scalar(ty)))
                }
            } else {
                raw
            };
            match (&output.slot, &tuple, result) {
                (OutputSlot::ArrayElement { local, len, index }, _, _) => {
                    let slot = self.array_slot(*local, ty, *len, *index);
                    let mem = types::memory(ty);
                    self.line(format!("store {mem} {value}, {mem}* {slot}"));
                }
                // A tuple's fields are in memory form (`bool` as a byte).
                (OutputSlot::Result { field }, Some(struct_ty), Some(local)) => {
                    let slot = self.value(format!(
                        "getelementptr inbounds {struct_ty}, {struct_ty}* %local{}, i32 0, i32 {field}",
                        local.index()
                    ));
                    let memory = types::memory(ty);
                    let stored = if ty == Scalar::Bool {
                        self.value(format!("zext i1 {value} to i8"))
                    } else {
                        value
                    };
                    self.line(format!("store {memory} {stored}, {memory}* {slot}"));
                }
                (OutputSlot::Result { .. }, None, Some(local)) => {
                    let t = types::scalar(ty);
                    self.line(format!("store {t} {value}, {t}* %local{}", local.index()));
                }
                (OutputSlot::Result { .. }, _, None) => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::renumber;

    #[test]
    fn a_register_list_takes_its_operand_number() {
        // `$0` a scalar result (LLVM 0), `$1` an in/out array (outputs 1, 2), `$2` an
        // input (LLVM 3).
        let user = vec![vec![0], vec![1, 2], vec![3]];
        assert_eq!(
            renumber("op $0, {$1}, $2, $$x;", &user).unwrap(),
            "op $0, {$1, $2}, $3, $$x;"
        );
        assert_eq!(renumber("bad $3;", &user), Err(3));
        assert_eq!(
            renumber("$10", &(0..11).map(|i| vec![i + 1]).collect::<Vec<_>>()).unwrap(),
            "$11"
        );
    }
}
