//! Reports: the text table, the CSV and the SVG plot of the rows.

use std::fmt::Write as _;

use super::{svg, Collective, Row};

pub(crate) fn table(rows: &[Row], n: usize) -> String {
    let mut s = String::new();
    for collective in Collective::ALL {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| r.collective == collective && r.time_us.is_some())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "\n{} ({} ranks, {}): latency us / bus bandwidth GB/s",
            collective.name(),
            n,
            mine[0].dtype
        );
        let mut names: Vec<&str> = Vec::new();
        for r in &mine {
            if !names.contains(&r.contender.as_str()) {
                names.push(&r.contender);
            }
        }
        let _ = write!(s, "{:>10}", "bytes");
        for name in &names {
            let _ = write!(s, " | {name:>24}");
        }
        s.push('\n');
        let mut sizes: Vec<usize> = mine.iter().map(|r| r.bytes).collect();
        sizes.dedup();
        for bytes in sizes {
            let _ = write!(s, "{:>10}", svg::bytes_label(bytes as f64));
            for name in &names {
                match mine
                    .iter()
                    .find(|r| r.bytes == bytes && r.contender == *name)
                {
                    Some(r) => {
                        let flag = if r.correct == Some(false) { "!" } else { " " };
                        let _ = write!(
                            s,
                            " | {:>11.2} {:>10.1}{flag}",
                            r.time_us.unwrap_or(f64::NAN),
                            r.busbw(n).unwrap_or(f64::NAN)
                        );
                    }
                    None => {
                        let _ = write!(s, " | {:>24}", "-");
                    }
                }
            }
            s.push('\n');
        }
    }
    s.push_str("(! = wrong result)\n");
    s
}

pub(crate) fn csv(rows: &[Row], n: usize) -> String {
    let mut s = String::from(
        "collective,contender,dtype,ranks,bytes,count,time_us,algbw_gbps,busbw_gbps,checked\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for r in rows {
        let checked = match r.correct {
            Some(true) => "ok",
            Some(false) => "WRONG",
            None => "",
        };
        let _ = writeln!(
            s,
            "{},{},{},{n},{},{},{},{},{},{checked}",
            r.collective.name(),
            r.contender,
            r.dtype,
            r.bytes,
            r.count,
            opt(r.time_us),
            opt(r.algbw()),
            opt(r.busbw(n)),
        );
    }
    s
}

pub(crate) fn plot(rows: &[Row], n: usize, title: &str) -> String {
    let mut charts = Vec::new();
    for collective in Collective::ALL {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| r.collective == collective && r.time_us.is_some())
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for r in &mine {
            if !names.contains(&r.contender.as_str()) {
                names.push(&r.contender);
            }
        }
        let series = |value: &dyn Fn(&Row) -> Option<f64>| -> Vec<svg::Series> {
            names
                .iter()
                .map(|name| svg::Series {
                    name: (*name).to_owned(),
                    points: mine
                        .iter()
                        .filter(|r| r.contender == *name)
                        .filter_map(|r| value(r).map(|v| (r.bytes as f64, v)))
                        .collect(),
                })
                .collect()
        };
        charts.push(svg::Chart {
            title: format!("{}: bus bandwidth", collective.name()),
            y_label: "GB/s".into(),
            log_y: false,
            series: series(&|r| r.busbw(n)),
        });
        charts.push(svg::Chart {
            title: format!("{}: latency", collective.name()),
            y_label: "microseconds".into(),
            log_y: true,
            series: series(&|r| r.time_us),
        });
    }
    svg::render(title, &charts, 2)
}
