//! PNG charts for READMEs: the same chart drawing as the SVG, rasterised at twice the chart's
//! size onto an RGB bitmap with a built-in 5x7 pixel font, then encoded (zlib via flate2).

use super::chart::{self, Anchor, Canvas, Chart};
use anyhow::Result;
use std::io::Write;

const SCALE: f64 = 2.0;

/// Glyphs 5 pixels wide and 7 high, one byte per row (bit 4 = leftmost pixel). Lower case is
/// drawn as upper case; anything else missing as '?'.
fn glyph(c: char) -> [u8; 7] {
    match c.to_ascii_uppercase() {
        ' ' => [0; 7],
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '[' => [0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E],
        ']' => [0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '<' => [0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02],
        '>' => [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08],
        '*' => [0x00, 0x04, 0x15, 0x0E, 0x15, 0x04, 0x00],
        '#' => [0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A],
        '\'' => [0x04, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00],
        _ => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04],
    }
}

fn rgb(hex: &str) -> [u8; 3] {
    let h = hex.trim_start_matches('#');
    let p = |i: usize| u8::from_str_radix(h.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
    [p(0), p(2), p(4)]
}

pub struct Bitmap {
    pub w: usize,
    pub h: usize,
    pub px: Vec<u8>,
}

impl Bitmap {
    pub fn new(w: usize, h: usize) -> Bitmap {
        Bitmap { w, h, px: vec![255; w * h * 3] }
    }

    fn set(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            let i = (y as usize * self.w + x as usize) * 3;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    fn dot(&mut self, x: f64, y: f64, r: f64, c: [u8; 3]) {
        let ri = r.ceil() as i64;
        for dy in -ri..=ri {
            for dx in -ri..=ri {
                if (dx * dx + dy * dy) as f64 <= r * r {
                    self.set(x.round() as i64 + dx, y.round() as i64 + dy, c);
                }
            }
        }
    }

    #[cfg(test)]
    pub fn pixel(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.w + x) * 3;
        [self.px[i], self.px[i + 1], self.px[i + 2]]
    }

    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut raw = Vec::with_capacity((self.w * 3 + 1) * self.h);
        for row in self.px.chunks(self.w * 3) {
            raw.push(0); // filter: none
            raw.extend_from_slice(row);
        }
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&raw)?;
        let idat = z.finish()?;
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&(self.w as u32).to_be_bytes());
        ihdr.extend_from_slice(&(self.h as u32).to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB, deflate, no filter, no interlace
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        for (kind, data) in [(b"IHDR", ihdr.as_slice()), (b"IDAT", idat.as_slice()), (b"IEND", &[][..])] {
            out.extend_from_slice(&(data.len() as u32).to_be_bytes());
            let mut crc = crc32fast::Hasher::new();
            crc.update(kind);
            crc.update(data);
            out.extend_from_slice(kind);
            out.extend_from_slice(data);
            out.extend_from_slice(&crc.finalize().to_be_bytes());
        }
        Ok(out)
    }
}

impl Canvas for Bitmap {
    fn line(&mut self, pts: &[(f64, f64)], color: &str, width: f64, dashed: bool) {
        let c = rgb(color);
        let r = (width * SCALE / 2.0).max(0.5);
        let mut walked = 0.0;
        for w in pts.windows(2) {
            let (x0, y0, x1, y1) = (w[0].0 * SCALE, w[0].1 * SCALE, w[1].0 * SCALE, w[1].1 * SCALE);
            let len = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
            let steps = (len.ceil() as usize).max(1);
            for i in 0..=steps {
                let t = i as f64 / steps as f64;
                let on = !dashed || (walked + t * len) % (10.0 * SCALE) < 6.0 * SCALE;
                if on {
                    self.dot(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, r - 0.5, c);
                }
            }
            walked += len;
        }
    }

    fn text(&mut self, x: f64, y: f64, s: &str, color: &str, anchor: Anchor, bold: bool) {
        let c = rgb(color);
        let px = 2;
        let advance = 6 * px;
        let width = (s.chars().count() * advance) as f64;
        let left = match anchor {
            Anchor::Start => x * SCALE,
            Anchor::Middle => x * SCALE - width / 2.0,
            Anchor::End => x * SCALE - width,
        };
        let top = y * SCALE - (7 * px) as f64;
        for (i, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        for dy in 0..px {
                            for dx in 0..px + usize::from(bold) {
                                self.set(left as i64 + (i * advance + col * px + dx) as i64, top as i64 + (row * px + dy) as i64, c);
                            }
                        }
                    }
                }
            }
        }
    }

    fn point(&mut self, x: f64, y: f64, color: &str, _title: &str) {
        self.dot(x * SCALE, y * SCALE, 3.5 * SCALE, rgb(color));
    }
}

/// The chart as PNG bytes.
pub fn render(c: &Chart) -> Result<Vec<u8>> {
    let mut b = Bitmap::new((chart::WIDTH * SCALE) as usize, (chart::height(c) * SCALE) as usize);
    chart::draw(c, &mut b);
    b.encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::{Series, PALETTE};

    #[test]
    fn png_is_valid_and_shows_the_series() {
        let c = Chart {
            id: "x".into(),
            title: "Throughput".into(),
            x_label: "seconds".into(),
            y_label: "req/s".into(),
            series: vec![Series { name: "spring-mvc".into(), color: PALETTE[1].into(), dashed: false, points: vec![(0.0, 0.0), (10.0, 100.0)] }],
            ..Chart::default()
        };
        let bytes = render(&c).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&bytes[12..16], b"IHDR");
        assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 1520);
        // The chunk CRC is what decoders check first.
        let crc = crc32fast::hash(&bytes[12..29]);
        assert_eq!(u32::from_be_bytes(bytes[29..33].try_into().unwrap()), crc);
        // Decompressed IDAT holds every row, and the series colour is on the canvas.
        let idat_len = u32::from_be_bytes(bytes[33..37].try_into().unwrap()) as usize;
        assert_eq!(&bytes[37..41], b"IDAT");
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&bytes[41..41 + idat_len]), &mut raw).unwrap();
        let (w, h) = (1520usize, (chart::height(&c) * SCALE) as usize);
        assert_eq!(raw.len(), (w * 3 + 1) * h);
        let red = rgb(PALETTE[1]);
        let reds = raw.chunks(3).filter(|p| *p == red).count();
        assert!(reds > 500, "{reds} pixels of the series colour");
    }

    #[test]
    fn text_is_drawn_with_the_font() {
        let mut b = Bitmap::new(40, 20);
        b.text(0.0, 8.0, "1", "#000000", Anchor::Start, false);
        let dark = (0..20).flat_map(|y| (0..40).map(move |x| (x, y))).filter(|&(x, y)| b.pixel(x, y) == [0, 0, 0]).count();
        // Glyph '1' has 10 lit pixels, each drawn 2 x 2.
        assert_eq!(dark, 40);
    }
}
