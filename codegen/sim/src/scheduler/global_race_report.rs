//! The message of a data race on global memory: both threads (with their blocks when they
//! differ), both lines, and the element by its parameter's name, as a shared-memory race
//! names its variable.

use super::{fmt3, BlockRunner};
use crate::global_races::GlobalRaceReport;
use crate::thread::Site;

impl BlockRunner<'_, '_, '_> {
    /// What thread `t` of this block did, and which earlier access it races with.
    pub(super) fn global_race_detail(&self, t: usize, race: &GlobalRaceReport) -> String {
        let slice = self
            .grid
            .global_races
            .and_then(|races| races.slice(race.region));
        let what = match slice {
            Some(slice) => match race.offset.checked_sub(slice.base) {
                Some(from) => {
                    let elem = u64::from(slice.elem.max(1));
                    let (index, byte) = (from / elem, from % elem);
                    if byte == 0 {
                        format!("`{}`[{index}]", slice.name)
                    } else {
                        format!("byte {byte} of `{}`[{index}]", slice.name)
                    }
                }
                None => format!("byte {} of `{}`'s buffer", race.offset, slice.name),
            },
            None => format!("byte {} of {}", race.offset, self.region_name(race.region)),
        };
        let verb = if race.second_write { "writes" } else { "reads" };
        let earlier = if race.first_write { "wrote" } else { "read" };
        let at = self.location(Site::unpack(race.first_site));
        let first_thread = fmt3(self.thread_index(race.first_thread as usize));
        let me = fmt3(self.thread_index(t));
        if race.first_block == self.clocks.block {
            format!(
                "thread {me} {verb} {what} here, but thread {first_thread} {earlier} it at {at} with no sync_threads() between"
            )
        } else {
            let first_block = fmt3(self.block_coordinates(race.first_block as usize));
            format!(
                "thread {me} of block {} {verb} {what} here, but thread {first_thread} of block {first_block} {earlier} it at {at}, and nothing orders the two blocks' accesses: blocks are ordered only by a grid_sync() (a cooperative launch), a barrier.cluster of their cluster, or a fence before an atomic that the other block's atomic then reads; a value several blocks update needs an atomic (atomic_add, ..)",
                fmt3(self.block_index)
            )
        }
    }
}
