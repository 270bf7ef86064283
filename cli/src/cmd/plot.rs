//! `tgm plot`: a PNG of one object — a field, a slice, or three orthogonal
//! mid-slices of a volume — with a title from its metadata and a colour
//! bar (`spec/plot.md`). Only the chosen object is decoded.

use std::path::PathBuf;

use tgm::stats::{Stats, Summary, Value as StatValue};
use tgm::{GlobalMetadata, ObjectDescriptor};

use crate::error::{CliError, CliResult};
use crate::fmt::{cell, shape_str};
use crate::input::{finish_read, open_all_readable};
use crate::output::{check_output, Sink};
use crate::plot::colour::{short, Cmap, Range};
use crate::plot::geo;
use crate::plot::medical::{self, Convention};
use crate::plot::panel::{Orientation, Panel};
use crate::plot::render::{render, Picture};
use crate::plot::slice::{planes, SliceArg};
use crate::plot::values::Elements;
use crate::where_clause::{SelectArgs, Selection};

/// Arguments of `tgm plot`.
#[derive(clap::Args)]
#[command(
    after_help = "Draws the first selected object (or --object N of the first selected \
message): a 2-D field as one panel, a 3-D or 4-D volume as three orthogonal slices through \
its middle, side by side. GRIB fields (the `geography` of convert-grib) are drawn north up, \
reduced Gaussian grids row by row on their latitudes; medical volumes (`geometry`) as axial, \
coronal and sagittal planes in the --convention stated in the picture; variables whose \
latitude coordinate (convert-netcdf's dim_names) runs south to north are turned north up. \
NaN (and masked \
values) are transparent. The default colour range is the object's finite minimum to maximum \
(symmetric about 0 for rdbu-r); --range fixes it.\n\n\
Examples:\n  tgm plot era5.tgm -w mars.param=2t -o t2m.png\n  \
tgm plot ct.tgm --slice 0=40 --cmap greys --range -200:400 -o slice.png"
)]
pub struct Args {
    /// File to read (`-` for stdin, or a URL).
    pub file: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Object index inside the first selected message.
    #[arg(long, value_name = "N")]
    pub object: Option<usize>,
    /// Fixes an axis at an index (repeatable), as 0=12.
    #[arg(long = "slice", value_name = "AXIS=I")]
    pub slices: Vec<SliceArg>,
    /// Colour map.
    #[arg(long, value_enum, default_value_t = Cmap::Auto)]
    pub cmap: Cmap,
    /// Values at the bottom and top of the colour scale, as LOW:HIGH.
    #[arg(long, value_name = "LOW:HIGH", allow_hyphen_values = true)]
    pub range: Option<Range>,
    /// How medical volumes face the viewer.
    #[arg(long, value_enum, default_value_t = Convention::Radiological)]
    pub convention: Convention,
    /// PNG to write (`-` for stdout).
    #[arg(short, long, value_name = "PNG")]
    pub output: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// Runs `tgm plot`.
pub fn run(a: Args, threads: usize) -> CliResult {
    let sel = Selection::parse(&a.select)?;
    check_output(&a.output, &[&a.file], a.force)?;
    let archives = open_all_readable(std::slice::from_ref(&a.file))?;
    let f = &archives[0];
    let label = f.label().display().to_string();
    let fail = |m: usize, o: usize, e: String| {
        CliError::Failed(format!("{label}: message {m} object {o}: {e}"))
    };
    let mut png = None;
    for mi in 0..f.len() {
        let (meta, descs) = f.header(mi)?;
        let keep = sel.objects(&meta, descs.len());
        if keep.is_empty() {
            continue;
        }
        let target = match a.object {
            Some(n) if n >= descs.len() => {
                return Err(CliError::Failed(format!(
                    "{label}: --object {n}: message {mi} has {} objects (0 to {})",
                    descs.len(),
                    descs.len().saturating_sub(1)
                )))
            }
            Some(n) if !keep.contains(&n) => {
                return Err(CliError::Failed(format!(
                    "{label}: --object {n}: object {n} of message {mi} does not match --objects"
                )))
            }
            Some(n) => n,
            None => keep[0],
        };
        let mut buf = Vec::new();
        let mut north = None;
        if let Some((axis, coord)) = tgm::view::latitude_axis(&meta, &descs, target) {
            f.decode_each_into(
                mi,
                threads,
                |o| o == coord,
                &mut buf,
                |_, d, data| {
                    // A coordinate that cannot be read leaves the rows as stored.
                    if let Ok(lat) = Elements::new(d, data) {
                        let n = lat.len();
                        north = (n > 1).then(|| (axis, lat.get(0) < lat.get(n - 1)));
                    }
                    Ok(())
                },
            )?;
        }
        f.decode_each_into(
            mi,
            threads,
            |o| o == target,
            &mut buf,
            |oi, d, data| {
                let at = Where {
                    file: &label,
                    message: mi,
                    object: oi,
                    meta: &meta,
                    desc: d,
                };
                png = Some(picture(&a, &at, data, north, threads).map_err(|e| fail(mi, oi, e))?);
                Ok(())
            },
        )?;
        break;
    }
    let Some(png) = png else {
        // On a damaged file the damage is the reason, reported with its
        // offset (exit 1), before saying that nothing intact matched.
        finish_read(&mut std::io::sink(), &archives)?;
        return Err(CliError::Failed(format!(
            "{label}: no object matches the selection"
        )));
    };
    let mut sink = Sink::open(&a.output, &[&a.file], a.force)?;
    sink.write_all(&png)?;
    sink.finish()?;
    finish_read(&mut std::io::sink(), &archives)
}

/// The object being drawn.
struct Where<'a> {
    file: &'a str,
    message: usize,
    object: usize,
    meta: &'a GlobalMetadata,
    desc: &'a ObjectDescriptor,
}

