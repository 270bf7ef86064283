//! The picture's layout: title lines, the panels side by side, each framed
//! with its direction letters and caption, and the colour bar with its
//! ticks (`spec/plot.md` §6).

use serde_json::json;

use super::canvas::{Anchor, Canvas, CLEAR};
use super::colour::{Cmap, Range, LEVELS};
use super::panel::Panel;
use super::values::Elements;

const MARGIN: u32 = 12;
const TITLE: f32 = 15.0;
const SMALL: f32 = 12.0;
const BAR_WIDTH: u32 = 18;
/// Longest title line, in characters.
const MAX_LINE: usize = 110;

/// Everything a picture shows.
pub struct Picture<'a> {
    /// Title lines, top first.
    pub title: Vec<String>,
    /// The panels, left to right.
    pub panels: Vec<Panel>,
    /// The colour map (resolved, not `auto`).
    pub cmap: Cmap,
    /// The value range of the colour scale.
    pub range: Range,
    /// The object's values.
    pub elements: &'a Elements<'a>,
}

/// The size a panel of `aspect` (width over height) gets inside a box.
fn fit(aspect: f64, (bw, bh): (u32, u32)) -> (u32, u32) {
    let a = if aspect.is_finite() && aspect > 0.0 {
        aspect
    } else {
        1.0
    };
    let h = (f64::from(bw) / a).round();
    if h <= f64::from(bh) {
        (bw, (h as u32).max(1))
    } else {
        (((f64::from(bh) * a).round() as u32).clamp(1, bw), bh)
    }
}

/// Where one thing was drawn.
struct Placed {
    x: u32,
    y: u32,
    w: u32,
    h: u32,
}

/// Draws the picture and returns its PNG, with text chunks `Title`,
/// `Software`, `tgm-cmap`, `tgm-range` and `tgm-panels` (each panel's
/// pixel box and caption, as JSON).
pub fn render(p: &Picture) -> Result<Vec<u8>, String> {
    let measure = Canvas::new(0, 0);
    let title: Vec<String> = p.title.iter().map(|l| clean(l)).collect();
    let boxed = if p.panels.len() == 1 {
        (720, 480)
    } else {
        (320, 320)
    };
    let sizes: Vec<(u32, u32)> = p.panels.iter().map(|q| fit(q.aspect, boxed)).collect();
    let edge = |q: &Panel| if q.edges.is_some() { 16 } else { 4 };
    let title_h: u32 = title.len() as u32 * (TITLE as u32 + 5);
    let top = MARGIN + title_h + 6;
    let mut x = MARGIN;
    let mut placed = Vec::new();
    let mut bottom = top;
    for (q, &(w, h)) in p.panels.iter().zip(&sizes) {
        let e = edge(q);
        placed.push(Placed {
            x: x + e,
            y: top + e,
            w,
            h,
        });
        x += w + 2 * e + 8;
        bottom = bottom.max(top + h + 2 * e + SMALL as u32 + 6);
    }
    let tallest = sizes.iter().map(|s| s.1).max().unwrap_or(1);
    let bar = Placed {
        x: x + 8,
        y: top + 16,
        w: BAR_WIDTH,
        h: tallest.max(160),
    };
    let ticks = p.range.ticks();
    let label_w = ticks
        .iter()
        .map(|t| measure.text_width(&t.1, SMALL))
        .max()
        .unwrap_or(0);
    let title_w = title
        .iter()
        .map(|l| measure.text_width(l, TITLE))
        .max()
        .unwrap_or(0);
    let width = (bar.x + bar.w + 8 + label_w + MARGIN).max(title_w + 2 * MARGIN);
    let height = bottom.max(bar.y + bar.h + 12) + MARGIN;
    let mut c = Canvas::new(width, height);
    for (i, line) in title.iter().enumerate() {
        c.text(
            MARGIN,
            MARGIN + i as u32 * (TITLE as u32 + 5),
            line,
            TITLE,
            Anchor::Left,
        );
    }
    let colour = |level: usize| {
        let [r, g, b] = p.cmap.colour(level);
        [r, g, b, 255]
    };
    for (q, at) in p.panels.iter().zip(&placed) {
        for py in 0..at.h {
            for px in 0..at.w {
                let v = p.elements.get(q.element(px, py, at.w, at.h));
                let c_ = p.range.level(v).map_or(CLEAR, colour);
                c.set(at.x + px, at.y + py, c_);
            }
        }
        c.frame(at.x, at.y, at.w, at.h);
        if let Some([l, r, t, b]) = q.edges {
            let mid_y = (at.y + at.h / 2).saturating_sub(SMALL as u32 / 2);
            c.text(at.x - 9, mid_y, l, SMALL, Anchor::Centre);
            c.text(at.x + at.w + 9, mid_y, r, SMALL, Anchor::Centre);
            c.text(at.x + at.w / 2, at.y - 16, t, SMALL, Anchor::Centre);
            c.text(at.x + at.w / 2, at.y + at.h + 2, b, SMALL, Anchor::Centre);
        }
        let below = at.y + at.h + edge(q) + 2;
        c.text(
            at.x + at.w / 2,
            below,
            &clean(&q.label),
            SMALL,
            Anchor::Centre,
        );
    }
    for py in 0..bar.h {
        let level = (LEVELS - 1) - (py as usize * LEVELS / bar.h as usize).min(LEVELS - 1);
        c.fill(bar.x, bar.y + py, bar.w, 1, colour(level));
    }
    c.frame(bar.x, bar.y, bar.w, bar.h);
    for (v, label) in &ticks {
        let t = p.range.fraction(*v).clamp(0.0, 1.0);
        let y = bar.y + ((1.0 - t) * f64::from(bar.h - 1)).round() as u32;
        c.fill(bar.x + bar.w, y, 4, 1, super::canvas::BLACK);
        let ty = y.saturating_sub(SMALL as u32 / 2 + 1);
        c.text(bar.x + bar.w + 7, ty, label, SMALL, Anchor::Left);
    }
    let boxes: Vec<_> = p
        .panels
        .iter()
        .zip(&placed)
        .map(|(q, at)| json!({"x": at.x, "y": at.y, "w": at.w, "h": at.h, "label": q.label}))
        .collect();
    c.png(&[
        ("Title", title.join(" | ")),
        ("Software", "tgm plot".into()),
        ("tgm-cmap", p.cmap.name().into()),
        ("tgm-range", format!("{}:{}", p.range.lo, p.range.hi)),
        ("tgm-panels", serde_json::Value::from(boxes).to_string()),
    ])
    .map_err(|e| format!("PNG encoding: {e}"))
}

/// `s` without control characters, at most [`MAX_LINE`] characters.
fn clean(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_LINE)
        .collect();
    if s.chars().count() > MAX_LINE {
        out.pop();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_fit_their_box() {
        assert_eq!(fit(2.0, (720, 480)), (720, 360));
        assert_eq!(fit(0.5, (720, 480)), (240, 480));
        assert_eq!(fit(f64::NAN, (320, 320)), (320, 320));
        assert_eq!(fit(1e-9, (320, 320)), (1, 320));
        assert_eq!(fit(1e9, (320, 320)), (320, 1));
    }

    #[test]
    fn long_titles_are_cut() {
        let s = "x".repeat(500);
        assert_eq!(clean(&s).chars().count(), MAX_LINE);
        assert_eq!(clean("a\nb"), "a b");
    }
}
