//! The text of a `ptx!` template read as PTX: scopes, register declarations and
//! instructions with their operands, `$N` kept as the user's operand numbers (the lowering
//! binds them to the kernel's registers).
//!
//! Only the syntax the templates of `cudajit::tensor` and ordinary inline PTX use is read:
//! `{ .. }` scopes, `.reg .type name[, name];`, `opcode operand, ..;` with operands
//! `$N`, `%special`, names, integers, `_`, vectors `{a, b}` and addresses `[a]`,
//! `[map, {x, y}]`. Anything else is an error naming what was found.

/// One piece of a template, in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Item {
    /// `{`: names declared from here on are local to the scope.
    Open,
    /// `}`.
    Close,
    /// `.reg .type a, b;`
    Declare {
        names: Vec<String>,
    },
    Instruction(Instruction),
}

/// `opcode operand, operand, ..;`
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Instruction {
    /// The whole dotted opcode, e.g. `ldmatrix.sync.aligned.m8n8.x4.shared.b16`.
    pub opcode: String,
    pub operands: Vec<Operand>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Operand {
    /// `$N`: the `ptx!`'s operand `N`.
    User(usize),
    /// A register declared in the template (`.reg .pred p;`).
    Name(String),
    /// `%laneid` and the like.
    Special(String),
    Immediate(i64),
    /// `_`: a result nobody reads.
    Sink,
    /// `{a, b, ..}`.
    Vector(Vec<Operand>),
    /// `[a]`, or `[a, {x, y}]` for a tensor copy.
    Address(Vec<Operand>),
}

/// The items of `template`, or why it cannot be read.
pub(crate) fn parse(template: &str) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut rest = template;
    loop {
        rest = rest.trim_start();
        let Some(first) = rest.chars().next() else {
            return Ok(items);
        };
        match first {
            '{' => {
                items.push(Item::Open);
                rest = &rest[1..];
            }
            '}' => {
                items.push(Item::Close);
                rest = &rest[1..];
            }
            _ => {
                let Some(end) = rest.find(';') else {
                    return Err(format!("`{}` does not end with `;`", rest.trim()));
                };
                items.push(statement(rest[..end].trim())?);
                rest = &rest[end + 1..];
            }
        }
    }
}

fn statement(text: &str) -> Result<Item, String> {
    if let Some(declaration) = text.strip_prefix(".reg") {
        let declaration = declaration.trim_start();
        // `.reg .pred p, q`: the type, then the names.
        let Some((_ty, names)) = declaration.split_once(char::is_whitespace) else {
            return Err(format!("`{text}` declares no register"));
        };
        let names: Vec<String> = names.split(',').map(|n| n.trim().to_owned()).collect();
        if names.iter().any(|n| !is_name(n)) {
            return Err(format!(
                "`{text}`: the simulator reads `.reg .type name, ..;` declarations only"
            ));
        }
        return Ok(Item::Declare { names });
    }
    if text.starts_with('@') {
        return Err(format!(
            "`{text}`: predicated instructions (`@p`) are not simulated; use `selp` or Rust's `if`"
        ));
    }
    let (opcode, operands) = match text.split_once(char::is_whitespace) {
        Some((opcode, operands)) => (opcode, operands.trim()),
        None => (text, ""),
    };
    let operands = if operands.is_empty() {
        Vec::new()
    } else {
        split_top_level(operands)?
            .into_iter()
            .map(operand)
            .collect::<Result<_, _>>()?
    };
    Ok(Item::Instruction(Instruction {
        opcode: opcode.to_owned(),
        operands,
    }))
}

/// Splits at the commas outside `{}` and `[]`.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(format!("unbalanced brackets in `{text}`"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced brackets in `{text}`"));
    }
    parts.push(text[start..].trim());
    Ok(parts)
}

fn operand(text: &str) -> Result<Operand, String> {
    let inner = |open: char, close: char| {
        text.strip_prefix(open)
            .and_then(|t| t.strip_suffix(close))
            .map(str::trim)
    };
    if let Some(list) = inner('{', '}') {
        return Ok(Operand::Vector(list_of(list)?));
    }
    if let Some(list) = inner('[', ']') {
        return Ok(Operand::Address(list_of(list)?));
    }
    if let Some(number) = text.strip_prefix('$') {
        return number
            .parse()
            .map(Operand::User)
            .map_err(|_| format!("`{text}` is not an operand number"));
    }
    if let Some(name) = text.strip_prefix('%') {
        return Ok(Operand::Special(name.to_owned()));
    }
    if text == "_" {
        return Ok(Operand::Sink);
    }
    if text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(digits) => (true, digits),
            None => (false, text),
        };
        let value = match digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            Some(hex) => i64::from_str_radix(hex, 16),
            None => digits.parse(),
        }
        .map_err(|_| format!("`{text}` is not an integer (float immediates are not simulated)"))?;
        return Ok(Operand::Immediate(if negative { -value } else { value }));
    }
    if is_name(text) {
        return Ok(Operand::Name(text.to_owned()));
    }
    Err(format!("the operand `{text}` is not simulated"))
}

fn list_of(text: &str) -> Result<Vec<Operand>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    split_top_level(text)?.into_iter().map(operand).collect()
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tensor_templates_read_as_instructions() {
        let items = parse("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};").unwrap();
        let [Item::Instruction(mma)] = items.as_slice() else {
            panic!("{items:?}");
        };
        assert_eq!(mma.operands.len(), 4);
        assert_eq!(
            mma.operands[2],
            Operand::Vector(vec![Operand::User(8), Operand::User(9)])
        );
        let items = parse("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\tselp.u32 $0, 1, 0, p;\n}").unwrap();
        assert_eq!(items.len(), 5);
        assert_eq!(
            items[1],
            Item::Declare {
                names: vec!["p".into()]
            }
        );
        let Item::Instruction(wait) = &items[2] else {
            panic!("{items:?}");
        };
        assert_eq!(wait.operands[1], Operand::Address(vec![Operand::User(1)]));
        let items = parse("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];").unwrap();
        let Item::Instruction(tma) = &items[0] else {
            panic!("{items:?}");
        };
        assert_eq!(
            tma.operands[1],
            Operand::Address(vec![
                Operand::User(1),
                Operand::Vector(vec![Operand::User(2), Operand::User(3)])
            ])
        );
        let items = parse("cp.async.commit_group;").unwrap();
        assert_eq!(
            items,
            vec![Item::Instruction(Instruction {
                opcode: "cp.async.commit_group".into(),
                operands: vec![]
            })]
        );
        assert_eq!(
            parse("mbarrier.arrive.shared::cta.b64 _, [$0], -0x10;").unwrap()[0],
            Item::Instruction(Instruction {
                opcode: "mbarrier.arrive.shared::cta.b64".into(),
                operands: vec![
                    Operand::Sink,
                    Operand::Address(vec![Operand::User(0)]),
                    Operand::Immediate(-16)
                ]
            })
        );
    }

    #[test]
    fn what_is_not_read_is_named() {
        assert!(parse("add.u32 $0, $1, $2").unwrap_err().contains("`;`"));
        assert!(parse("@p add.u32 $0, $1, $2;")
            .unwrap_err()
            .contains("predicated"));
        assert!(parse("add.f32 $0, $1, 0f3F800000;")
            .unwrap_err()
            .contains("float immediates"));
        assert!(parse("mov.b32 {$0, $1, $2;")
            .unwrap_err()
            .contains("unbalanced"));
    }
}
