//! `println!`, `print!` and the assertion macros inside kernels: their format strings are
//! parsed here into pieces that the back end turns into a `vprintf` call.

use cudajit_core::ast::{BinaryOp, Expr, ExprKind, FormatPiece, FormatSpec, Stmt, ValueType};
use syn::punctuated::Punctuated;
use syn::Token;

use super::parser::Parser;
use super::span_at;

/// The macros kernels may use.
const SUPPORTED: &str = "`print!`, `println!`, `assert!`, `assert_eq!`, `assert_ne!` and their `debug_` forms, and `ptx!`";

/// `[T:] "template" [, args]*`
struct PtxArgs {
    result: Option<syn::Type>,
    template: syn::LitStr,
    inputs: Vec<syn::Expr>,
}

impl syn::parse::Parse for PtxArgs {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let result = if input.peek(syn::LitStr) {
            None
        } else {
            let ty: syn::Type = input.parse()?;
            input.parse::<Token![:]>()?;
            Some(ty)
        };
        let template: syn::LitStr = input.parse()?;
        let mut inputs = Vec::new();
        while input.parse::<Option<Token![,]>>()?.is_some() {
            if input.is_empty() {
                break;
            }
            inputs.push(input.parse()?);
        }
        Ok(PtxArgs {
            result,
            template,
            inputs,
        })
    }
}

impl Parser<'_> {
    /// A macro statement of the kernel language, or an error.
    pub(super) fn macro_stmt(&mut self, mac: &syn::Macro) -> Option<Stmt> {
        let name = mac
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        let span = span_at(mac);
        if name == "ptx" {
            // Its arguments start with an optional `Type:`, not an expression.
            return self.inline_ptx(mac).map(Stmt::Expr);
        }
        let args: Punctuated<syn::Expr, Token![,]> =
            match mac.parse_body_with(Punctuated::parse_terminated) {
                Ok(args) => args,
                Err(error) => {
                    self.errors.push(error);
                    return None;
                }
            };
        let args: Vec<syn::Expr> = args.into_iter().collect();
        match name.as_str() {
            "print" | "println" => {
                let newline = name == "println";
                let (mut pieces, values) = match args.split_first() {
                    Some((format, rest)) => self.format(format, rest)?,
                    None if newline => (Vec::new(), Vec::new()),
                    None => {
                        self.errors.at(mac, "`print!` needs a format string");
                        return None;
                    }
                };
                if newline {
                    pieces.push(FormatPiece::Text("\n".into()));
                }
                Some(Stmt::Print {
                    pieces,
                    args: values,
                    span,
                })
            }
            "assert" | "debug_assert" => {
                let Some((cond, rest)) = args.split_first() else {
                    self.errors.at(mac, format!("`{name}!` needs a condition"));
                    return None;
                };
                let text = quote::quote!(#cond).to_string();
                let parsed = self.expr(cond);
                let message = self.message(rest)?;
                Some(Stmt::Assert {
                    cond: parsed?,
                    text,
                    message,
                    debug_only: name.starts_with("debug_"),
                    span,
                })
            }
            "assert_eq" | "assert_ne" | "debug_assert_eq" | "debug_assert_ne" => {
                let [left, right, rest @ ..] = args.as_slice() else {
                    self.errors.at(mac, format!("`{name}!` needs two values"));
                    return None;
                };
                let equal = name.ends_with("_eq");
                let op = if equal { BinaryOp::Eq } else { BinaryOp::Ne };
                let symbol = if equal { "==" } else { "!=" };
                let text = format!(
                    "{} {symbol} {}",
                    quote::quote!(#left),
                    quote::quote!(#right)
                );
                let l = self.expr(left);
                let r = self.expr(right);
                let message = self.message(rest)?;
                let cond = Expr {
                    kind: ExprKind::Binary {
                        op,
                        left: Box::new(l?),
                        right: Box::new(r?),
                    },
                    span,
                };
                Some(Stmt::Assert {
                    cond,
                    text,
                    message,
                    debug_only: name.starts_with("debug_"),
                    span,
                })
            }
            _ => {
                self.errors.at(
                    &mac.path,
                    format!("the macro `{name}!` is not supported inside kernels; supported: {SUPPORTED}"),
                );
                None
            }
        }
    }

    /// `ptx!(T: "template", args..)` or `ptx!("template", args..)`.
    pub(super) fn inline_ptx(&mut self, mac: &syn::Macro) -> Option<Expr> {
        let parsed: syn::Result<PtxArgs> = mac.parse_body();
        let args = match parsed {
            Ok(args) => args,
            Err(error) => {
                self.errors.push(error);
                return None;
            }
        };
        let result = match &args.result {
            Some(ty) => match ptx_result_type(ty) {
                Some(result) => Some(result),
                None => {
                    self.errors.at(
                        ty,
                        format!("the result of `ptx!` is a scalar type (`u32`) or a tuple of 2 to {} scalars (`(f32, f32, f32, f32)`: one output operand each)", cudajit_core::layout::MAX_TUPLE_ELEMENTS),
                    );
                    return None;
                }
            },
            None => None,
        };
        // `&mut acc` passes a local array as in/out registers.
        let values: Vec<Option<Expr>> = args.inputs.iter().map(|e| self.call_argument(e)).collect();
        Some(Expr {
            kind: ExprKind::InlinePtx {
                result,
                template: args.template.value(),
                args: values.into_iter().collect::<Option<_>>()?,
                op: None,
            },
            span: span_at(mac),
        })
    }

    /// The optional `"format", args..` after an assertion's condition.
    fn message(&mut self, rest: &[syn::Expr]) -> Option<Option<(Vec<FormatPiece>, Vec<Expr>)>> {
        match rest.split_first() {
            None => Some(None),
            Some((format, values)) => self.format(format, values).map(Some),
        }
    }

    /// A format string literal and its arguments.
    fn format(
        &mut self,
        format: &syn::Expr,
        values: &[syn::Expr],
    ) -> Option<(Vec<FormatPiece>, Vec<Expr>)> {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(literal),
            ..
        }) = format
        else {
            self.errors
                .at(format, "the format must be a string literal");
            return None;
        };
        let pieces = match parse_format(&literal.value(), values.len()) {
            Ok(pieces) => pieces,
            Err(message) => {
                self.errors.at(literal, message);
                return None;
            }
        };
        let parsed: Vec<Option<Expr>> = values.iter().map(|v| self.expr(v)).collect();
        Some((pieces, parsed.into_iter().collect::<Option<_>>()?))
    }
}

