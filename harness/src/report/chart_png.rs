//! A chart's PNG: its SVG rendered by resvg at twice its size, with an embedded font (DejaVu
//! Sans), so that the PNG in a README and the SVG in report.html show the same chart.

use super::chart::{svg, Chart};

/// PNG files are drawn at twice the SVG's size, for screens that have twice the pixels.
const PNG_SCALE: f32 = 2.0;

/// The font every PNG uses, compiled in so a chart looks the same on every machine: DejaVu Sans
/// and its bold (for titles), cut down to Latin-1 and a few symbols (assets/fonts/README.md).
fn fonts() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    static FONTS: std::sync::OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> =
        std::sync::OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_font_data(include_bytes!("../../assets/fonts/DejaVuSans.ttf").to_vec());
            db.load_font_data(include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf").to_vec());
            db.set_sans_serif_family("DejaVu Sans");
            std::sync::Arc::new(db)
        })
        .clone()
}

/// The chart's SVG rendered to a PNG (white background, `PNG_SCALE` times the SVG's size).
pub fn png(c: &Chart) -> anyhow::Result<Vec<u8>> {
    svg_to_png(&c.id, &svg(c))
}

/// Any SVG the report draws (a chart, a flame graph), rendered with the embedded fonts.
pub fn svg_to_png(id: &str, svg: &str) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let opt = usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt)
        .map_err(|e| anyhow::anyhow!("chart {id}: the SVG does not parse: {e}"))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(PNG_SCALE)
        .ok_or_else(|| anyhow::anyhow!("chart {id}: empty size"))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow::anyhow!("chart {id}: cannot allocate {size:?}"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| anyhow::anyhow!("chart {id}: PNG encoding failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::chart::{height, Series, PALETTE, WIDTH};
    use super::*;

    fn one_series(title: &str) -> Chart {
        Chart {
            id: "x".into(),
            title: title.into(),
            x_label: "seconds".into(),
            y_label: "req/s".into(),
            series: vec![Series {
                name: "spring-mvc".into(),
                color: PALETTE[1].into(),
                dashed: false,
                points: vec![(0.0, 0.0), (10.0, 100.0)],
            }],
            ..Chart::default()
        }
    }

    fn decode(c: &Chart) -> resvg::tiny_skia::Pixmap {
        let bytes = png(c).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap()
    }

    #[test]
    fn png_is_the_svg_at_twice_its_size_with_the_series_drawn() {
        let c = one_series("Throughput");
        let p = decode(&c);
        assert_eq!(
            (p.width(), p.height()),
            ((WIDTH * 2.0) as u32, (height(&c) * 2.0) as u32)
        );
        // The series' colour (#d62728) fills the inside of its line; the background is white.
        let reds = p
            .pixels()
            .iter()
            .filter(|px| (px.red(), px.green(), px.blue()) == (0xd6, 0x27, 0x28))
            .count();
        assert!(reds > 1_000, "{reds} pixels of the series colour");
        let corner = p.pixel(0, 0).unwrap();
        assert_eq!(
            (corner.red(), corner.green(), corner.blue(), corner.alpha()),
            (255, 255, 255, 255)
        );
    }

    /// Ink of the title row (the first 28 chart units, right of the y axis's label, which ends
    /// at 64 units): how wide it is, and how many of its pixels are anti-aliased grey.
    fn title_ink(title: &str) -> (usize, usize) {
        let p = decode(&one_series(title));
        let (mut lo, mut hi, mut grey) = (usize::MAX, 0, 0);
        for y in 0..56 {
            for x in 136..p.width() as usize {
                let px = p.pixel(x as u32, y).unwrap();
                if px.red() < 200 {
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
                // Anti-aliased edges: neither background nor ink.
                if (60..200).contains(&px.red()) {
                    grey += 1;
                }
            }
        }
        (hi.saturating_sub(lo), grey)
    }

    #[test]
    fn text_is_set_in_a_proportional_font_with_smooth_edges() {
        let (narrow, grey) = title_ink("iiiiiiiiii");
        let (wide, _) = title_ink("WWWWWWWWWW");
        assert!(
            narrow > 0 && grey > 0,
            "the title is drawn, anti-aliased ({narrow} px wide, {grey} grey pixels)"
        );
        // A monospaced (or pixel) font draws both equally wide; DejaVu's W is over 3 times its i.
        assert!(
            wide > 3 * narrow,
            "W x10 is {wide} px wide, i x10 {narrow} px"
        );
    }
}
