//! CuTe's `IntTuple`: an integer, or a tuple of `IntTuple`s — the shapes, strides and
//! coordinates of layouts.

use core::fmt;

/// An integer or a (possibly nested) tuple of them: `6`, `(4,6)`, `((2,2),3)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntTuple {
    Int(i64),
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// A tuple of integers, `(a, b, ..)`.
    pub fn ints(values: &[i64]) -> IntTuple {
        IntTuple::Tuple(values.iter().map(|&v| IntTuple::Int(v)).collect())
    }

    /// The number of top-level modes (1 for an integer).
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Int(_) => 1,
            IntTuple::Tuple(modes) => modes.len(),
        }
    }

    /// The nesting depth: 0 for an integer, 1 for a tuple of integers, ..
    pub fn depth(&self) -> usize {
        match self {
            IntTuple::Int(_) => 0,
            IntTuple::Tuple(modes) => 1 + modes.iter().map(IntTuple::depth).max().unwrap_or(0),
        }
    }

    /// Top-level mode `i` (an integer is its own mode 0).
    pub fn mode(&self, i: usize) -> &IntTuple {
        match self {
            IntTuple::Int(_) => self,
            IntTuple::Tuple(modes) => &modes[i],
        }
    }

    /// The top-level modes (an integer is one mode).
    pub fn modes(&self) -> Vec<IntTuple> {
        match self {
            IntTuple::Int(_) => vec![self.clone()],
            IntTuple::Tuple(modes) => modes.clone(),
        }
    }

    /// The product of every integer (a shape's size).
    pub fn product(&self) -> i64 {
        match self {
            IntTuple::Int(v) => *v,
            IntTuple::Tuple(modes) => modes.iter().map(IntTuple::product).product(),
        }
    }

    /// The integers, depth first.
    pub fn flatten(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.flatten_into(&mut out);
        out
    }

    fn flatten_into(&self, out: &mut Vec<i64>) {
        match self {
            IntTuple::Int(v) => out.push(*v),
            IntTuple::Tuple(modes) => modes.iter().for_each(|m| m.flatten_into(out)),
        }
    }

    /// Whether `other` has the same tree (congruent: a stride for each shape).
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }
}

impl From<i64> for IntTuple {
    fn from(v: i64) -> Self {
        IntTuple::Int(v)
    }
}

impl fmt::Display for IntTuple {
    /// CuTe's notation: `6`, `(4,6)`, `((2,2),3)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Tuple(modes) => {
                f.write_str("(")?;
                for (i, m) in modes.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{m}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// `(4,(2,3))` as written in CuTe's notation, for tests and examples.
///
/// ```
/// use cudajit::tensor::layout::algebra::IntTuple;
/// let t: IntTuple = "(4,(2,3))".parse().unwrap();
/// assert_eq!(t.product(), 24);
/// assert_eq!(t.to_string(), "(4,(2,3))");
/// ```
impl core::str::FromStr for IntTuple {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bytes: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut at = 0;
        let parsed = parse(&bytes, &mut at)?;
        if at != bytes.len() {
            return Err(format!("`{text}`: unexpected text after position {at}"));
        }
        Ok(parsed)
    }
}

fn parse(text: &[char], at: &mut usize) -> Result<IntTuple, String> {
    match text.get(*at) {
        Some('(') => {
            *at += 1;
            let mut modes = Vec::new();
            loop {
                modes.push(parse(text, at)?);
                match text.get(*at) {
                    Some(',') => *at += 1,
                    Some(')') => {
                        *at += 1;
                        return Ok(IntTuple::Tuple(modes));
                    }
                    _ => return Err(format!("expected `,` or `)` at position {at}")),
                }
            }
        }
        Some(c) if c.is_ascii_digit() || *c == '-' => {
            let start = *at;
            *at += 1;
            while text.get(*at).is_some_and(|c| c.is_ascii_digit()) {
                *at += 1;
            }
            let digits: String = text[start..*at].iter().collect();
            digits
                .parse()
                .map(IntTuple::Int)
                .map_err(|e| format!("`{digits}`: {e}"))
        }
        _ => Err(format!("expected an integer or `(` at position {at}")),
    }
}
