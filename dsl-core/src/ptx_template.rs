//! The operand references of a `ptx!` template, read once for every consumer: the lowering
//! checks each `$N` names an operand, the NVVM writer renumbers them to LLVM's order.

/// A piece of a `ptx!` template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplatePiece<'a> {
    /// Text copied as it is (including a lone `$` not followed by a digit).
    Text(&'a str),
    /// `$$`: a literal `$`.
    Dollar,
    /// `$N`: operand `N` (`None` when the digits overflow), with its text (`"12"`).
    Operand(Option<usize>, &'a str),
}

/// The template split at its operand references, in order.
pub fn pieces(template: &str) -> Vec<TemplatePiece<'_>> {
    let bytes = template.as_bytes();
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let digits = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let doubled = bytes.get(i + 1) == Some(&b'$');
        if !doubled && digits == 0 {
            i += 1;
            continue;
        }
        if start < i {
            pieces.push(TemplatePiece::Text(&template[start..i]));
        }
        if doubled {
            pieces.push(TemplatePiece::Dollar);
            i += 2;
        } else {
            let text = &template[i + 1..i + 1 + digits];
            pieces.push(TemplatePiece::Operand(text.parse().ok(), text));
            i += 1 + digits;
        }
        start = i;
    }
    if start < bytes.len() {
        pieces.push(TemplatePiece::Text(&template[start..]));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::{pieces, TemplatePiece::*};

    #[test]
    fn operands_dollars_and_text_come_apart() {
        assert_eq!(
            pieces("add $0, $12; $$x $y"),
            vec![
                Text("add "),
                Operand(Some(0), "0"),
                Text(", "),
                Operand(Some(12), "12"),
                Text("; "),
                Dollar,
                Text("x $y"),
            ]
        );
        assert_eq!(pieces(""), vec![]);
    }
}
