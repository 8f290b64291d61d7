//! A plan's runs as the kernels' tables ([`super::kernels`]), for each rank: the pull
//! tables of both execution forms and the pack tables of the staged one, with the
//! staging bytes each source needs.

use super::kernels::{PACK_WORDS, PULL_WORDS, SOURCE_WORDS};
use super::plan::ReshardPlan;

/// Staged runs start at 16-byte boundaries of the staging window, so that a run whose
/// destination is aligned moves in vectors.
const STAGING_ALIGN: usize = 16;

/// Every rank's tables, indexed by communicator rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tables {
    /// The pull from the staging windows.
    pub(crate) staged_pull: Vec<Vec<u64>>,
    /// The pull straight from the sources' own windows.
    pub(crate) window_pull: Vec<Vec<u64>>,
    /// The pack into the staging window.
    pub(crate) pack: Vec<Vec<u64>>,
    /// Bytes of the staging window (the most any rank packs).
    pub(crate) staging_bytes: usize,
}

impl Tables {
    /// The tables of `plan` for a communicator of `nranks` ranks (every mesh rank below).
    pub(crate) fn new(plan: &ReshardPlan, nranks: usize) -> Tables {
        let size = plan.source().dtype().size();
        let mut cursor = vec![0usize; nranks];
        let mut pack_runs: Vec<Vec<[u64; PACK_WORDS]>> = vec![Vec::new(); nranks];
        // Per destination: its runs, and each form's sources.
        let mut runs: Vec<Vec<[u64; 3]>> = vec![Vec::new(); nranks];
        let mut staged_sources: Vec<Vec<[u64; SOURCE_WORDS]>> = vec![Vec::new(); nranks];
        let mut window_sources: Vec<Vec<[u64; SOURCE_WORDS]>> = vec![Vec::new(); nranks];
        for run in plan.runs() {
            let d = run.destination;
            let bytes = run.len * size;
            runs[d].push([
                (run.destination_offset * size) as u64,
                bytes as u64,
                run.sources.len() as u64,
            ]);
            for &s in &run.sources {
                let at = cursor[s].next_multiple_of(STAGING_ALIGN);
                pack_runs[s].push([(run.source_offset * size) as u64, at as u64, bytes as u64]);
                cursor[s] = at + bytes;
                staged_sources[d].push([s as u64, at as u64]);
                window_sources[d].push([s as u64, (run.source_offset * size) as u64]);
            }
        }
        let pull = |sources: &[Vec<[u64; SOURCE_WORDS]>]| -> Vec<Vec<u64>> {
            (0..nranks)
                .map(|d| {
                    let mut t = vec![runs[d].len() as u64, sources[d].len() as u64];
                    let mut first = 0u64;
                    for r in &runs[d] {
                        t.extend_from_slice(&[r[0], r[1], r[2], first]);
                        first += r[2];
                    }
                    t.extend(sources[d].iter().flatten());
                    debug_assert_eq!(
                        t.len(),
                        2 + runs[d].len() * PULL_WORDS + sources[d].len() * SOURCE_WORDS
                    );
                    t
                })
                .collect()
        };
        let pack = pack_runs
            .iter()
            .map(|p| {
                let mut t = vec![p.len() as u64];
                t.extend(p.iter().flatten());
                t
            })
            .collect();
        Tables {
            staged_pull: pull(&staged_sources),
            window_pull: pull(&window_sources),
            pack,
            staging_bytes: cursor.iter().copied().max().unwrap_or(0),
        }
    }

    /// The words of the longest table of `tables`: the symmetric window's length.
    pub(crate) fn longest(tables: &[Vec<u64>]) -> usize {
        tables.iter().map(Vec::len).max().unwrap_or(1)
    }
}
