//! Where-clauses (`-w mars.param=2t/10u,mars.class!=od`): every clause must
//! hold; `=` holds when the key's value is one of the `/`-separated values,
//! `!=` when it is none of them (a missing key holds for `!=` only).
//! A clause on a field's parameter (`param`, `mars.param`, `shortName`,
//! `paramId`) compares with every name convert-grib stores for it, and
//! `130` names GRIB1's `130.128` (`crate::weather_keys`).

use tgm::GlobalMetadata;

use crate::error::{usage, CliResult};
use crate::tally::Tally;
use crate::weather_keys;

/// The selection flags of the rewriting commands (`set`, `copy`, `export`,
/// `recompress`): `-w` picks whole messages as the reference's tool does,
/// `--objects` picks single objects inside them.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SelectArgs {
    /// Selects whole messages (the reference's meaning): those with an
    /// object matching KEY=V1/V2 or KEY!=V (see `tgm ls --help`).
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
    /// Selects objects: inside the selected messages, only the objects
    /// matching these clauses (same syntax as -w).
    #[arg(long = "objects", value_name = "CLAUSE")]
    pub objects: Vec<String>,
}

/// Parsed [`SelectArgs`], counting what it meets for [`Self::report`].
#[derive(Debug, Clone, Default)]
pub struct Selection {
    messages: Where,
    objects: Where,
    /// The clauses as typed: `-w`'s, else `--objects`'.
    typed: Vec<String>,
    tally: Tally,
}

impl Selection {
    /// Parses both flags.
    pub fn parse(a: &SelectArgs) -> CliResult<Self> {
        Ok(Selection {
            messages: Where::parse(&a.where_clause)?,
            objects: Where::parse(&a.objects)?,
            typed: if a.where_clause.is_empty() {
                a.objects.clone()
            } else {
                a.where_clause.clone()
            },
            tally: Tally::default(),
        })
    }

    /// The selected objects of a message with `meta` and `num_objects`
    /// objects (none when the message is not selected); counted for
    /// [`Self::report`].
    pub fn objects(&self, meta: &GlobalMetadata, num_objects: usize) -> Vec<usize> {
        if !self.messages.matches_message(meta, num_objects) {
            self.tally.message(num_objects, 0, 0);
            return Vec::new();
        }
        let keep: Vec<usize> = (0..num_objects)
            .filter(|&o| self.objects.matches_object(meta, o))
            .collect();
        let brought = if self.messages.0.is_empty() {
            0
        } else {
            keep.iter()
                .filter(|&&o| !self.messages.matches_object(meta, o))
                .count()
        };
        // A message without objects selected by its `_extra_` counts as one.
        let matched = (keep.len() - brought).max(usize::from(num_objects == 0));
        self.tally.message(num_objects, matched, brought);
        keep
    }

    /// Says on stderr when nothing matched and when `-w` brought along
    /// objects that do not match (`tgm COMMAND: …`).
    pub fn report(&self, command: &str) {
        self.tally.report(command, &self.typed);
    }

    /// Whether no clause was given (everything is selected).
    pub fn is_empty(&self) -> bool {
        self.messages.0.is_empty() && self.objects.0.is_empty()
    }

    /// The one object of `file` (named `path` in errors) that the selection
    /// keeps, as (message, object); an error when it keeps none or several.
    #[cfg(any(feature = "nifti", feature = "dicom"))]
    pub fn single<S: tgm::file::ByteSource>(
        &self,
        file: &tgm::TgmFile<S>,
        path: &std::path::Path,
    ) -> CliResult<(usize, usize)> {
        let mut found = Vec::new();
        for m in 0..file.num_messages() {
            let (meta, n) = file
                .with_message(m, |msg| Ok((msg.metadata()?, msg.num_objects())))
                .map_err(|e| crate::error::CliError::Failed(format!("{}: {e}", path.display())))?;
            found.extend(self.objects(&meta, n).into_iter().map(|o| (m, o)));
        }
        match found[..] {
            [one] => Ok(one),
            [] => Err(crate::error::CliError::Failed(format!(
                "{}: no object matches the selection",
                path.display()
            ))),
            _ => Err(crate::error::CliError::Failed(format!(
                "{}: the selection matches {} objects (message {} object {}, message {} object {}…); \
                 this command writes one, narrow -w/--objects",
                path.display(),
                found.len(),
                found[0].0,
                found[0].1,
                found[1].0,
                found[1].1
            ))),
        }
    }

    /// Whether a message is selected whole: it matches -w, and every
    /// object matches --objects.
    pub fn whole(&self, meta: &GlobalMetadata, num_objects: usize) -> bool {
        self.messages.matches_message(meta, num_objects)
            && (0..num_objects).all(|o| self.objects.matches_object(meta, o))
    }
}

/// Points `pick` (`to-nifti`, `to-dicom`) at the one object `select`
/// keeps in `file`, when any clause is given; `--message`/`--object` with
/// a clause is a usage error.
#[cfg(any(feature = "nifti", feature = "dicom"))]
pub fn pick_selected<S: tgm::file::ByteSource>(
    select: &SelectArgs,
    pick: &mut tgm_convert::medical::ObjectPick,
    file: &tgm::TgmFile<S>,
) -> CliResult {
    let sel = Selection::parse(select)?;
    if sel.is_empty() {
        return Ok(());
    }
    if pick.message != 0 || pick.object != 0 {
        return Err(usage(
            "--message/--object and -w/--objects both pick the object; give one of them",
        ));
    }
    (pick.message, pick.object) = sel.single(file, &pick.input)?;
    Ok(())
}

