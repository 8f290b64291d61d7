//! CuTe's layout algebra, on the host: [`Layout`]s (a shape and a stride, hierarchical)
//! with coalesce, composition, complement, the divides and the logical product, and
//! coordinate ↔ index, exactly as CuTe defines them (its `02_layout_algebra` document's
//! examples are this module's tests).
//!
//! A layout maps a coordinate to an index: `(4,6):(1,4)` maps `(i, j)` to `i + 4 j`, and a
//! linear coordinate `k` to the coordinate its colexicographic order gives (the first mode
//! fastest). The algebra composes them into the tilings and partitions kernels use, at
//! specialisation time: the result is a constant of the kernel, not arithmetic in it.
//!
//! ```
//! use cudajit::tensor::layout::algebra::Layout;
//!
//! // A 4 × 6 column-major matrix split into 2 × 3 tiles: each tile's elements, then the tiles.
//! let matrix: Layout = "(4,6):(1,4)".parse().unwrap();
//! let tiles = matrix.zipped_divide(&["2:1".parse().unwrap(), "3:1".parse().unwrap()]).unwrap();
//! assert_eq!(tiles.to_string(), "((2,3),(2,2)):((1,4),(2,12))");
//! // Element (1, 2) of tile (1, 0) is matrix element (3, 2), at index 3 + 4 · 2.
//! assert_eq!(tiles.index_of(&"((1,2),(1,0))".parse().unwrap()), 11);
//! ```

mod int_tuple;

use core::fmt;

pub use int_tuple::IntTuple;

/// A shape and a stride of the same tree: `(4,6):(1,4)`, `((2,2),3):((24,2),8)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: IntTuple,
    stride: IntTuple,
}

/// A layout operation that CuTe's algebra does not define for its arguments (a stride or
/// shape that does not divide, a shape and stride of different trees), naming them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError(String);

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LayoutError {}

type Result<T> = core::result::Result<T, LayoutError>;

fn error<T>(message: String) -> Result<T> {
    Err(LayoutError(message))
}

/// A shape whose extents are all at least 1 (a 0 or negative extent has no coordinates
/// the algebra can divide by).
fn check_extents(shape: &IntTuple) -> Result<()> {
    match shape.flatten().into_iter().find(|&s| s < 1) {
        Some(s) => error(format!(
            "the shape {shape} has the extent {s}: extents are at least 1"
        )),
        None => Ok(()),
    }
}

/// A mode that extends without end: the last mode of a composition's left side.
const UNBOUNDED: i64 = i64::MAX;