impl Where<'_> {
    fn key(&self, k: &str) -> Option<&tgm::cbor::Value> {
        self.meta.lookup(Some(self.object), k)
    }

    fn text(&self, k: &str) -> Option<String> {
        self.key(k).map(cell).filter(|s| !s.is_empty())
    }

    /// The title: what the field is, then where it is in the file.
    fn title(&self) -> Vec<String> {
        let first = |keys: &[&str]| keys.iter().find_map(|k| self.text(k));
        let name = first(&[
            "name",
            "grib.shortName",
            "mars.param",
            "param",
            "dicom.attributes.SeriesDescription",
            "nifti.descrip",
        ]);
        let mut parts: Vec<String> = name.iter().cloned().collect();
        if let Some(p) = first(&["mars.param", "param"]).filter(|p| Some(p) != name.as_ref()) {
            parts.push(format!("param {p}"));
        }
        if let Some(l) = self.text("mars.levelist") {
            let t = self.text("mars.levtype").unwrap_or_default();
            parts.push(format!("level {l} {t}").trim_end().to_string());
        } else if let Some(t) = self.text("mars.levtype") {
            parts.push(t);
        }
        for (k, what) in [
            ("mars.date", ""),
            ("mars.time", "time "),
            ("mars.step", "step "),
        ] {
            if let Some(v) = self.text(k) {
                parts.push(format!("{what}{v}"));
            }
        }
        if let Some(d) = self
            .text("dicom.attributes.SeriesDescription")
            .filter(|d| Some(d) != name.as_ref())
        {
            parts.push(d);
        }
        if let Some(m) = first(&["dicom.attributes.Modality", "geometry.modality"]) {
            parts.push(m);
        }
        let place = format!(
            "{} message {} object {}: {} {}",
            self.file,
            self.message,
            self.object,
            self.desc.dtype,
            shape_str(&self.desc.shape)
        );
        if parts.is_empty() {
            vec![place]
        } else {
            vec![parts.join(", "), place]
        }
    }
}

/// The finite minimum and maximum of the object, from the library's
/// statistics (`spec/stats.md`).
fn min_max(d: &ObjectDescriptor, data: &[u8], threads: usize) -> Result<Summary, String> {
    let n = d.num_elements().map_err(|e| e.to_string())?;
    match tgm::stats::stats(d.dtype, tgm::ByteOrder::native(), n, data, threads) {
        Ok(Stats::Real(s)) | Ok(Stats::Bits { summary: s, .. }) => Ok(s),
        Ok(Stats::Complex { .. }) => Err("complex objects cannot be drawn".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn as_f64(v: Option<StatValue>) -> Option<f64> {
    match v? {
        StatValue::Int(i) => Some(i as f64),
        StatValue::Float(f) => Some(f),
    }
}

/// The PNG of one decoded object; `north` is its latitude axis and
/// whether that axis runs south to north.
fn picture(
    a: &Args,
    at: &Where,
    data: &[u8],
    north: Option<(usize, bool)>,
    threads: usize,
) -> Result<Vec<u8>, String> {
    let elements = Elements::new(at.desc, data)?;
    if elements.is_empty() {
        return Err(format!(
            "shape {}: the object has no values to draw",
            shape_str(&at.desc.shape)
        ));
    }
    let s = min_max(at.desc, data, threads)?;
    let (min, max) = (as_f64(s.min), as_f64(s.max));
    let geometry = at.key("geometry");
    let cmap = match a.cmap {
        Cmap::Auto if geometry.is_some() => Cmap::Greys,
        Cmap::Auto => {
            let (lo, hi) = a.range.map_or((min, max), |r| (Some(r.lo), Some(r.hi)));
            if lo.is_some_and(|l| l < 0.0) && hi.is_some_and(|h| h > 0.0) {
                Cmap::RdbuR
            } else {
                Cmap::Viridis
            }
        }
        c => c,
    };
    let range = a
        .range
        .unwrap_or_else(|| Range::of_data(min, max, cmap == Cmap::RdbuR));
    let shape = &at.desc.shape;
    let mut convention = None;
    let panels = match geo::panel(at.key("geography"), shape, elements.len())? {
        Some(p) if a.slices.is_empty() => vec![p],
        _ => planes(shape, &a.slices)?
            .iter()
            .map(|plane| {
                let o = medical::orientation(geometry, shape, plane, a.convention);
                if o.is_some() {
                    convention = Some(a.convention);
                }
                let o = o.unwrap_or(match north {
                    Some((axis, south_first)) if axis == plane.rows => Orientation {
                        flip_v: south_first,
                        spacing: (1.0, 1.0),
                        edges: Some(["", "", "N", "S"]),
                        ..Default::default()
                    },
                    _ => Orientation {
                        spacing: (1.0, 1.0),
                        ..Default::default()
                    },
                });
                Panel::grid(shape, plane, &o)
            })
            .collect(),
    };
    let mut title = at.title();
    let mut scale = format!(
        "colour map {}, {} to {}; NaN transparent",
        cmap.name(),
        short(range.lo),
        short(range.hi)
    );
    if let Some(c) = convention {
        scale = format!("{scale}; {}", c.statement());
    }
    title.push(scale);
    render(&Picture {
        title,
        panels,
        cmap,
        range,
        elements: &elements,
    })
}
