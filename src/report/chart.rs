//! The report's charts, drawn by plotters as SVG text: lines over time (a circle at each point),
//! horizontal bars by category (one rectangle a value) and columns of stacked values by day (one
//! rectangle a value above zero). Nothing else on a chart is a circle
//! or a rectangle (no background, no legend: the page writes the legend), so that the points a
//! chart plots can be counted in its SVG. Text from the data is escaped by the SVG backend.

use plotters::coord::Shift;
use plotters::prelude::*;

/// The colours of the series, in order, as `#rrggbb` for the page's legend too.
pub const PALETTE: &[(u8, u8, u8)] = &[
    (0x1f, 0x77, 0xb4),
    (0xff, 0x7f, 0x0e),
    (0x2c, 0xa0, 0x2c),
    (0xd6, 0x27, 0x28),
    (0x94, 0x67, 0xbd),
    (0x8c, 0x56, 0x4b),
    (0xe3, 0x77, 0xc2),
    (0x7f, 0x7f, 0x7f),
    (0xbc, 0xbd, 0x22),
    (0x17, 0xbe, 0xcf),
    (0x0b, 0x3d, 0x6b),
    (0xa6, 0x4b, 0x00),
    (0x15, 0x5e, 0x15),
    (0x8b, 0x10, 0x10),
    (0x5a, 0x3a, 0x80),
    (0xc4, 0x9c, 0x94),
    (0xf7, 0xb6, 0xd2),
    (0x40, 0x40, 0x40),
    (0x70, 0x70, 0x10),
    (0x0e, 0x78, 0x85),
];

/// The colour of the `n`th series (the palette again after its last).
pub fn colour(n: usize) -> RGBColor {
    let (r, g, b) = PALETTE[n % PALETTE.len()];
    RGBColor(r, g, b)
}

/// The colour of the `n`th series as CSS writes it.
pub fn css_colour(n: usize) -> String {
    let (r, g, b) = PALETTE[n % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One line of a chart over time: its points, seconds since the epoch and a value.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(i64, f64)>,
}

/// How the times of a chart are labelled: per hour or per day, in the offset the times were
/// written in (seconds east of UTC).
#[derive(Debug, Clone, Copy)]
pub struct TimeAxis {
    pub hourly: bool,
    pub offset_seconds: i32,
}

const WIDTH: u32 = 560;
const FONT: &str = "sans-serif";

/// A chart of `series` over time, a line and a circle per point each, in colour order; `unit`
/// names the values (`US dollars`, `tokens`).
pub fn time_lines(series: &[Series], axis: TimeAxis, unit: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 280)).into_drawing_area();
        draw_time_lines(&root, series, axis, unit).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn draw_time_lines(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    series: &[Series],
    axis: TimeAxis,
    unit: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (first, last) = (xs.clone().min().unwrap_or(0), xs.max().unwrap_or(0));
    let step = if axis.hourly { 3600 } else { 86_400 };
    let (x0, x1) = (first - step / 2, last + step / 2);
    let top = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0_f64, f64::max);
    let top = if top > 0.0 { top * 1.08 } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, 0.0..top)?;
    let offset = chrono::FixedOffset::east_opt(axis.offset_seconds)
        .unwrap_or(chrono::FixedOffset::east_opt(0).unwrap());
    let label_time = |x: &i64| match chrono::DateTime::from_timestamp(*x, 0) {
        Some(t) => {
            let t = t.with_timezone(&offset);
            if axis.hourly { t.format("%m-%d %H:%M").to_string() } else { t.format("%Y-%m-%d").to_string() }
        }
        None => String::new(),
    };
    chart
        .configure_mesh()
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&label_time)
        .y_label_formatter(&|y| short_number(*y))
        .y_desc(unit)
        .label_style((FONT, 11))
        .axis_desc_style((FONT, 12))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()?;
    for (n, line) in series.iter().enumerate() {
        let colour = colour(n);
        // A line joins the points of neighbouring hours or days only: no line across a gap.
        let mut from = 0;
        for to in 1..=line.points.len() {
            if to == line.points.len() || line.points[to].0 - line.points[to - 1].0 > step * 3 / 2 {
                let run = line.points[from..to].iter().copied();
                chart.draw_series(LineSeries::new(run, colour.stroke_width(2)))?;
                from = to;
            }
        }
        chart.draw_series(line.points.iter().map(|p| Circle::new(*p, 3, colour.filled())))?;
    }
    Ok(())
}

