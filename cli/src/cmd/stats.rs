//! `tgm stats`: per object count, min, max, mean, standard deviation and
//! NaN/±Inf counts, computed by the library (`tgm::stats`, `spec/stats.md`).

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value as Json};
use tgm::stats::{Stats, Summary, Value};
use tgm::{GlobalMetadata, ObjectDescriptor};

use crate::error::CliResult;
use crate::fmt::{cell, shape_str};
use crate::input::{finish_read, open_all_readable};
use crate::output::stdout;
use crate::where_clause::{SelectArgs, Selection};

/// Arguments of `tgm stats`.
#[derive(clap::Args)]
#[command(after_help = "Rows: FILE, MESSAGE, OBJECT, FIELD (the object's name, \
else mars.param, else param), DTYPE, SHAPE, COUNT, MIN, MAX, MEAN, STD (population), \
NAN, +INF, -INF, TRUE (set bits of a bitmask); min to std over the finite values; \
complex objects get a row per part. Selection: -w picks whole messages, --objects \
objects inside them.\n\n\
Examples:\n  tgm stats out.tgm\n  tgm stats -j --objects mars.param=130 out.tgm")]
pub struct Args {
    /// Files to read (`-` for stdin, or a URL).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub select: SelectArgs,
    /// One JSON object per line (NDJSON).
    #[arg(short, long)]
    pub json: bool,
}

/// Runs `tgm stats`, decoding the selected objects one by one into one
/// buffer, on `threads` workers.
pub fn run(a: Args, threads: usize) -> CliResult {
    let sel = Selection::parse(&a.select)?;
    let archives = open_all_readable(&a.files)?;
    let mut out = stdout();
    if !a.json {
        writeln!(
            out,
            "file\tmessage\tobject\tfield\tdtype\tshape\tcount\tmin\tmax\tmean\tstd\tnan\t+inf\t-inf\ttrue"
        )?;
    }
    let mut buf = Vec::new();
    for f in &archives {
        let label = f.label().display().to_string();
        for mi in 0..f.len() {
            let (meta, descs) = f.header(mi)?;
            let keep = sel.objects(&meta, descs.len());
            if keep.is_empty() {
                continue;
            }
            let want = |o: usize| keep.contains(&o);
            f.decode_each_into(mi, threads, want, &mut buf, |oi, d, data| {
                let s = object_stats(d, data, threads).map_err(|e| {
                    crate::error::CliError::Failed(format!("{label}: {}", e.in_message(mi)))
                })?;
                let row = Row {
                    label: &label,
                    message: mi,
                    object: oi,
                    meta: &meta,
                    desc: d,
                };
                if a.json {
                    writeln!(out, "{}", row.json(&s))?;
                } else {
                    row.table(&mut out, &s)?;
                }
                Ok(())
            })?;
        }
    }
    sel.report("stats");
    finish_read(&mut out, &archives)
}

/// The statistics of one decoded object (native byte order).
fn object_stats(d: &ObjectDescriptor, data: &[u8], threads: usize) -> tgm::Result<Stats> {
    let n = d.num_elements()?;
    tgm::stats::stats(d.dtype, tgm::ByteOrder::native(), n, data, threads)
}

/// Where a row's object is.
struct Row<'a> {
    label: &'a str,
    message: usize,
    object: usize,
    meta: &'a GlobalMetadata,
    desc: &'a ObjectDescriptor,
}

impl Row<'_> {
    /// The first of `keys` the object's metadata has.
    fn key(&self, keys: &[&str]) -> Option<&tgm::cbor::Value> {
        keys.iter()
            .find_map(|k| self.meta.lookup(Some(self.object), k))
    }

    fn table(&self, out: &mut impl Write, s: &Stats) -> CliResult {
        let field = self
            .key(&["name", "mars.param", "param"])
            .map_or("-".into(), cell);
        let head = format!("{}\t{}\t{}\t{field}", self.label, self.message, self.object);
        let shape = shape_str(&self.desc.shape);
        let dtype = self.desc.dtype;
        match s {
            Stats::Real(x) => writeln!(out, "{head}\t{dtype}\t{shape}\t{}\t-", cells(x))?,
            Stats::Bits { summary, ones } => {
                writeln!(out, "{head}\t{dtype}\t{shape}\t{}\t{ones}", cells(summary))?
            }
            Stats::Complex { real, imag } => {
                for (part, x) in [("real", real), ("imag", imag)] {
                    writeln!(out, "{head}\t{dtype}:{part}\t{shape}\t{}\t-", cells(x))?;
                }
            }
        }
        Ok(())
    }

    fn json(&self, s: &Stats) -> Json {
        let meta = |keys: &[&str]| {
            self.key(keys)
                .map_or(Json::Null, crate::meta_args::to_shown_json)
        };
        let mut row = json!({
            "file": self.label,
            "message": self.message,
            "object": self.object,
            "name": meta(&["name"]),
            "param": meta(&["mars.param", "param"]),
            "dtype": self.desc.dtype.name(),
            "shape": self.desc.shape,
        });
        match s {
            Stats::Real(x) => merge(&mut row, summary_json(x)),
            Stats::Bits { summary, ones } => {
                merge(&mut row, summary_json(summary));
                row["true"] = json!(ones);
            }
            Stats::Complex { real, imag } => {
                row["real"] = summary_json(real);
                row["imag"] = summary_json(imag);
            }
        }
        row
    }
}

/// The statistics cells of a table row, `-` where there is no value.
fn cells(s: &Summary) -> String {
    let v = |x: Option<Value>| match x {
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(f)) => f.to_string(),
        None => "-".into(),
    };
    let f = |x: Option<f64>| x.map_or("-".into(), |x| x.to_string());
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        s.count,
        v(s.min),
        v(s.max),
        f(s.mean),
        f(s.std),
        s.nan,
        s.pos_inf,
        s.neg_inf
    )
}

fn summary_json(s: &Summary) -> Json {
    let v = |x: Option<Value>| match x {
        Some(Value::Int(i)) => i64::try_from(i)
            .map(Json::from)
            .or_else(|_| u64::try_from(i).map(Json::from))
            .unwrap_or(Json::Null),
        Some(Value::Float(f)) => json!(f),
        None => Json::Null,
    };
    json!({
        "count": s.count,
        "min": v(s.min),
        "max": v(s.max),
        "mean": s.mean,
        "std": s.std,
        "nan": s.nan,
        "pos_inf": s.pos_inf,
        "neg_inf": s.neg_inf,
    })
}

fn merge(row: &mut Json, extra: Json) {
    if let (Some(r), Json::Object(e)) = (row.as_object_mut(), extra) {
        r.extend(e);
    }
}
