//! Small SVG plots (no dependencies): line plots with an optional logarithmic
//! y axis ([`line_plot_svg`], for convergence curves) and log-log plots of
//! several series of dots and lines with a legend ([`loglog_plot_svg`], for
//! degree distributions and their fitted power laws).

use std::fmt::Write;

/// How a plot with too few points to draw begins its message (readers that
/// show plots beside other figures leave such a plot out).
pub const TOO_LITTLE: &str = "Too little to plot";

const W: f64 = 640.0;
const H: f64 = 400.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The data ranges a plot's axes show, and their mapping to pixels.
#[derive(Clone, Copy, Debug)]
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    /// A frame over `x` and `y` (each `(low, high)`); an empty or NaN range
    /// gets a unit width.
    fn new((x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> Frame {
        let widen = |lo: f64, hi: f64| if hi > lo { hi } else { lo + 1.0 };
        Frame {
            x0,
            x1: widen(x0, x1),
            y0,
            y1: widen(y0, y1),
        }
    }

    /// The smallest frame holding `points` (finite), the unit square if there
    /// are none; `whole_x`/`whole_y` widen that axis to whole units (the
    /// decades of a log axis).
    fn around<'a>(
        points: impl IntoIterator<Item = &'a (f64, f64)>,
        whole_x: bool,
        whole_y: bool,
    ) -> Frame {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in points {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        let whole = |on: bool, lo: f64, hi: f64| {
            if on {
                (lo.floor(), hi.ceil())
            } else {
                (lo, hi)
            }
        };
        Frame::new(whole(whole_x, x0, x1), whole(whole_y, y0, y1))
    }

    /// The pixel column of `x`.
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)
    }

    /// The pixel row of `y`.
    fn py(&self, y: f64) -> f64 {
        H - BOTTOM - (y - self.y0) / (self.y1 - self.y0) * (H - TOP - BOTTOM)
    }
}

/// A new SVG document of the plots' size, white, with `title` on top.
fn open_svg(title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        W / 2.0,
        esc(title)
    );
    s
}

/// The x and y axis lines and their labels.
fn axes(s: &mut String, x_label: &str, y_label: &str) {
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="black"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0}" stroke="black"/>"#,
        H - BOTTOM,
        W - RIGHT
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 10.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{0}" text-anchor="middle" transform="rotate(-90 16 {0})">{1}</text>"#,
        (TOP + H - BOTTOM) / 2.0,
        esc(y_label)
    );
}

/// A line plot of `points` (x, y); `log_y` puts y on a log₁₀ scale (points with
/// y ≤ 0 are left out).
pub fn line_plot_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    points: &[(f64, f64)],
    log_y: bool,
) -> String {
    let ty = |y: f64| if log_y { y.log10() } else { y };
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite() && (!log_y || p.1 > 0.0))
        .map(|&(x, y)| (x, ty(y)))
        .collect();
    let frame = Frame::around(&pts, false, log_y);
    let Frame { x0, x1, y0, y1 } = frame;
    let (px, py) = (|x| frame.px(x), |y| frame.py(y));
    let mut s = open_svg(title);
    // Y ticks: each decade on a log axis, 5 steps otherwise.
    let ticks: Vec<f64> = if log_y {
        let step = ((y1 - y0) / 8.0).ceil().max(1.0);
        (0..)
            .map(|k| y0 + k as f64 * step)
            .take_while(|&v| v <= y1 + 1e-9)
            .collect()
    } else {
        (0..=5).map(|k| y0 + (y1 - y0) * k as f64 / 5.0).collect()
    };
    for v in ticks {
        let label = if log_y {
            format!("1e{}", v as i64)
        } else {
            format!("{v:.3}")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="#ddd"/><text x="{2}" y="{3}" text-anchor="end">{label}</text>"##,
            py(v),
            W - RIGHT,
            LEFT - 6.0,
            py(v) + 4.0
        );
    }
    for k in 0..=5 {
        let v = x0 + (x1 - x0) * k as f64 / 5.0;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            px(v),
            H - BOTTOM + 18.0,
            (v * 10.0).round() / 10.0
        );
    }
    let y_label = format!("{y_label}{}", if log_y { " (log scale)" } else { "" });
    axes(&mut s, x_label, &y_label);
    if !pts.is_empty() {
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{}"/>"##,
            path.join(" ")
        );
    }
    s.push_str("</svg>\n");
    s
}

