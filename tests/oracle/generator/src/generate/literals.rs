//! Types and literals: the scalar types the generator picks and literals of each.

use super::*;

impl Generator {
    pub(super) fn scalar_ty(&mut self) -> Ty {
        *self.rng.pick(&Ty::ALL)
    }

    pub(super) fn number_ty(&mut self) -> Ty {
        if self.rng.chance(70) {
            *self.rng.pick(&Ty::INTS)
        } else {
            *self.rng.pick(&Ty::FLOATS)
        }
    }

    pub fn literal(&mut self, ty: Ty) -> Expr {
        let text = match ty {
            Ty::Bool => if self.rng.chance(50) { "true" } else { "false" }.to_owned(),
            Ty::F32 | Ty::F64 => {
                let values = [
                    "0.0", "-0.0", "1.0", "-1.0", "0.5", "2.25", "-3.75", "1.0e3", "1.5e-3", "0.1",
                    "-7.3", "65504.0", "1.0e30", "3.4e38",
                ];
                let v = if self.rng.chance(25) {
                    let k = self.rng.below(2001);
                    let sign = if self.rng.chance(50) { "-" } else { "" };
                    format!("{sign}{}.{}", k / 10, k % 10)
                } else {
                    (*self.rng.pick(&values)).to_owned()
                };
                if v.starts_with('-') {
                    format!("({v}{})", ty.name())
                } else {
                    format!("{v}{}", ty.name())
                }
            }
            _ => {
                let bits = ty.bits();
                let choice = self.rng.below(10);
                if choice == 0 {
                    format!("{}::MAX", ty.name())
                } else if choice == 1 {
                    format!("{}::MIN", ty.name())
                } else {
                    let raw = match choice {
                        2..=5 => self.rng.below(17) as i128 - if ty.is_signed() { 8 } else { 0 },
                        _ => {
                            let v = self.rng.next_u64() as u128 & ((1u128 << bits) - 1);
                            if ty.is_signed() && v >> (bits - 1) == 1 {
                                v as i128 - (1i128 << bits)
                            } else {
                                v as i128
                            }
                        }
                    };
                    if raw < 0 {
                        format!("({raw}{})", ty.name())
                    } else {
                        format!("{raw}{}", ty.name())
                    }
                }
            }
        };
        Expr::Lit { ty, text }
    }
}
