//! Many archives as one dataset (issue 41, `spec/files.md` §9.5): a
//! folder of small archives served by nginx behind the delaying proxy,
//! opened from one catalogue file (`tgm index`'s output) and, for
//! comparison, one by one without it by tgm and by the reference. Then one
//! object from each archive, as Dask workers read them: one ranged request
//! each, pinned to the ETag the catalogue recorded.

use std::time::Instant;

use crate::readers::Reader;
use crate::scale::{fields, Timed};
use crate::servers::Http;
use crate::Cost;

/// Messages (one ~11 KB field each) in every archive.
const FIELDS_PER_ARCHIVE: usize = 10;

/// The folder the archives and their catalogue file are served from.
const FOLDER: &str = "many";

/// Requests whose path lies in [`FOLDER`] since `mark`; an error answer
/// fails the run.
fn cost_since(http: &Http, mark: usize) -> Result<Cost, String> {
    let requests: Vec<_> = http
        .requests_since(mark)
        .into_iter()
        .filter(|r| r.path.contains(&format!("/{FOLDER}/")))
        .collect();
    if let Some(bad) = requests.iter().find(|r| r.status >= 400) {
        return Err(format!("server answered {bad:?}"));
    }
    Ok(Cost {
        requests: requests.len(),
        bytes: requests.iter().map(|r| r.body_bytes).sum(),
    })
}

/// The catalogue file of `archives` (served at `direct`, named by their
/// `listed` URLs), built as `tgm index` builds it.
fn catalogue_file(direct: &[String], listed: &[String]) -> Result<Vec<u8>, String> {
    let limits = tgm::Limits::default();
    let opts = tgm::remote::RemoteOptions::default();
    let mut out = Vec::new();
    for (url, name) in direct.iter().zip(listed) {
        let src = tgm::remote::RemoteSource::open(url, &opts).map_err(|e| e.to_string())?;
        let f = tgm::file::TgmFile::from_source(src, &limits).map_err(|e| e.to_string())?;
        let cat = tgm::file::archive_catalogue::ArchiveCatalogue::of_file(&f, name, &limits)
            .and_then(|c| c.to_message())
            .map_err(|e| format!("{url}: {e}"))?;
        out.extend_from_slice(&cat);
    }
    Ok(out)
}

/// Runs the comparison over `count` archives behind `proxy` (the
/// delaying proxy's endpoint in front of `http`).
pub fn run(http: &Http, proxy: &str, count: usize) -> Result<Vec<Timed>, String> {
    let mut direct = Vec::with_capacity(count);
    let mut local = Vec::with_capacity(count);
    for a in 0..count {
        let bytes = fields(FIELDS_PER_ARCHIVE, a * FIELDS_PER_ARCHIVE);
        direct.push(http.put(&format!("{FOLDER}/a{a:05}.tgm"), &bytes));
        local.push(bytes);
    }
    let listed: Vec<String> = direct
        .iter()
        .map(|u| u.replace(&http.base_url, proxy))
        .collect();
    let cat_url = http
        .put(
            &format!("{FOLDER}/all.tgmc"),
            &catalogue_file(&direct, &listed)?,
        )
        .replace(&http.base_url, proxy);
    let fields_total = count * FIELDS_PER_ARCHIVE;
    let mut rows = Vec::new();
    let mut timed =
        |operation: String, reader: Reader, f: &mut dyn FnMut() -> Result<(), String>| {
            let mark = http.log_mark();
            let t0 = Instant::now();
            f()?;
            let time = t0.elapsed();
            rows.push(Timed {
                operation,
                reader: reader.name(),
                cost: cost_since(http, mark)?,
                time,
            });
            Ok::<(), String>(())
        };

    let opts = tgm::remote::RemoteOptions::default();
    let limits = tgm::Limits::default();
    let mut opened = Vec::new();
    timed(
        format!("open {count} archives ({fields_total} fields) from their catalogue file"),
        Reader::Tgm,
        &mut || {
            opened = tgm::remote::open_catalogue_file(&cat_url, &opts, &limits, |s| s)
                .map_err(|e| e.to_string())?;
            let n: usize = opened.iter().map(|a| a.file.num_messages()).sum();
            match n == fields_total && opened.iter().all(|a| a.stale.is_none()) {
                true => Ok(()),
                false => Err(format!(
                    "catalogue file: {n} messages, expected {fields_total}"
                )),
            }
        },
    )?;
    timed(
        format!("then one field from each of the {count} archives"),
        Reader::Tgm,
        &mut || {
            for (a, (archive, bytes)) in opened.iter().zip(&local).enumerate() {
                let m = a % FIELDS_PER_ARCHIVE;
                let got = archive
                    .file
                    .decode_object(m, 0, &tgm::DecodeOptions::default())
                    .map_err(|e| e.to_string())?;
                let want = tgm::decode_object(bytes_of_message(bytes, m)?, 0, &Default::default())
                    .map_err(|e| e.to_string())?;
                if got.data != want.data {
                    return Err(format!("{}: field {m} differs", archive.location));
                }
            }
            Ok(())
        },
    )?;
    for reader in [Reader::Tgm, Reader::Reference] {
        timed(
            format!("open the {count} archives one by one, no catalogue file"),
            reader,
            &mut || {
                for url in &listed {
                    let n = reader.open(url)?.messages()?;
                    if n != FIELDS_PER_ARCHIVE {
                        return Err(format!("{}: {url}: {n} messages", reader.name()));
                    }
                }
                Ok(())
            },
        )?;
    }
    Ok(rows)
}

/// Message `m` of the encoded archive `bytes`.
fn bytes_of_message(bytes: &[u8], m: usize) -> Result<&[u8], String> {
    let spans = tgm::scan(bytes);
    let s = spans.get(m).ok_or_else(|| format!("no message {m}"))?;
    Ok(&bytes[s.range()])
}