/// `msg` with only the objects `keep` (ascending indices) and their
/// metadata entries.
#[cfg(feature = "netcdf")]
pub fn keep_objects(msg: tgm::DecodedMessage, keep: &[usize]) -> tgm::DecodedMessage {
    let tgm::DecodedMessage {
        mut metadata,
        objects,
    } = msg;
    let pick = |i: &usize| keep.contains(i);
    metadata.base = std::mem::take(&mut metadata.base)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| pick(i))
        .map(|(_, e)| e)
        .collect();
    let objects = objects
        .into_iter()
        .enumerate()
        .filter(|(i, _)| pick(i))
        .map(|(_, o)| o)
        .collect();
    tgm::DecodedMessage { metadata, objects }
}

/// Comparison of one clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// The value is one of the alternatives.
    Eq,
    /// The value is none of the alternatives.
    NotEq,
}

/// One `key=v1/v2` or `key!=v` clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// Dotted key.
    pub key: String,
    /// Comparison.
    pub op: Op,
    /// Alternatives.
    pub values: Vec<String>,
}

/// All clauses given; empty matches everything.
#[derive(Debug, Clone, Default)]
pub struct Where(pub Vec<Clause>);

impl Where {
    /// Parses every `-w` argument; each may hold several comma-separated clauses.
    pub fn parse(args: &[String]) -> CliResult<Self> {
        let mut out = Vec::new();
        for a in args {
            for c in a.split(',').filter(|c| !c.trim().is_empty()) {
                out.push(parse_clause(c.trim())?);
            }
        }
        Ok(Where(out))
    }

    /// Whether object `object` of a message with `meta` matches.
    pub fn matches_object(&self, meta: &GlobalMetadata, object: usize) -> bool {
        self.0.iter().all(|c| c.holds(meta, Some(object)))
    }

    /// Whether a message matches: some object matches, or (for a message
    /// without objects) its `_extra_` section does.
    pub fn matches_message(&self, meta: &GlobalMetadata, num_objects: usize) -> bool {
        if self.0.is_empty() {
            return true;
        }
        if num_objects == 0 {
            return self.0.iter().all(|c| c.holds(meta, None));
        }
        (0..num_objects).any(|o| self.matches_object(meta, o))
    }
}

impl Clause {
    fn holds(&self, meta: &GlobalMetadata, object: Option<usize>) -> bool {
        let found = if weather_keys::is_param_key(&self.key) {
            weather_keys::param_names(meta, object, &self.key)
                .into_iter()
                .any(|v| self.values.iter().any(|w| weather_keys::same_param(v, w)))
        } else {
            meta.lookup(object, &self.key).is_some_and(|v| {
                self.values
                    .iter()
                    .any(|want| tgm::file::value_matches(v, want))
            })
        };
        match self.op {
            Op::Eq => found,
            Op::NotEq => !found,
        }
    }
}

fn parse_clause(s: &str) -> CliResult<Clause> {
    let (key, op, rest) = if let Some((k, r)) = s.split_once("!=") {
        (k, Op::NotEq, r)
    } else if let Some((k, r)) = s.split_once('=') {
        (k, Op::Eq, r)
    } else {
        return Err(usage(format!(
            "where-clause {s:?} is not KEY=VALUE[/VALUE...] or KEY!=VALUE"
        )));
    };
    crate::meta_args::key_path(key)?;
    let values: Vec<String> = rest.split('/').map(str::to_string).collect();
    if values.iter().any(String::is_empty) {
        return Err(usage(format!("where-clause {s:?} has an empty value")));
    }
    Ok(Clause {
        key: key.to_string(),
        op,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tgm::cbor::Value;

    fn meta() -> GlobalMetadata {
        let mut a = tgm::Map::new();
        a.insert("param".into(), Value::from("2t"));
        let mut b = tgm::Map::new();
        b.insert("param".into(), Value::from("10u"));
        GlobalMetadata::with_base(vec![a, b])
    }

    #[test]
    fn alternatives_negation_and_conjunction() {
        let m = meta();
        let w = Where::parse(&["param=2t/msl".into()]).unwrap();
        assert!(w.matches_object(&m, 0) && !w.matches_object(&m, 1));
        let w = Where::parse(&["param!=2t".into()]).unwrap();
        assert!(!w.matches_object(&m, 0) && w.matches_object(&m, 1));
        let w = Where::parse(&["param=2t,param=10u".into()]).unwrap();
        assert!(!w.matches_object(&m, 0) && !w.matches_object(&m, 1));
        let w = Where::parse(&["missing!=x".into()]).unwrap();
        assert!(w.matches_object(&m, 0));
    }

    #[test]
    fn malformed_clauses_are_refused() {
        for bad in ["param", "a..b=1", "=x", "p="] {
            assert!(Where::parse(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
