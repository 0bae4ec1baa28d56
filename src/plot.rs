//! Small SVG plots (no dependencies): line and scatter plots with optional
//! logarithmic axes, for convergence curves and degree distributions.

use std::fmt::Write;

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
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if pts.is_empty() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if log_y {
        y0 = y0.floor();
        y1 = y1.ceil();
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM);
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
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="black"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0}" stroke="black"/>"#,
        H - BOTTOM,
        W - RIGHT
    );
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
        esc(&format!(
            "{y_label}{}",
            if log_y { " (log scale)" } else { "" }
        ))
    );
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

/// One series of [`series_plot_svg`].
pub struct Series<'a> {
    /// Its name in the legend.
    pub label: &'a str,
    /// The points (x, y), drawn in order.
    pub points: &'a [(f64, f64)],
    /// An SVG color, e.g. `#1f77b4`.
    pub color: &'a str,
    /// Draw a dot at each point (besides the line).
    pub markers: bool,
}

/// A line plot of several series on linear axes over fixed ranges, with a
/// legend: e.g. a measured curve next to a theoretical one.
pub fn series_plot_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series<'_>],
    x_range: (f64, f64),
    y_range: (f64, f64),
) -> String {
    let (x0, mut x1) = x_range;
    let (y0, mut y1) = y_range;
    // Empty or NaN ranges get a unit width.
    if x1.partial_cmp(&x0) != Some(std::cmp::Ordering::Greater) {
        x1 = x0 + 1.0;
    }
    if y1.partial_cmp(&y0) != Some(std::cmp::Ordering::Greater) {
        y1 = y0 + 1.0;
    }
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM);
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
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="black"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0}" stroke="black"/>"#,
        H - BOTTOM,
        W - RIGHT
    );
    for k in 0..=5 {
        let v = y0 + (y1 - y0) * k as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="#ddd"/><text x="{2}" y="{3}" text-anchor="end">{v:.2}</text>"##,
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
            (v * 1000.0).round() / 1000.0
        );
    }
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
    let inside = |&(x, y): &(f64, f64)| {
        x.is_finite() && y.is_finite() && (x0..=x1).contains(&x) && (y0..=y1).contains(&y)
    };
    for (k, ser) in series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = ser.points.iter().copied().filter(inside).collect();
        let color = esc(ser.color);
        if pts.len() >= 2 {
            let path: Vec<String> = pts
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
        }
        if ser.markers {
            for &(x, y) in &pts {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/>"#,
                    px(x),
                    py(y)
                );
            }
        }
        // Legend, top left inside the axes.
        let ly = TOP + 14.0 + 16.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{color}" stroke-width="2"/><text x="{3}" y="{4}">{5}</text>"#,
            LEFT + 10.0,
            ly,
            LEFT + 34.0,
            LEFT + 40.0,
            ly + 4.0,
            esc(ser.label)
        );
    }
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
    fn series_plot_has_legend_and_clips() {
        let pts = [(0.5, 0.1), (0.9, 0.8), (2.0, 0.5)];
        let two = super::series_plot_svg(
            "a & b",
            "x",
            "y",
            &[
                super::Series {
                    label: "one",
                    points: &pts,
                    color: "red",
                    markers: true,
                },
                super::Series {
                    label: "two",
                    points: &[],
                    color: "blue",
                    markers: false,
                },
            ],
            (0.5, 1.0),
            (0.0, 1.0),
        );
        assert!(two.starts_with("<svg") && two.ends_with("</svg>\n"));
        assert!(two.contains("a &amp; b") && two.contains(">one<") && two.contains(">two<"));
        // The point outside the x range is left out: two markers.
        assert_eq!(two.matches("<circle").count(), 2);
    }
}
