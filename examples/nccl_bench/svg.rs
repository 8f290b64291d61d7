//! A small SVG line-chart writer for the benchmark's plots: panels in a grid, each with
//! a log2 x axis (bytes), a linear or log10 y axis, one polyline per series and a legend.
//! No dependencies: the document is built as a string.

use std::fmt::Write as _;

/// One line of a chart.
pub struct Series {
    pub name: String,
    /// `(x, y)`, x > 0; points with a non-finite or (on a log axis) non-positive y are
    /// left out.
    pub points: Vec<(f64, f64)>,
}

/// One panel.
pub struct Chart {
    pub title: String,
    pub y_label: String,
    pub log_y: bool,
    pub series: Vec<Series>,
}

const PANEL_W: f64 = 560.0;
const PANEL_H: f64 = 360.0;
const MARGIN_L: f64 = 70.0;
const MARGIN_R: f64 = 20.0;
const MARGIN_T: f64 = 36.0;
const MARGIN_B: f64 = 96.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// The panels in a grid of `columns`, under a `title`, as an SVG document.
pub fn render(title: &str, charts: &[Chart], columns: usize) -> String {
    let columns = columns.max(1);
    let rows = charts.len().div_ceil(columns);
    let width = PANEL_W * columns as f64;
    let height = 40.0 + PANEL_H * rows as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        width / 2.0,
        escape(title)
    );
    for (k, chart) in charts.iter().enumerate() {
        let x0 = PANEL_W * (k % columns) as f64;
        let y0 = 40.0 + PANEL_H * (k / columns) as f64;
        panel(&mut svg, chart, x0, y0);
    }
    svg.push_str("</svg>\n");
    svg
}

/// An axis mapping data to pixels (log or linear).
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Axis {
    fn value(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }
    fn map(&self, v: f64) -> f64 {
        let t = (self.value(v) - self.lo) / (self.hi - self.lo);
        self.from + t * (self.to - self.from)
    }
}

fn panel(svg: &mut String, chart: &Chart, x0: f64, y0: f64) {
    let keep = |&(x, y): &(f64, f64)| x > 0.0 && y.is_finite() && (!chart.log_y || y > 0.0);
    let all: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied().filter(keep))
        .collect();
    let (left, right) = (x0 + MARGIN_L, x0 + PANEL_W - MARGIN_R);
    let (top, bottom) = (y0 + MARGIN_T, y0 + PANEL_H - MARGIN_B);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="13">{}</text>"#,
        (left + right) / 2.0,
        y0 + 22.0,
        escape(&chart.title)
    );
    let _ = writeln!(
        svg,
        r##"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
        right - left,
        bottom - top
    );
    if all.is_empty() {
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">no data</text>"#,
            (left + right) / 2.0,
            (top + bottom) / 2.0
        );
        return;
    }
    let min_x = all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let max_x = all.iter().map(|p| p.0).fold(0.0, f64::max);
    let x = Axis {
        log: true,
        lo: min_x.log10(),
        hi: max_x.log10().max(min_x.log10() + 1e-9),
        from: left,
        to: right,
    };
    let y = y_axis(chart.log_y, &all, bottom, top);
    // x ticks at powers of 4 bytes (every power of 2 when the range is narrow).
    let (lo2, hi2) = (min_x.log2().floor() as i32, max_x.log2().ceil() as i32);
    let step = if hi2 - lo2 > 12 { 2 } else { 1 };
    for e in (lo2..=hi2).filter(|e| e % step == 0) {
        let v = 2f64.powi(e);
        if v < min_x * 0.999 || v > max_x * 1.001 {
            continue;
        }
        let px = round1(x.map(v));
        let _ = writeln!(
            svg,
            r##"<line x1="{px}" y1="{top}" x2="{px}" y2="{bottom}" stroke="#ddd"/><text x="{px}" y="{}" text-anchor="middle">{}</text>"##,
            bottom + 14.0,
            bytes_label(v)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">bytes per rank</text>"#,
        (left + right) / 2.0,
        bottom + 30.0
    );
    for v in y_ticks(&y) {
        let py = round1(y.map(v));
        let _ = writeln!(
            svg,
            r##"<line x1="{left}" y1="{py}" x2="{right}" y2="{py}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            left - 4.0,
            py + 4.0,
            number_label(v)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text transform="translate({},{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        x0 + 16.0,
        (top + bottom) / 2.0,
        escape(&chart.y_label)
    );
    for (k, s) in chart.series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let pts: Vec<String> = s
            .points
            .iter()
            .copied()
            .filter(keep)
            .map(|(vx, vy)| format!("{:.1},{:.1}", x.map(vx), y.map(vy)))
            .collect();
        if !pts.is_empty() {
            let _ = writeln!(
                svg,
                r#"<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{}"/>"#,
                pts.join(" ")
            );
            for p in &pts {
                let (cx, cy) = p.split_once(',').unwrap_or(("0", "0"));
                let _ = writeln!(
                    svg,
                    r#"<circle cx="{cx}" cy="{cy}" r="2.2" fill="{color}"/>"#
                );
            }
        }
        // Legend below the plot, two entries a row.
        let lx = left + (k % 2) as f64 * (right - left) / 2.0;
        let ly = bottom + 48.0 + (k / 2) as f64 * 14.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            ly - 4.0,
            lx + 16.0,
            ly - 4.0,
            lx + 20.0,
            ly,
            escape(&s.name)
        );
    }
}

fn y_axis(log: bool, points: &[(f64, f64)], from: f64, to: f64) -> Axis {
    let min_y = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let max_y = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if log {
        (
            min_y.log10().floor(),
            max_y.log10().ceil().max(min_y.log10().floor() + 1.0),
        )
    } else {
        (0.0f64.min(min_y), nice_ceiling(max_y.max(1e-9)))
    };
    Axis {
        log,
        lo,
        hi,
        from,
        to,
    }
}

fn y_ticks(axis: &Axis) -> Vec<f64> {
    if axis.log {
        let (lo, hi) = (axis.lo as i32, axis.hi as i32);
        let mut out = Vec::new();
        for e in lo..=hi {
            for m in [1.0, 2.0, 5.0] {
                let v = m * 10f64.powi(e);
                if v.log10() <= axis.hi + 1e-9 && (e < hi || m == 1.0) {
                    out.push(v);
                }
            }
        }
        out
    } else {
        let step = nice_ceiling(axis.hi / 6.0);
        (0..=12)
            .map(|k| axis.lo + k as f64 * step)
            .take_while(|v| *v <= axis.hi + 1e-9)
            .collect()
    }
}

/// The smallest 1, 2 or 5 times a power of ten at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|c| *c >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// `4K`, `16M`, `1G` (binary units).
pub fn bytes_label(v: f64) -> String {
    let units = [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (size, unit) in units {
        if v >= size as f64 {
            return format!("{}{unit}", trim(v / size as f64));
        }
    }
    trim(v)
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn number_label(v: f64) -> String {
    if v >= 1000.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
