//! Accumulators by (row, column), for epilogues: which lane and element of a 16×8
//! accumulator hold element (row, column) of the tile, and back.
//!
//! Element `e` (0–3) of lane `l` is (`l / 4 + 8 (e / 2)`, `2 (l % 4) + e % 2`) — for
//! [`AccF32`] and [`AccS32`] element `e` is field `c{e}`; for [`AccF16`] it is half `e % 2`
//! of register `c{e / 2}`. Both directions are plain arithmetic, the same on every lane.

use super::fragments::{AccF16, AccF32, AccS32};
use cudajit::device;
use cudajit_core::device::{lane_id, shfl_idx_sync, FULL_WARP};

/// An f32 accumulator of zeros.
#[device]
pub fn acc_zero() -> AccF32 {
    AccF32 {
        c0: 0.0,
        c1: 0.0,
        c2: 0.0,
        c3: 0.0,
    }
}

/// An f16 accumulator of zeros.
#[device]
pub fn acc_f16_zero() -> AccF16 {
    AccF16 { c0: 0, c1: 0 }
}

/// An s32 accumulator of zeros.
#[device]
pub fn acc_s32_zero() -> AccS32 {
    AccS32 {
        c0: 0,
        c1: 0,
        c2: 0,
        c3: 0,
    }
}

/// The (row, column) of element `element` (0–3) of lane `lane`'s accumulator.
#[device]
pub fn acc_position(lane: u32, element: u32) -> (u32, u32) {
    (lane / 4 + 8 * (element / 2), 2 * (lane % 4) + element % 2)
}

/// The (lane, element) holding (row, column) of a 16×8 accumulator: the inverse of
/// [`acc_position`].
#[device]
pub fn acc_owner(row: u32, column: u32) -> (u32, u32) {
    (4 * (row % 8) + column / 2, 2 * (row / 8) + column % 2)
}

#[device]
impl AccF32 {
    /// This lane's element `element` (0–3: `c0` .. `c3`).
    pub fn element(&self, element: u32) -> f32 {
        match element {
            0 => self.c0,
            1 => self.c1,
            2 => self.c2,
            _ => self.c3,
        }
    }

    /// Replaces this lane's element `element` (0–3).
    pub fn set_element(&mut self, element: u32, value: f32) {
        match element {
            0 => self.c0 = value,
            1 => self.c1 = value,
            2 => self.c2 = value,
            _ => self.c3 = value,
        }
    }

    /// Element (row, column) of the warp's 16×8 tile, whichever lane holds it. Warp-
    /// collective (every lane calls it, each with its own (row, column)): four shuffles
    /// bring the owner's four elements and the owner's element number picks one.
    pub fn get(&self, row: u32, column: u32) -> f32 {
        let (lane, element) = acc_owner(row, column);
        let e0 = shfl_idx_sync(FULL_WARP, self.c0, lane);
        let e1 = shfl_idx_sync(FULL_WARP, self.c1, lane);
        let e2 = shfl_idx_sync(FULL_WARP, self.c2, lane);
        let e3 = shfl_idx_sync(FULL_WARP, self.c3, lane);
        match element {
            0 => e0,
            1 => e1,
            2 => e2,
            _ => e3,
        }
    }

    /// Sets element (row, column) of the tile to `value` on the lane that holds it; on
    /// the other lanes nothing changes.
    pub fn set(&mut self, row: u32, column: u32, value: f32) {
        let (lane, element) = acc_owner(row, column);
        if lane == lane_id() {
            self.set_element(element, value);
        }
    }
}

#[device]
impl AccS32 {
    /// This lane's element `element` (0–3: `c0` .. `c3`).
    pub fn element(&self, element: u32) -> i32 {
        match element {
            0 => self.c0,
            1 => self.c1,
            2 => self.c2,
            _ => self.c3,
        }
    }

    /// Replaces this lane's element `element` (0–3).
    pub fn set_element(&mut self, element: u32, value: i32) {
        match element {
            0 => self.c0 = value,
            1 => self.c1 = value,
            2 => self.c2 = value,
            _ => self.c3 = value,
        }
    }

    /// Element (row, column) of the warp's 16×8 tile, whichever lane holds it; warp-
    /// collective, as [`AccF32::get`].
    pub fn get(&self, row: u32, column: u32) -> i32 {
        let (lane, element) = acc_owner(row, column);
        let e0 = shfl_idx_sync(FULL_WARP, self.c0, lane);
        let e1 = shfl_idx_sync(FULL_WARP, self.c1, lane);
        let e2 = shfl_idx_sync(FULL_WARP, self.c2, lane);
        let e3 = shfl_idx_sync(FULL_WARP, self.c3, lane);
        match element {
            0 => e0,
            1 => e1,
            2 => e2,
            _ => e3,
        }
    }

    /// Sets element (row, column) to `value` on the lane that holds it.
    pub fn set(&mut self, row: u32, column: u32, value: i32) {
        let (lane, element) = acc_owner(row, column);
        if lane == lane_id() {
            self.set_element(element, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_owners_are_inverse_and_cover_the_tile() {
        let mut seen = [[false; 8]; 16];
        for lane in 0..32 {
            for element in 0..4 {
                let (row, column) = acc_position(lane, element);
                assert!(!seen[row as usize][column as usize]);
                seen[row as usize][column as usize] = true;
                assert_eq!(acc_owner(row, column), (lane, element));
            }
        }
        // The PTX ISA's table: lane 5 (g 1, t 1) holds (1, 2), (1, 3), (9, 2), (9, 3).
        let lane5: Vec<_> = (0..4).map(|e| acc_position(5, e)).collect();
        assert_eq!(lane5, [(1, 2), (1, 3), (9, 2), (9, 3)]);
    }
}