/// Splits a Rust format string into text and `{}` placeholders taking arguments in order.
fn parse_format(text: &str, arguments: usize) -> Result<Vec<FormatPiece>, String> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut next = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => inner.push(c),
                        None => return Err("unclosed `{` in the format string".into()),
                    }
                }
                let spec = parse_spec(&inner)?;
                if next >= arguments {
                    return Err(format!(
                        "the format has more `{{}}` than the {arguments} argument(s) given"
                    ));
                }
                if !literal.is_empty() {
                    pieces.push(FormatPiece::Text(std::mem::take(&mut literal)));
                }
                pieces.push(FormatPiece::Arg { index: next, spec });
                next += 1;
            }
            '}' => return Err("unmatched `}` in the format string: write `}}`".into()),
            other => literal.push(other),
        }
    }
    if next != arguments {
        return Err(format!(
            "{arguments} argument(s) given but the format uses {next}"
        ));
    }
    if !literal.is_empty() {
        pieces.push(FormatPiece::Text(literal));
    }
    Ok(pieces)
}

/// `""`, `":?"`, `":.3"`, `":x"`, `":X"`, `":8"`, `":8.2"`.
fn parse_spec(inner: &str) -> Result<FormatSpec, String> {
    let unsupported = || {
        format!("`{{{inner}}}` is not supported in kernels: use `{{}}`, `{{:?}}`, `{{:.N}}`, `{{:N}}`, `{{:x}}` or `{{:X}}` with arguments in order")
    };
    let Some(spec) = inner.strip_prefix(':') else {
        return if inner.is_empty() {
            Ok(FormatSpec::default())
        } else {
            Err(unsupported())
        };
    };
    let mut result = FormatSpec::default();
    let mut rest = spec;
    if let Some(r) = rest.strip_suffix('?') {
        rest = r;
    } else if let Some(r) = rest.strip_suffix('x') {
        result.hex = Some(false);
        rest = r;
    } else if let Some(r) = rest.strip_suffix('X') {
        result.hex = Some(true);
        rest = r;
    }
    let (width, precision) = match rest.split_once('.') {
        Some((w, p)) => (w, Some(p)),
        None => (rest, None),
    };
    if !width.is_empty() {
        result.width = Some(width.parse().map_err(|_| unsupported())?);
    }
    if let Some(p) = precision {
        result.precision = Some(p.parse().map_err(|_| unsupported())?);
    }
    Ok(result)
}

/// The result type of `ptx!`: a scalar, or a tuple of scalars (one output operand each).
fn ptx_result_type(ty: &syn::Type) -> Option<ValueType> {
    match ty {
        syn::Type::Tuple(tuple)
            if (2..=cudajit_core::layout::MAX_TUPLE_ELEMENTS).contains(&tuple.elems.len()) =>
        {
            tuple
                .elems
                .iter()
                .map(|element| super::signature::scalar_type(element).map(ValueType::Scalar))
                .collect::<Option<Vec<_>>>()
                .map(ValueType::Tuple)
        }
        syn::Type::Paren(inner) => ptx_result_type(&inner.elem),
        other => super::signature::scalar_type(other).map(ValueType::Scalar),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let pieces = parse_format("x = {} y = {:.2} {{ok}} {:x}", 3).unwrap();
        assert_eq!(pieces.len(), 6);
        assert!(parse_format("{}", 0).is_err());
        assert!(parse_format("{name}", 1).is_err());
        assert!(parse_format("{} {}", 1).is_err());
        assert!(parse_format("text", 1).is_err());
        assert_eq!(
            parse_spec(":8.3").unwrap(),
            FormatSpec {
                width: Some(8),
                precision: Some(3),
                hex: None
            }
        );
    }
}
