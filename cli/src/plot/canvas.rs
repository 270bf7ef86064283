//! The picture being drawn: RGBA pixels, text rasterised by `ab_glyph`
//! from the embedded Hack font, and its PNG encoding (paletted when the
//! colours fit, which they do for every `tgm plot` picture).

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};

/// Opaque white, the background.
pub const WHITE: [u8; 4] = [255, 255, 255, 255];
/// Opaque black, for text and lines.
pub const BLACK: [u8; 4] = [0, 0, 0, 255];
/// Fully transparent, for NaN.
pub const CLEAR: [u8; 4] = [0, 0, 0, 0];

/// Coverage steps of anti-aliased text: few greys keep the palette small.
const INK_STEPS: f32 = 8.0;

/// How text is placed relative to its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The point is the top left corner of the text's box.
    Left,
    /// The point is the middle of the top.
    Centre,
}

/// An RGBA picture on a white background.
pub struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<[u8; 4]>,
    font: FontRef<'static>,
}

impl Canvas {
    /// A white `width` × `height` canvas.
    pub fn new(width: u32, height: u32) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![WHITE; width as usize * height as usize],
            font: FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR)
                .expect("the embedded font parses"),
        }
    }

    /// Sets pixel (x, y), ignoring pixels outside.
    pub fn set(&mut self, x: u32, y: u32, c: [u8; 4]) {
        if x < self.width && y < self.height {
            self.pixels[(y * self.width + x) as usize] = c;
        }
    }

    /// Fills a rectangle.
    pub fn fill(&mut self, x: u32, y: u32, w: u32, h: u32, c: [u8; 4]) {
        for yy in y..y.saturating_add(h) {
            for xx in x..x.saturating_add(w) {
                self.set(xx, yy, c);
            }
        }
    }

    /// Draws a one-pixel frame just outside a rectangle.
    pub fn frame(&mut self, x: u32, y: u32, w: u32, h: u32) {
        let (x0, y0) = (x.saturating_sub(1), y.saturating_sub(1));
        self.fill(x0, y0, w + 2, 1, BLACK);
        self.fill(x0, y + h, w + 2, 1, BLACK);
        self.fill(x0, y0, 1, h + 2, BLACK);
        self.fill(x + w, y0, 1, h + 2, BLACK);
    }

    /// Width in pixels of `text` at `size` pixels.
    pub fn text_width(&self, text: &str, size: f32) -> u32 {
        let f = self.font.as_scaled(PxScale::from(size));
        let mut w = 0.0;
        let mut prev = None;
        for c in text.chars() {
            let id = f.glyph_id(c);
            if let Some(p) = prev {
                w += f.kern(p, id);
            }
            w += f.h_advance(id);
            prev = Some(id);
        }
        w.ceil() as u32
    }

    /// Draws `text` in black at `size` pixels, its box's top at `y` and
    /// placed at `x` by `anchor`; returns the height of a line.
    pub fn text(&mut self, x: u32, y: u32, text: &str, size: f32, anchor: Anchor) -> u32 {
        let w = self.text_width(text, size);
        let left = match anchor {
            Anchor::Left => x,
            Anchor::Centre => x.saturating_sub(w / 2),
        } as f32;
        let font = self.font.clone();
        let f = font.as_scaled(PxScale::from(size));
        let baseline = y as f32 + f.ascent();
        let mut pen = left;
        let mut prev = None;
        for c in text.chars() {
            let id = f.glyph_id(c);
            if let Some(p) = prev {
                pen += f.kern(p, id);
            }
            let glyph = id.with_scale_and_position(size, ab_glyph::point(pen, baseline));
            pen += f.h_advance(id);
            prev = Some(id);
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            outline.draw(|gx, gy, cov| {
                let steps = (cov.clamp(0.0, 1.0) * INK_STEPS).round();
                if steps > 0.0 {
                    let (px, py) = (b.min.x as i64 + gx as i64, b.min.y as i64 + gy as i64);
                    if px >= 0 && py >= 0 {
                        let grey = (255.0 * (1.0 - steps / INK_STEPS)).round() as u8;
                        self.set(px as u32, py as u32, [grey, grey, grey, 255]);
                    }
                }
            });
        }
        (f.ascent() - f.descent() + f.line_gap()).ceil() as u32
    }

    /// The PNG of the canvas with the `text` chunks (keyword, text):
    /// indexed colour with a transparency entry when at most 256 colours
    /// are used, else RGBA; best compression. The same pixels always give
    /// the same bytes.
    pub fn png(&self, text: &[(&str, String)]) -> Result<Vec<u8>, png::EncodingError> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.width, self.height);
        enc.set_compression(png::Compression::High);
        for (k, v) in text {
            enc.add_text_chunk(k.to_string(), latin1(v))?;
        }
        let mut palette: Vec<[u8; 4]> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let mut indices = Vec::with_capacity(self.pixels.len());
        for p in &self.pixels {
            let next = palette.len();
            let i = *index.entry(*p).or_insert(next);
            if i == next {
                palette.push(*p);
            }
            indices.push(i);
        }
        let data: Vec<u8> = if palette.len() <= 256 {
            enc.set_color(png::ColorType::Indexed);
            enc.set_depth(png::BitDepth::Eight);
            enc.set_palette(
                palette
                    .iter()
                    .flat_map(|c| [c[0], c[1], c[2]])
                    .collect::<Vec<_>>(),
            );
            if palette.iter().any(|c| c[3] != 255) {
                enc.set_trns(palette.iter().map(|c| c[3]).collect::<Vec<_>>());
            }
            indices.into_iter().map(|i| i as u8).collect()
        } else {
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            self.pixels.iter().flatten().copied().collect()
        };
        let mut w = enc.write_header()?;
        w.write_image_data(&data)?;
        w.finish()?;
        Ok(out)
    }
}

/// `s` with every character outside Latin-1's printable range replaced by
/// `?`, as a tEXt chunk must be.
fn latin1(s: &str) -> String {
    s.chars()
        .map(|c| match c as u32 {
            0x20..=0x7e | 0xa0..=0xff | 0x0a => c,
            _ => '?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_drawn_and_the_png_is_paletted_and_reads_back() {
        let mut c = Canvas::new(60, 20);
        c.set(0, 0, CLEAR);
        c.set(1, 0, [10, 20, 30, 255]);
        c.text(2, 2, "tgm 1.5", 12.0, Anchor::Left);
        assert!(c.pixels.contains(&BLACK));
        let bytes = c.png(&[("Title", "t².".into())]).unwrap();
        let raw = png::Decoder::new(std::io::Cursor::new(&bytes[..]))
            .read_info()
            .unwrap();
        assert_eq!(raw.info().color_type, png::ColorType::Indexed);
        assert_eq!(raw.info().uncompressed_latin1_text[0].text, "t².");
        assert_eq!((raw.info().width, raw.info().height), (60, 20));
        // Palette in order of first use: clear, then the dark blue.
        assert_eq!(
            &raw.info().palette.as_deref().unwrap()[..6],
            &[0, 0, 0, 10, 20, 30]
        );
        assert_eq!(&raw.info().trns.as_deref().unwrap()[..2], &[0, 255]);
        assert_eq!(c.png(&[]).unwrap(), c.png(&[]).unwrap());
    }
}