/// How a [`Series`] is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesStyle {
    /// A dot per point.
    Dots,
    /// A solid line through the points.
    Line,
    /// A dashed line through the points.
    Dashed,
    /// A solid line with a dot at each point.
    LineDots,
}

/// One series of a [`loglog_plot_svg`] or a [`series_plot_svg`].
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend text.
    pub label: String,
    /// An SVG colour (`#1f77b4`, `red`).
    pub color: String,
    /// How it is drawn.
    pub style: SeriesStyle,
    /// The (x, y) points; those with x ≤ 0 or y ≤ 0 are left out.
    pub points: Vec<(f64, f64)>,
}

/// A log-log plot of `series` (both axes log₁₀, ticks at the decades), with a
/// legend in the upper right corner. Points that cannot go on a log axis
/// (zero, negative, not finite) are left out.
pub fn loglog_plot_svg(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let usable = |p: &&(f64, f64)| p.0 > 0.0 && p.1 > 0.0 && p.0.is_finite() && p.1.is_finite();
    let logs: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .filter(usable)
                .map(|&(x, y)| (x.log10(), y.log10()))
                .collect()
        })
        .collect();
    let frame = Frame::around(logs.iter().flatten(), true, true);
    let Frame { x0, x1, y0, y1 } = frame;
    let (px, py) = (|x| frame.px(x), |y| frame.py(y));
    let mut s = open_svg(title);
    // Grid and labels at the decades (every other one when there are many).
    let decades = |lo: f64, hi: f64| {
        let step = ((hi - lo) / 8.0).ceil().max(1.0);
        (0..)
            .map(move |k| lo + k as f64 * step)
            .take_while(move |&v| v <= hi + 1e-9)
    };
    for v in decades(y0, y1) {
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">1e{4}</text>"##,
            py(v),
            W - RIGHT,
            LEFT - 6.0,
            py(v) + 4.0,
            v as i64
        );
    }
    for v in decades(x0, x1) {
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1}" stroke="#ddd"/><text x="{0:.1}" y="{2}" text-anchor="middle">1e{3}</text>"##,
            px(v),
            H - BOTTOM,
            H - BOTTOM + 18.0,
            v as i64
        );
    }
    axes(
        &mut s,
        &format!("{x_label} (log scale)"),
        &format!("{y_label} (log scale)"),
    );
    draw_series(&mut s, series, &logs, px, py, W - RIGHT - 300.0);
    s.push_str("</svg>\n");
    s
}