/// A chart of one value per category, a horizontal bar each, the first category on top; a
/// null value draws no bar. Labels longer than 34 characters are cut (the figures beside the
/// chart have them whole).
pub fn bars(categories: &[String], values: &[Option<f64>], unit: &str, n: usize) -> Result<String, String> {
    let mut svg = String::new();
    {
        let height = 56 + 22 * categories.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        draw_bars(&root, categories, values, unit, n).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn draw_bars(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    categories: &[String],
    values: &[Option<f64>],
    unit: &str,
    n: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let labels: Vec<String> = categories.iter().map(|c| cut(c, 34)).collect();
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4) as u32;
    let count = categories.len() as i32;
    let top = values.iter().flatten().copied().fold(0.0_f64, f64::max);
    let top = if top > 0.0 { top * 1.08 } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size((widest * 6 + 12).clamp(40, 230))
        .build_cartesian_2d(0.0..top, (0..count).into_segmented())?;
    // Category i is drawn at count - 1 - i, so that the first is on top.
    let label = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(at) | SegmentValue::Exact(at) if (0..count).contains(at) => {
            labels[(count - 1 - at) as usize].clone()
        }
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_labels(5)
        .y_labels(categories.len().max(1))
        .x_label_formatter(&|x| short_number(*x))
        .y_label_formatter(&label)
        .x_desc(unit)
        .label_style((FONT, 11))
        .axis_desc_style((FONT, 12))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()?;
    let colour = colour(n);
    let drawn = values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (count - 1 - i as i32, v)));
    chart.draw_series(drawn.map(|(at, v)| {
        let mut bar = Rectangle::new(
            [(0.0, SegmentValue::Exact(at)), (v, SegmentValue::Exact(at + 1))],
            colour.filled(),
        );
        bar.set_margin(3, 3, 0, 0);
        bar
    }))?;
    Ok(())
}

/// One stack of a column chart: the values of a category (a day), one per series in series
/// order; a zero or negative value draws nothing.
#[derive(Debug, Clone, Default)]
pub struct Column {
    pub name: String,
    pub values: Vec<f64>,
}

