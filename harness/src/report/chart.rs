//! Line charts, drawn once as SVG: report.html shows the SVG (with a hover title on every point)
//! and the PNG files are that SVG rendered by resvg with an embedded font (DejaVu Sans), so both
//! show the same chart. Axes, ticks and legend are laid out here.

use std::fmt::Write;

pub const PALETTE: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];
pub const GUIDE: &str = "#555555";

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub color: String,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Labelled x ticks instead of computed ones (e.g. percentiles on a log axis).
    pub x_ticks: Option<Vec<(f64, String)>>,
    /// Draw markers at each point (charts with few points, e.g. one per load level).
    pub markers: bool,
}

impl Chart {
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }
}

pub const WIDTH: f64 = 760.0;
pub const HEIGHT: f64 = 320.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;
const LEGEND_ROW: f64 = 18.0;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

/// About `n` round tick values covering [lo, hi].
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut out = Vec::new();
    let mut v = (lo / step).floor() * step;
    // The last tick is at or above `hi`, so the axis covers every value.
    while out.last().is_none_or(|l: &f64| *l < hi - step * 1e-9) {
        if v >= lo - step * 1e-9 {
            out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        }
        v += step;
    }
    out
}

/// "1,500", "2.5", "0.25", "12k" - short labels for axes.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 10_000.0 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// Rows the legend needs (entries wrap at the chart width).
fn legend_rows(c: &Chart) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
    let mut x = LEFT;
    // A series without a name (a further run of a contender already named) has no entry.
    for (i, s) in c
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.name.is_empty())
    {
        let w = 28.0 + s.name.len() as f64 * 6.6;
        if x + w > WIDTH - RIGHT && !rows.last().unwrap().is_empty() {
            rows.push(Vec::new());
            x = LEFT;
        }
        rows.last_mut().unwrap().push(i);
        x += w + 12.0;
    }
    rows
}

pub fn height(c: &Chart) -> f64 {
    HEIGHT + 10.0 + LEGEND_ROW * legend_rows(c).len() as f64
}

fn draw(c: &Chart, cv: &mut Svg) {
    let (x0, x1, y1) = extent(c);
    let yt = ticks(0.0, if y1 > 0.0 { y1 * 1.05 } else { 1.0 }, 5);
    let f = Frame {
        x0,
        x1,
        y_top: yt.last().copied().unwrap_or(1.0).max(1e-9),
        pw: WIDTH - LEFT - RIGHT,
        ph: HEIGHT - TOP - BOTTOM,
    };
    cv.text(LEFT, 20.0, &c.title, "#111111", Anchor::Start, true);
    axes(c, cv, &f, &yt);
    for s in &c.series {
        let mapped: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (f.sx(x), f.sy(y))).collect();
        if !mapped.is_empty() {
            cv.series(s, &mapped);
        }
        if (c.markers && !s.dashed) || mapped.len() == 1 {
            for (&(x, y), &(px, py)) in s.points.iter().zip(&mapped) {
                cv.point(
                    px,
                    py,
                    &s.color,
                    &format!("{}: {} at {}", s.name, short(y), short(x)),
                );
            }
        }
    }
    legend(c, cv);
}