/// A distribution — how many items have each value, `(value, items)` with
/// both ≥ 1 — on log-log axes (both log₁₀, the same convention as
/// [`loglog_plot_svg`]), as dots joined by a line. With fewer than three
/// distinct values there is no shape to see, so the plot says so and lists
/// the values instead of drawing a lone dot in a corner.
pub fn distribution_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    points: &[(u64, u64)],
) -> String {
    let usable: Vec<(u64, u64)> = points
        .iter()
        .copied()
        .filter(|&(x, y)| x > 0 && y > 0)
        .collect();
    if usable.len() >= 3 {
        return loglog_plot_svg(
            title,
            x_label,
            y_label,
            &[Series {
                label: y_label.to_string(),
                color: "#1f77b4".into(),
                style: SeriesStyle::LineDots,
                points: usable.iter().map(|&(x, y)| (x as f64, y as f64)).collect(),
            }],
        );
    }
    let mut s = open_svg(title);
    let mut lines = vec![format!(
        "{TOO_LITTLE}: {} distinct value{} of “{x_label}”.",
        usable.len(),
        if usable.len() == 1 { "" } else { "s" }
    )];
    for (x, y) in &usable {
        lines.push(format!("{x_label} = {x}: {y} {y_label}"));
    }
    for (i, line) in lines.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            W / 2.0,
            H / 2.0 - 20.0 + 20.0 * i as f64,
            esc(line)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Draws `series` (whose plottable points, in axis units, are `points`) and
/// their legend at the top, starting at pixel `legend_x`; `px`/`py` map axis
/// units to pixels.
fn draw_series(
    s: &mut String,
    series: &[Series],
    points: &[Vec<(f64, f64)>],
    px: impl Fn(f64) -> f64,
    py: impl Fn(f64) -> f64,
    legend_x: f64,
) {
    for (ser, pts) in series.iter().zip(points) {
        if pts.is_empty() {
            continue;
        }
        let color = esc(&ser.color).replace('"', "");
        match ser.style {
            SeriesStyle::Dots => {
                let _ = writeln!(s, r#"<g fill="{color}" fill-opacity="0.6">"#);
                for &(x, y) in pts {
                    let _ = writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="2"/>"#, px(x), py(y));
                }
                s.push_str("</g>\n");
            }
            SeriesStyle::Line | SeriesStyle::Dashed | SeriesStyle::LineDots => {
                let path: Vec<String> = pts
                    .iter()
                    .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                    .collect();
                let dash = if ser.style == SeriesStyle::Dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    r#"<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{}"/>"#,
                    path.join(" ")
                );
                if ser.style == SeriesStyle::LineDots {
                    for &(x, y) in pts {
                        let _ = writeln!(
                            s,
                            r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/>"#,
                            px(x),
                            py(y)
                        );
                    }
                }
            }
        }
    }
    // Legend, upper right.
    for (i, ser) in series.iter().enumerate() {
        let y = TOP + 14.0 + 16.0 * i as f64;
        let x = legend_x;
        let color = esc(&ser.color).replace('"', "");
        let mark = match ser.style {
            SeriesStyle::Dots => format!(
                r#"<circle cx="{}" cy="{}" r="3" fill="{color}"/>"#,
                x + 10.0,
                y - 4.0
            ),
            SeriesStyle::Line | SeriesStyle::LineDots => format!(
                r#"<line x1="{x}" y1="{0}" x2="{1}" y2="{0}" stroke="{color}" stroke-width="2"/>"#,
                y - 4.0,
                x + 20.0
            ),
            SeriesStyle::Dashed => format!(
                r#"<line x1="{x}" y1="{0}" x2="{1}" y2="{0}" stroke="{color}" stroke-width="2" stroke-dasharray="6 4"/>"#,
                y - 4.0,
                x + 20.0
            ),
        };
        let _ = writeln!(
            s,
            r#"{mark}<text x="{}" y="{y}">{}</text>"#,
            x + 26.0,
            esc(&ser.label)
        );
    }
}

/// A plot of `series` on linear axes over the fixed ranges `x_range` and
/// `y_range` (points outside them are left out), with a legend in the upper
/// left corner: e.g. a measured curve next to a theoretical one.
pub fn series_plot_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    x_range: (f64, f64),
    y_range: (f64, f64),
) -> String {
    let frame = Frame::new(x_range, y_range);
    let Frame { x0, x1, y0, y1 } = frame;
    let (px, py) = (|x| frame.px(x), |y| frame.py(y));
    let mut s = open_svg(title);
    for k in 0..=5 {
        let v = y0 + (y1 - y0) * k as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">{v:.2}</text>"##,
            py(v),
            W - RIGHT,
            LEFT - 6.0,
            py(v) + 4.0
        );
        let u = x0 + (x1 - x0) * k as f64 / 5.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(u),
            H - BOTTOM + 18.0,
            (u * 1000.0).round() / 1000.0
        );
    }
    axes(&mut s, x_label, y_label);
    let inside = |&&(x, y): &&(f64, f64)| {
        x.is_finite() && y.is_finite() && (x0..=x1).contains(&x) && (y0..=y1).contains(&y)
    };
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|ser| ser.points.iter().filter(inside).copied().collect())
        .collect();
    draw_series(&mut s, series, &points, px, py, LEFT + 10.0);
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn svg_is_well_formed_enough() {
        let svg = super::line_plot_svg(
            "t <1>",
            "x",
            "y",
            &[(1.0, 1e-2), (2.0, 1e-5), (3.0, 0.0)],
            true,
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("t &lt;1&gt;"));
        assert!(svg.contains("polyline"));
        let empty = super::line_plot_svg("e", "x", "y", &[], false);
        assert!(empty.contains("</svg>"));
    }

    #[test]
    fn loglog_places_decades_and_skips_unplottable_points() {
        use super::{loglog_plot_svg, Series, SeriesStyle};
        let series = [
            Series {
                label: "a & b".into(),
                color: "#123456".into(),
                style: SeriesStyle::Dots,
                points: vec![
                    (1.0, 0.5),
                    (10.0, 0.01),
                    (0.0, 1.0),
                    (100.0, 0.0),
                    (1000.0, 1e-4),
                ],
            },
            Series {
                label: "fit".into(),
                color: "red".into(),
                style: SeriesStyle::Dashed,
                points: vec![(1.0, 0.5), (1000.0, 5e-7)],
            },
        ];
        let svg = loglog_plot_svg("t", "k", "p", &series);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        // Three usable dots of four, a dashed line, legend text escaped.
        assert_eq!(svg.matches("<circle").count(), 3 + 1);
        assert!(svg.contains("stroke-dasharray"));
        assert!(svg.contains("a &amp; b"));
        // x from 1e0 to 1e3, y from 1e-7 to 1e0.
        assert!(svg.contains(">1e0<") && svg.contains(">1e3<"));
        assert!(svg.contains(">1e-7<"));
        let empty = loglog_plot_svg("e", "x", "y", &[]);
        assert!(empty.ends_with("</svg>\n"));
    }

    #[test]
    fn a_distribution_is_drawn_on_log_log_axes_or_said_too_small() {
        use super::distribution_svg;
        let svg = distribution_svg("t", "near-duplicates", "pages", &[(1, 40), (2, 9), (30, 1)]);
        assert!(svg.contains("(log scale)") && svg.contains("polyline"));
        assert!(svg.contains(">1e0<") && svg.contains(">1e2<"), "{svg}");
        let few = distribution_svg("t", "near-duplicates", "pages", &[(1, 4), (0, 3)]);
        assert!(
            few.contains("Too little to plot: 1 distinct value"),
            "{few}"
        );
        assert!(few.contains("near-duplicates = 1: 4 pages"));
        assert!(!few.contains("<circle") && few.ends_with("</svg>\n"));
    }

    #[test]
    fn series_plot_has_legend_and_clips() {
        use super::{series_plot_svg, Series, SeriesStyle};
        let series = [
            Series {
                label: "one".into(),
                color: "red".into(),
                style: SeriesStyle::LineDots,
                points: vec![(0.5, 0.1), (0.9, 0.8), (2.0, 0.5)],
            },
            Series {
                label: "two".into(),
                color: "blue".into(),
                style: SeriesStyle::Line,
                points: vec![],
            },
        ];
        let svg = series_plot_svg("a & b", "x", "y", &series, (0.5, 1.0), (0.0, 1.0));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("a &amp; b") && svg.contains(">one<") && svg.contains(">two<"));
        // The point outside the x range is left out: two dots.
        assert_eq!(svg.matches("<circle").count(), 2);
    }
}
