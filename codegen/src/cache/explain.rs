//! Why a lookup missed: the new key's components against those of the cached entries of
//! the same kernel.
//!
//! Each entry records its key's components (tag and short value, see
//! [`super::key::KeyComponent`]). On a miss the entry of the same kernel that differs in
//! the fewest components is taken as "the previous build", and each differing component
//! is named: `new arch sm_80 (cached: sm_90)`, `kernel source changed`, `toolchain
//! changed: nvJitLink 13.0.88 -> 13.1.0`... Reading the entries' metadata costs a directory
//! walk, so it is only done when debug logging is on.

use super::entry::EntryMeta;
use super::key::KeyComponent;
use super::store::DiskCache;

/// A sentence saying why `kernel` missed, comparing `components` with the entries of
/// `disk` (`None`: no disk cache, so every process compiles).
pub fn explain_miss(disk: Option<&DiskCache>, kernel: &str, components: &[KeyComponent]) -> String {
    let Some(disk) = disk else {
        return "first compile in this process (the disk cache is off)".to_owned();
    };
    let cached: Vec<EntryMeta> = disk
        .entries()
        .into_iter()
        .filter_map(|listing| listing.meta.ok())
        .map(|(_, meta)| meta)
        .filter(|meta| meta.kernel == kernel)
        .collect();
    explain_against(&cached, components)
}

/// [`explain_miss`] against given entries.
pub fn explain_against(cached: &[EntryMeta], components: &[KeyComponent]) -> String {
    let closest = cached
        .iter()
        .map(|meta| differences(&meta.components, components))
        .min_by_key(Vec::len);
    match closest {
        None => "no cached entry of this kernel (first compile with this cache)".to_owned(),
        Some(diffs) if diffs.is_empty() => {
            "its entry was unusable (damaged, foreign or being replaced: see above)".to_owned()
        }
        Some(diffs) => diffs.join("; "),
    }
}

/// Descriptions of each component that differs between `old` and `new`.
fn differences(old: &[KeyComponent], new: &[KeyComponent]) -> Vec<String> {
    // A tag may repeat (one `device-function` per function reached): compare all values.
    let value = |list: &[KeyComponent], tag: &str| {
        let values: Vec<&str> = list
            .iter()
            .filter(|c| c.tag == tag)
            .map(|c| c.value.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    };
    let mut tags: Vec<&str> = new.iter().map(|c| c.tag.as_str()).collect();
    for c in old {
        if !tags.contains(&c.tag.as_str()) {
            tags.push(&c.tag);
        }
    }
    let arch_changed = value(old, "arch") != value(new, "arch");
    tags.into_iter()
        .filter_map(|tag| {
            let (was, now) = (value(old, tag), value(new, tag));
            // Options naming the architecture change with it: the arch says it all.
            let implied = arch_changed
                && tag.ends_with("options")
                && was.as_deref().map(without_arch) == now.as_deref().map(without_arch);
            (was != now && !implied).then(|| describe(tag, was.as_deref(), now.as_deref()))
        })
        .collect()
}

/// `-arch=sm_90 -lto` → `-arch=sm_ -lto`.
fn without_arch(options: &str) -> String {
    let mut out = String::new();
    let mut digits_follow = false;
    for c in options.chars() {
        if digits_follow && c.is_ascii_alphanumeric() {
            continue;
        }
        digits_follow = false;
        out.push(c);
        if out.ends_with("sm_") || out.ends_with("compute_") {
            digits_follow = true;
        }
    }
    out
}

fn describe(tag: &str, was: Option<&str>, now: Option<&str>) -> String {
    let was_text = was.unwrap_or("none");
    let now_text = now.unwrap_or("none");
    match tag {
        "arch" => format!("new arch {now_text} (cached: {was_text})"),
        "source" => "kernel source changed (or a device function it calls)".to_owned(),
        "kernel" => format!("other kernel name {now_text}"),
        "device-function" => "a device function it calls changed".to_owned(),
        t if t.starts_with("spec") => {
            format!("new specialisation value {now_text} (cached: {was_text})")
        }
        "libnvvm" | "libdevice" | "nvjitlink" | "toolchain" => {
            format!("toolchain changed: {tag} {was_text} -> {now_text}")
        }
        t if t.starts_with("library") => {
            format!("linked device library {t} changed: {was_text} -> {now_text}")
        }
        "cudajit" => format!("cudajit version changed: {was_text} -> {now_text}"),
        "sources" => "cudajit was rebuilt from other sources (code generator changed)".to_owned(),
        "nvvm-options" | "link-options" => {
            format!("compile options changed ({tag}): {was_text} -> {now_text}")
        }
        "domain" => format!("cache format changed: {was_text} -> {now_text}"),
        _ => format!("{tag} changed: {was_text} -> {now_text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn components(pairs: &[(&str, &str)]) -> Vec<KeyComponent> {
        pairs
            .iter()
            .map(|(t, v)| KeyComponent {
                tag: (*t).into(),
                value: (*v).into(),
            })
            .collect()
    }

    fn entry(pairs: &[(&str, &str)]) -> EntryMeta {
        EntryMeta {
            kernel: "k".into(),
            components: components(pairs),
            ..EntryMeta::default()
        }
    }

    #[test]
    fn names_the_closest_difference() {
        let cached = [
            entry(&[("arch", "sm_90"), ("source", "a"), ("nvjitlink", "13.0.88")]),
            entry(&[("arch", "sm_80"), ("source", "b"), ("nvjitlink", "13.0.88")]),
        ];
        let new = components(&[("arch", "sm_80"), ("source", "a"), ("nvjitlink", "13.0.88")]);
        let why = explain_against(&cached, &new);
        assert!(
            why == "new arch sm_80 (cached: sm_90)" || why.starts_with("kernel source changed"),
            "{why}"
        );
        let new = components(&[("arch", "sm_90"), ("source", "a"), ("nvjitlink", "13.1.0")]);
        assert_eq!(
            explain_against(&cached, &new),
            "toolchain changed: nvjitlink 13.0.88 -> 13.1.0"
        );
        assert!(explain_against(&[], &new).starts_with("no cached entry"));
        let by_arch = [entry(&[
            ("arch", "sm_90"),
            ("link-options", "-arch=sm_90 -lto"),
        ])];
        let new = components(&[("arch", "sm_80"), ("link-options", "-arch=sm_80 -lto")]);
        assert_eq!(
            explain_against(&by_arch, &new),
            "new arch sm_80 (cached: sm_90)"
        );
        let new = components(&[
            ("arch", "sm_90"),
            ("source", "a"),
            ("nvjitlink", "13.0.88"),
            ("spec", "N=8"),
        ]);
        assert_eq!(
            explain_against(&cached, &new),
            "new specialisation value N=8 (cached: none)"
        );
    }
}
