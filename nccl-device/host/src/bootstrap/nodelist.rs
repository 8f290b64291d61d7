//! Slurm's compressed host lists (`SLURM_JOB_NODELIST=gpu[01-04,07],login1`): the first
//! host is where task 0 runs under Slurm's default block distribution, so it is the
//! natural `MASTER_ADDR` of a job started by `srun`.
//!
//! Hand-written rather than `hostlist-parser`: only the first host is needed, which takes
//! twenty lines, while that crate expands the whole list (thousands of hosts on a large
//! job) and brings `nom` and four other crates, 11.6 s to build in a fresh project.

/// The first host of a Slurm host list, `None` for an empty or malformed list.
///
/// Each bracket group contributes its first item, zero padding kept:
/// `gpu[01-04,07]` → `gpu01`, `rack[1-2]-n[3,5]` → `rack1-n3`, `login1,gpu[2-3]` → `login1`.
pub fn first_host(list: &str) -> Option<String> {
    let mut host = String::new();
    let mut chars = list.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            // A comma outside brackets ends the first host.
            ',' => break,
            '[' => {
                let group: String = chars.by_ref().take_while(|&c| c != ']').collect();
                let first = group.split(',').next()?.split('-').next()?.trim();
                if first.is_empty() || !first.chars().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                host.push_str(first);
            }
            ']' => return None,
            c => host.push(c),
        }
    }
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::first_host;

    #[test]
    fn the_first_host_of_each_form() {
        assert_eq!(first_host("node7").as_deref(), Some("node7"));
        assert_eq!(first_host("gpu[01-04,07]").as_deref(), Some("gpu01"));
        assert_eq!(first_host("gpu[3,1]").as_deref(), Some("gpu3"));
        assert_eq!(first_host("login1,gpu[2-3]").as_deref(), Some("login1"));
        assert_eq!(first_host("rack[1-2]-n[3,5]").as_deref(), Some("rack1-n3"));
        assert_eq!(
            first_host(" a-b.example[009-010] ").as_deref(),
            Some("a-b.example009")
        );
        for bad in ["", "gpu[]", "gpu[a-b]", "gpu]1", "[", ","] {
            assert_eq!(first_host(bad), None, "{bad:?}");
        }
    }
}
