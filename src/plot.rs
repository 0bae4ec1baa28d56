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
}