/// The x range (the points' and the ticks'; never empty) and the highest y.
fn extent(c: &Chart) -> (f64, f64, f64) {
    let pts = c.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    for (x, _) in c.x_ticks.iter().flatten() {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    (x0, x1, y1)
}

/// The plot area: data ranges and the size they are drawn at.
struct Frame {
    x0: f64,
    x1: f64,
    y_top: f64,
    pw: f64,
    ph: f64,
}

impl Frame {
    fn sx(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * self.pw
    }
    fn sy(&self, y: f64) -> f64 {
        TOP + self.ph - (y / self.y_top) * self.ph
    }
}

/// Grid lines, ticks with their labels, the axes and their names.
fn axes(c: &Chart, cv: &mut Svg, f: &Frame, yt: &[f64]) {
    let (pw, ph) = (f.pw, f.ph);
    for &y in yt {
        cv.line(
            &[(LEFT, f.sy(y)), (LEFT + pw, f.sy(y))],
            "#e4e4e4",
            1.0,
            false,
        );
        let label = short(y);
        cv.text(
            LEFT - 6.0,
            f.sy(y) + 4.0,
            &label,
            "#444444",
            Anchor::End,
            false,
        );
    }
    let xt: Vec<(f64, String)> = c.x_ticks.clone().unwrap_or_else(|| {
        ticks(f.x0, f.x1, 8)
            .into_iter()
            .map(|v| (v, short(v)))
            .collect()
    });
    for (x, label) in &xt {
        let at = f.sx(*x);
        cv.line(
            &[(at, TOP + ph), (at, TOP + ph + 4.0)],
            "#888888",
            1.0,
            false,
        );
        cv.text(at, TOP + ph + 16.0, label, "#444444", Anchor::Middle, false);
    }
    cv.line(
        &[(LEFT, TOP), (LEFT, TOP + ph), (LEFT + pw, TOP + ph)],
        "#888888",
        1.0,
        false,
    );
    let (x_label, y_label) = (&c.x_label, &c.y_label);
    cv.text(
        LEFT + pw / 2.0,
        TOP + ph + 34.0,
        x_label,
        "#333333",
        Anchor::Middle,
        false,
    );
    cv.text(
        LEFT - 6.0,
        TOP - 8.0,
        y_label,
        "#333333",
        Anchor::End,
        false,
    );
}

/// One swatch and name per series, in rows under the plot.
fn legend(c: &Chart, cv: &mut Svg) {
    for (r, row) in legend_rows(c).iter().enumerate() {
        let y = HEIGHT + 12.0 + LEGEND_ROW * r as f64 - 4.0;
        let mut x = LEFT;
        for &i in row {
            let s = &c.series[i];
            cv.line(
                &[(x, y - 4.0), (x + 22.0, y - 4.0)],
                &s.color,
                3.0,
                s.dashed,
            );
            cv.text(x + 28.0, y, &s.name, "#222222", Anchor::Start, false);
            x += 28.0 + s.name.len() as f64 * 6.6 + 12.0;
        }
    }
}

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG elements of a chart, in chart units (WIDTH x full height).
struct Svg(String);

impl Svg {
    fn line(&mut self, pts: &[(f64, f64)], color: &str, width: f64, dashed: bool) {
        let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let dash = if dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = write!(
            self.0,
            r#"<polyline fill="none" stroke="{color}" stroke-width="{width}"{dash} points="{}"/>"#,
            d.join(" ")
        );
    }

    fn text(&mut self, x: f64, y: f64, s: &str, color: &str, anchor: Anchor, bold: bool) {
        let a = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let w = if bold {
            r#" font-weight="bold" font-size="14""#
        } else {
            ""
        };
        let _ = write!(
            self.0,
            r#"<text x="{x:.1}" y="{y:.1}" fill="{color}" text-anchor="{a}"{w}>{}</text>"#,
            esc(s)
        );
    }

    /// A marker at a data point, with what hovering over it shows.
    fn point(&mut self, x: f64, y: f64, color: &str, title: &str) {
        let _ = write!(
            self.0,
            r#"<circle class="pt" cx="{x:.0}" cy="{y:.0}" r="4" fill="{color}"><title>{}</title></circle>"#,
            esc(title)
        );
    }

    /// A data series: its line, carrying its name and values (data-v: "x,y x,y ...") for the page's hover script.
    fn series(&mut self, s: &Series, pts: &[(f64, f64)]) {
        let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let v: Vec<String> = s
            .points
            .iter()
            .map(|(x, y)| format!("{},{}", short(*x), short(*y)))
            .collect();
        let dash = if s.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = write!(
            self.0,
            r#"<polyline class="s" fill="none" stroke="{}" stroke-width="2"{dash} data-name="{}" data-v="{}" points="{}"/>"#,
            s.color,
            esc(&s.name),
            v.join(" "),
            d.join(" ")
        );
    }
}

pub fn svg(c: &Chart) -> String {
    let mut s = Svg(String::new());
    draw(c, &mut s);
    format!(
        r#"<svg class="chart" id="{}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {h}" width="{WIDTH}" height="{h}" font-family="sans-serif" font-size="12">{}</svg>"#,
        esc(&c.id),
        s.0,
        h = height(c)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            ticks(0.0, 1000.0, 5),
            vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]
        );
        assert_eq!(ticks(0.0, 9.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 0.9, 4), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(
            ticks(0.0, 9522.0, 5),
            vec![0.0, 2000.0, 4000.0, 6000.0, 8000.0, 10000.0]
        );
        assert_eq!(short(12500.0), "12.5k");
        assert_eq!(short(2.5), "2.5");
        assert_eq!(short(3_000_000.0), "3M");
    }

    #[test]
    fn svg_has_a_line_per_series_and_a_hover_title_per_point() {
        let c = Chart {
            id: "t".into(),
            title: "Throughput <req/s>".into(),
            x_label: "s".into(),
            y_label: "req/s".into(),
            series: vec![
                Series {
                    name: "a".into(),
                    color: PALETTE[0].into(),
                    dashed: false,
                    points: vec![(0.0, 10.0), (1.0, 20.0), (2.0, 15.0)],
                },
                Series {
                    name: "b".into(),
                    color: PALETTE[1].into(),
                    dashed: true,
                    points: vec![(0.0, 5.0), (1.0, 7.0)],
                },
            ],
            ..Chart::default()
        };
        let s = svg(&c);
        assert!(s.contains("Throughput &lt;req/s&gt;"));
        assert_eq!(s.matches(r#"<polyline class="s""#).count(), 2);
        assert!(
            s.contains(r#"data-name="a" data-v="0,10 1,20 2,15""#),
            "{s}"
        );
        // Markers (with a hover title) only where asked for.
        assert_eq!(s.matches("<title>").count(), 0);
        let m = svg(&Chart { markers: true, ..c });
        assert_eq!(
            m.matches("<title>").count(),
            3,
            "dashed guide series get no markers"
        );
        assert!(m.contains("<title>a: 20 at 1</title>"), "{m}");
        assert!(s.contains(r#"stroke-dasharray="6 4""#));
    }
}
