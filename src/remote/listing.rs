//! Objects named by a pattern: `scheme://bucket/folder/*.tgm` lists the
//! folder and keeps the names the pattern's last segment matches
//! (`spec/remote.md` §8).

use futures_util::TryStreamExt;
use object_store::path::Path;

use super::blocking::{block_on, runtime};
use super::options::RemoteOptions;
use super::store::store_for_url;
use crate::error::{Error, ErrorKind, Result};

/// Whether `url` holds a pattern: `*` or `[` in its path, or `?` there
/// in a URL of an object store (`s3://`, `gs://`, `az://`; `?` starts an
/// HTTP URL's query).
pub fn is_pattern(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    let path = rest.split_once('/').map_or("", |(_, p)| p);
    let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    path.contains(['*', '[']) || (!http && path.contains('?'))
}

/// The URLs of the objects directly in the folder of `pattern` whose names
/// match its last segment (`*`, `?`, `[…]` as in shell globs), sorted.
/// Stores that cannot list (`http(s)://`) are refused with the reason; a
/// pattern in a folder segment is refused too.
pub fn list_matching(pattern: &str, opts: &RemoteOptions) -> Result<Vec<String>> {
    let bad = |why: &str| Error::invalid_argument(format!("{pattern}: {why}"));
    let (folder, name) = pattern.rsplit_once('/').ok_or_else(|| bad("not a URL"))?;
    if folder.contains(['*', '?', '[']) {
        return Err(bad("only the last segment of a URL may hold a pattern"));
    }
    if folder.starts_with("http://") || folder.starts_with("https://") {
        return Err(bad(
            "an HTTP server cannot list a folder: name each archive, or use s3://, gs:// or az://",
        ));
    }
    let glob = glob::Pattern::new(name).map_err(|e| bad(&e.to_string()))?;
    let (store, probe) = store_for_url(&format!("{folder}/_"), opts)?;
    let prefix: Path = probe.parts().take(probe.parts().count() - 1).collect();
    let depth = prefix.parts().count() + 1;
    let listed = block_on(runtime()?, async move {
        store
            .list(Some(&prefix))
            .try_collect::<Vec<_>>()
            .await
            .map_err(|e| Error::new(ErrorKind::Remote, format!("{folder}/: listing failed: {e}")))
    })?;
    let mut urls: Vec<String> = listed
        .into_iter()
        .filter(|m| m.location.parts().count() == depth)
        .filter_map(|m| m.location.filename().map(str::to_string))
        .filter(|n| glob.matches(n))
        .map(|n| format!("{folder}/{n}"))
        .collect();
    urls.sort();
    Ok(urls)
}

/// `inputs` with every URL holding a pattern replaced by the objects it
/// names ([`list_matching`], sorted), in order; a pattern naming nothing
/// is an error naming it.
pub fn expand_patterns(inputs: &[String], opts: &RemoteOptions) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(inputs.len());
    for i in inputs {
        if !(crate::file::is_remote_url(i) && is_pattern(i)) {
            out.push(i.clone());
            continue;
        }
        let found = list_matching(i, opts)?;
        if found.is_empty() {
            return Err(Error::invalid_argument(format!("{i}: no object matches")));
        }
        out.extend(found);
    }
    Ok(out)
}