/// A chart of one column per category (a day), left to right, each a stack of a rectangle per
/// series with a value above zero, in colour order from the bottom; `unit` names the values.
/// Every category gets its place, an empty one too, so that the columns keep the days' spacing.
pub fn stacked_columns(columns: &[Column], unit: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let width = (120 + 26 * columns.len() as u32).clamp(WIDTH, 2 * WIDTH);
        let root = SVGBackend::with_string(&mut svg, (width, 300)).into_drawing_area();
        draw_stacked_columns(&root, columns, unit).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The rectangles a column chart of `columns` draws: a value above zero each.
pub fn stacked_marks(columns: &[Column]) -> usize {
    columns.iter().flat_map(|c| &c.values).filter(|v| **v > 0.0).count()
}

fn draw_stacked_columns(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    columns: &[Column],
    unit: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let count = columns.len() as i32;
    let top =
        columns.iter().map(|c| c.values.iter().filter(|v| **v > 0.0).sum::<f64>()).fold(0.0_f64, f64::max);
    let top = if top > 0.0 { top * 1.08 } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(64)
        // 0..n is n + 1 segments to plotters: the last column's is n - 1 (one column gets two,
        // 0..0 being no width).
        .build_cartesian_2d((0..(count - 1).max(1)).into_segmented(), 0.0..top)?;
    // At most 12 names along the axis: every nth column's.
    let every = (columns.len() / 12 + 1) as i32;
    let label = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(at) | SegmentValue::Exact(at)
            if (0..count).contains(at) && at % every == 0 =>
        {
            cut(&columns[*at as usize].name, 12)
        }
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(columns.len().max(1))
        .y_labels(6)
        .x_label_formatter(&label)
        .y_label_formatter(&|y| short_number(*y))
        .y_desc(unit)
        .label_style((FONT, 11))
        .axis_desc_style((FONT, 12))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()?;
    for (at, column) in columns.iter().enumerate() {
        let at = at as i32;
        let mut base = 0.0;
        for (n, value) in column.values.iter().enumerate().filter(|(_, v)| **v > 0.0) {
            let mut bar = Rectangle::new(
                [(SegmentValue::Exact(at), base), (SegmentValue::Exact(at + 1), base + value)],
                colour(n).filled(),
            );
            bar.set_margin(0, 0, 2, 2);
            chart.draw_series(std::iter::once(bar))?;
            base += value;
        }
    }
    Ok(())
}

/// `text` cut to `at` characters, with an ellipsis when it was longer, its controls and
/// bidirectional overrides written visibly (as the page writes text from the data).
fn cut(text: &str, at: usize) -> String {
    let text = crate::text::escape::text(text);
    match text.char_indices().nth(at) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A number as an axis shows it: 1.2k, 3.4M, 0.25.
pub fn short_number(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, suffix) = match magnitude {
        m if m >= 1e9 => (value / 1e9, "G"),
        m if m >= 1e6 => (value / 1e6, "M"),
        m if m >= 1e3 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    let text = match scaled.fract() == 0.0 {
        true => format!("{scaled:.0}"),
        false => {
            let text = if scaled.abs() >= 10.0 { format!("{scaled:.1}") } else { format!("{scaled:.2}") };
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    format!("{text}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(svg: &str, element: &str) -> usize {
        svg.matches(&format!("<{element}")).count()
    }

    #[test]
    fn a_line_chart_has_a_circle_per_point_and_no_other() {
        let series = vec![
            Series { name: "a".into(), points: vec![(0, 1.0), (86_400, 2.0), (172_800, 0.5)] },
            Series { name: "b".into(), points: vec![(86_400, 4.0)] },
        ];
        let svg = time_lines(&series, TimeAxis { hourly: false, offset_seconds: 0 }, "tokens").unwrap();
        assert_eq!(count(&svg, "circle"), 4);
        assert_eq!(count(&svg, "rect"), 0);
        assert!(svg.contains("1970-01-02"), "{svg}");
    }

    #[test]
    fn a_bar_chart_has_a_rectangle_per_value_and_escapes_its_labels() {
        let categories = vec!["<script>alert(1)</script>".to_string(), "b".into(), "c".into()];
        let svg = bars(&categories, &[Some(1.0), None, Some(3.0)], "bytes", 0).unwrap();
        assert_eq!(count(&svg, "rect"), 2);
        assert_eq!(count(&svg, "circle"), 0);
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        let svg = bars(&["a\u{202e}b".to_string()], &[Some(1.0)], "bytes", 0).unwrap();
        assert!(!svg.contains('\u{202e}') && svg.contains("a\\u{202e}b"), "{svg}");
    }

    #[test]
    fn a_column_chart_has_a_rectangle_per_value_above_zero() {
        let columns = vec![
            Column { name: "2026-09-01".into(), values: vec![1.0, 2.0, 0.0] },
            Column { name: "2026-09-02".into(), values: vec![0.0, 0.0, 0.0] },
            Column { name: "<b>".into(), values: vec![0.5, 0.0, 3.0] },
        ];
        let svg = stacked_columns(&columns, "US dollars").unwrap();
        assert_eq!(count(&svg, "rect"), 4);
        assert_eq!(stacked_marks(&columns), 4);
        assert_eq!(count(&svg, "circle"), 0);
        assert!(svg.contains("2026-09-01") && svg.contains("&lt;b&gt;"), "{svg}");
        assert_eq!(count(&stacked_columns(&[], "US dollars").unwrap(), "rect"), 0);
        let one = [Column { name: "2026-09-01".into(), values: vec![2.0] }];
        let svg = stacked_columns(&one, "US dollars").unwrap();
        assert_eq!(count(&svg, "rect"), 1);
        assert!(svg.contains("2026-09-01"), "{svg}");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(short_number(1500.0), "1.5k");
        assert_eq!(short_number(2_000_000.0), "2M");
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(0.0), "0");
        assert_eq!(cut("abcdef", 3), "abc…");
    }
}