impl Layout {
    /// `shape:stride`; the two must have the same tree, and every extent of the shape is
    /// at least 1.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout> {
        if !shape.congruent(&stride) {
            return error(format!(
                "the shape {shape} and the stride {stride} are not congruent"
            ));
        }
        check_extents(&shape)?;
        Ok(Layout { shape, stride })
    }

    /// The compact column-major layout of `shape` (CuTe's `make_layout(shape)`): strides
    /// the running products, first mode fastest. Every extent of the shape is at least 1.
    pub fn column_major(shape: IntTuple) -> Result<Layout> {
        check_extents(&shape)?;
        fn strides(shape: &IntTuple, next: &mut i64) -> IntTuple {
            match shape {
                IntTuple::Int(s) => {
                    let d = *next;
                    *next *= s;
                    IntTuple::Int(d)
                }
                IntTuple::Tuple(modes) => {
                    IntTuple::Tuple(modes.iter().map(|m| strides(m, next)).collect())
                }
            }
        }
        let stride = strides(&shape, &mut 1);
        Ok(Layout { shape, stride })
    }

    /// The layout of flat `(shape, stride)` modes: one integral mode, or a tuple.
    fn of_flat(modes: &[(i64, i64)]) -> Layout {
        match modes {
            [] => Layout {
                shape: IntTuple::Int(1),
                stride: IntTuple::Int(0),
            },
            [(s, d)] => Layout {
                shape: IntTuple::Int(*s),
                stride: IntTuple::Int(*d),
            },
            _ => Layout {
                shape: IntTuple::Tuple(modes.iter().map(|(s, _)| IntTuple::Int(*s)).collect()),
                stride: IntTuple::Tuple(modes.iter().map(|(_, d)| IntTuple::Int(*d)).collect()),
            },
        }
    }

    /// The layout whose modes are `modes` (CuTe's `make_layout(a, b, ..)`); one mode is
    /// itself.
    pub fn concat(modes: &[Layout]) -> Layout {
        match modes {
            [one] => one.clone(),
            _ => Layout {
                shape: IntTuple::Tuple(modes.iter().map(|m| m.shape.clone()).collect()),
                stride: IntTuple::Tuple(modes.iter().map(|m| m.stride.clone()).collect()),
            },
        }
    }

    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// The number of coordinates: the product of the shape.
    pub fn size(&self) -> i64 {
        self.shape.product()
    }

    /// The number of top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Top-level mode `i` as a layout.
    ///
    /// # Panics
    /// If `i` is not below [`Self::rank`], as indexing past a slice's end does.
    pub fn mode(&self, i: usize) -> Layout {
        Layout {
            shape: self.shape.mode(i).clone(),
            stride: self.stride.mode(i).clone(),
        }
    }

    /// The top-level modes as layouts.
    pub fn modes(&self) -> Vec<Layout> {
        (0..self.rank()).map(|i| self.mode(i)).collect()
    }

    /// One past the largest index the layout maps to (0 for an empty layout).
    pub fn cosize(&self) -> i64 {
        let size = self.size();
        if size == 0 {
            return 0;
        }
        self.flat()
            .iter()
            .map(|(s, d)| (s - 1) * d.abs())
            .sum::<i64>()
            + 1
    }

    /// The flat `(shape, stride)` modes, depth first.
    fn flat(&self) -> Vec<(i64, i64)> {
        self.shape
            .flatten()
            .into_iter()
            .zip(self.stride.flatten())
            .collect()
    }

    /// The index of linear coordinate `k` (colexicographic: the first mode fastest). As in
    /// CuTe, a `k` past the size continues along the last mode.
    pub fn call(&self, k: i64) -> i64 {
        let flat = self.flat();
        let mut rest = k;
        let mut index = 0;
        for (position, (s, d)) in flat.iter().enumerate() {
            if position + 1 == flat.len() {
                index += rest * d;
            } else {
                index += (rest % s) * d;
                rest /= s;
            }
        }
        index
    }

    /// The index of a coordinate: hierarchical (`((1,2),(1,0))`), or an integer for a mode
    /// as a whole (split colexicographically over the mode's shape).
    pub fn index_of(&self, coordinate: &IntTuple) -> i64 {
        match (coordinate, &self.shape) {
            (IntTuple::Int(k), _) => self.call(*k),
            (IntTuple::Tuple(parts), IntTuple::Tuple(_)) => parts
                .iter()
                .enumerate()
                .map(|(i, part)| self.mode(i).index_of(part))
                .sum(),
            (IntTuple::Tuple(parts), IntTuple::Int(_)) => {
                parts.first().map_or(0, |part| self.index_of(part))
            }
        }
    }

    /// The natural coordinate of linear coordinate `k`: one integer per integral mode of the
    /// shape, in the shape's tree.
    pub fn coordinate_of(&self, k: i64) -> IntTuple {
        fn split(shape: &IntTuple, rest: &mut i64) -> IntTuple {
            match shape {
                IntTuple::Int(s) => {
                    let c = *rest % s;
                    *rest /= s;
                    IntTuple::Int(c)
                }
                IntTuple::Tuple(modes) => {
                    IntTuple::Tuple(modes.iter().map(|m| split(m, rest)).collect())
                }
            }
        }
        split(&self.shape, &mut k.clone())
    }

    /// The same function with the fewest modes: unit modes dropped, and a mode merged into
    /// the one before when it continues it (`(2,(1,6)):(1,(6,2))` is `12:1`).
    pub fn coalesce(&self) -> Layout {
        let mut modes: Vec<(i64, i64)> = Vec::new();
        for (s, d) in self.flat() {
            if s == 1 {
                continue;
            }
            match modes.last_mut() {
                Some((ls, ld)) if *ld * *ls == d => *ls *= s,
                _ => modes.push((s, d)),
            }
        }
        Layout::of_flat(&modes)
    }

    /// `self ∘ other`: the layout `c ↦ self(other(c))`, of `other`'s shape (each of its
    /// modes composed on its own, so the result keeps `other`'s tree).
    pub fn compose(&self, other: &Layout) -> Result<Layout> {
        if let (IntTuple::Tuple(_), IntTuple::Tuple(_)) = (&other.shape, &other.stride) {
            let modes = other
                .modes()
                .iter()
                .map(|mode| self.compose(mode))
                .collect::<Result<Vec<_>>>()?;
            return Ok(Layout {
                shape: IntTuple::Tuple(modes.iter().map(|m| m.shape.clone()).collect()),
                stride: IntTuple::Tuple(modes.iter().map(|m| m.stride.clone()).collect()),
            });
        }
        let (IntTuple::Int(size), IntTuple::Int(step)) = (&other.shape, &other.stride) else {
            return error(format!("{other} is not a layout"));
        };
        self.compose_mode(*size, *step)
    }

    /// `self ∘ (size:step)`: every `step`-th index of `self`'s domain, `size` of them.
    fn compose_mode(&self, size: i64, step: i64) -> Result<Layout> {
        if size == 1 {
            return Ok(Layout::of_flat(&[(1, 0)]));
        }
        if step == 0 {
            return Ok(Layout::of_flat(&[(size, 0)]));
        }
        let lhs = self.coalesce().flat();
        // Divide out the step: skip the first modes it covers, start the next at it.
        let mut rest_step = step;
        let mut strided: Vec<(i64, i64)> = Vec::new();
        for (position, &(s, d)) in lhs.iter().enumerate() {
            if position + 1 == lhs.len() {
                strided.push((UNBOUNDED, d * rest_step));
                break;
            }
            if rest_step == 1 {
                strided.push((s, d));
            } else if rest_step <= s {
                if s % rest_step != 0 {
                    return error(format!(
                        "{self} ∘ {size}:{step}: the stride {step} does not divide the shape {s} (CuTe's stride divisibility condition)"
                    ));
                }
                strided.push((s / rest_step, d * rest_step));
                rest_step = 1;
            } else {
                if rest_step % s != 0 {
                    return error(format!(
                        "{self} ∘ {size}:{step}: the shape {s} does not divide the stride {step} (CuTe's stride divisibility condition)"
                    ));
                }
                rest_step /= s;
            }
        }
        // Keep the first `size` of what is left.
        let mut rest_size = size;
        let mut modes: Vec<(i64, i64)> = Vec::new();
        for (s, d) in strided {
            if rest_size == 1 {
                break;
            }
            if s == UNBOUNDED {
                modes.push((rest_size, d));
                rest_size = 1;
            } else if s == 1 {
                continue;
            } else if rest_size <= s {
                if s % rest_size != 0 {
                    return error(format!(
                        "{self} ∘ {size}:{step}: {rest_size} does not divide the shape {s} (CuTe's shape divisibility condition)"
                    ));
                }
                modes.push((rest_size, d));
                rest_size = 1;
            } else {
                if rest_size % s != 0 {
                    return error(format!(
                        "{self} ∘ {size}:{step}: the shape {s} does not divide {rest_size} (CuTe's shape divisibility condition)"
                    ));
                }
                modes.push((s, d));
                rest_size /= s;
            }
        }
        Ok(Layout::of_flat(&modes))
    }

    /// The layout of the indices below `bound` that `self` does not reach, ordered so that
    /// `(self, complement)` is a bijection onto them (CuTe's `complement(self, bound)`).
    pub fn complement(&self, bound: i64) -> Result<Layout> {
        if bound < 1 {
            return error(format!(
                "complement of {self}: the bound {bound} is not positive"
            ));
        }
        let mut modes: Vec<(i64, i64)> = self
            .flat()
            .into_iter()
            .filter(|&(s, d)| s != 1 && d != 0)
            .collect();
        modes.sort_by_key(|&(s, d)| (d, s));
        let mut current = 1;
        let mut out = Vec::new();
        for (s, d) in modes {
            if d % current != 0 {
                return error(format!(
                    "complement of {self}: the stride {d} is not a multiple of {current}, so the modes overlap"
                ));
            }
            out.push((d / current, current));
            current = s * d;
        }
        out.push(((bound + current - 1) / current, current));
        Ok(Layout::of_flat(&out).coalesce())
    }

    /// `self` split by the tile `tiler`: `(tile, rest)`, the tile's elements in its mode 0
    /// and the tiles in mode 1 (CuTe's `logical_divide`).
    pub fn logical_divide(&self, tiler: &Layout) -> Result<Layout> {
        let rest = tiler.complement(self.size())?;
        self.compose(&Layout::concat(&[tiler.clone(), rest]))
    }

    /// [`Self::logical_divide`] of each mode by its own tiler (`tilers[i]` for mode `i`;
    /// modes past the tilers unchanged).
    pub fn logical_divide_by_mode(&self, tilers: &[Layout]) -> Result<Layout> {
        self.divided_modes(tilers)
            .map(|modes| Layout::concat(&modes))
    }

    fn divided_modes(&self, tilers: &[Layout]) -> Result<Vec<Layout>> {
        if tilers.len() > self.rank() {
            return error(format!(
                "{self} has {} modes, {} tilers given",
                self.rank(),
                tilers.len()
            ));
        }
        let mut modes = Vec::new();
        for (i, mode) in self.modes().into_iter().enumerate() {
            modes.push(match tilers.get(i) {
                Some(tiler) => mode.logical_divide(tiler)?,
                None => mode,
            });
        }
        Ok(modes)
    }

    /// The tiles and what is left of each mode, as `(tiles, rests)`:
    /// `((tile_0, tile_1, ..), (rest_0, rest_1, .., untiled modes))` (CuTe's
    /// `zipped_divide`).
    pub fn zipped_divide(&self, tilers: &[Layout]) -> Result<Layout> {
        let (tiles, rests) = self.tiles_and_rests(tilers)?;
        Ok(Layout::concat(&[
            Layout::concat(&tiles),
            Layout::concat(&rests),
        ]))
    }

    /// `((tile_0, tile_1, ..), rest_0, rest_1, ..)` (CuTe's `tiled_divide`).
    pub fn tiled_divide(&self, tilers: &[Layout]) -> Result<Layout> {
        let (tiles, rests) = self.tiles_and_rests(tilers)?;
        let mut modes = vec![Layout::concat(&tiles)];
        modes.extend(rests);
        Ok(Layout::concat(&modes))
    }

    /// `(tile_0, tile_1, .., rest_0, rest_1, ..)` (CuTe's `flat_divide`).
    pub fn flat_divide(&self, tilers: &[Layout]) -> Result<Layout> {
        let (mut tiles, rests) = self.tiles_and_rests(tilers)?;
        tiles.extend(rests);
        Ok(Layout::concat(&tiles))
    }

    fn tiles_and_rests(&self, tilers: &[Layout]) -> Result<(Vec<Layout>, Vec<Layout>)> {
        let divided = self.divided_modes(tilers)?;
        let mut tiles = Vec::new();
        let mut rests = Vec::new();
        for (i, mode) in divided.into_iter().enumerate() {
            if i < tilers.len() {
                tiles.push(mode.mode(0));
                rests.push(mode.mode(1));
            } else {
                rests.push(mode);
            }
        }
        Ok((tiles, rests))
    }

    /// `self` repeated by `other`: `(self, rest ∘ other)` with `rest` the complement of
    /// `self` in `size(self) · cosize(other)` (CuTe's `logical_product`).
    pub fn logical_product(&self, other: &Layout) -> Result<Layout> {
        let rest = self.complement(self.size() * other.cosize())?;
        Ok(Layout::concat(&[self.clone(), rest.compose(other)?]))
    }
}

impl fmt::Display for Layout {
    /// CuTe's notation, `shape:stride`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

impl core::str::FromStr for Layout {
    type Err = LayoutError;

    /// `(4,6):(1,4)`, as CuTe prints it.
    fn from_str(text: &str) -> Result<Layout> {
        let Some((shape, stride)) = text.split_once(':') else {
            return error(format!("`{text}` is not `shape:stride`"));
        };
        let shape: IntTuple = shape.parse().map_err(LayoutError)?;
        let stride: IntTuple = stride.parse().map_err(LayoutError)?;
        Layout::new(shape, stride)
    }
}

#[cfg(test)]
mod tests;
