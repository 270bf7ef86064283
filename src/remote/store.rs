//! URLs to object stores, configured from the environment
//! (`spec/remote.md` §1).

use std::sync::Arc;

use object_store::path::Path;
use object_store::{BackoffConfig, ClientConfigKey, ClientOptions, ObjectStore, RetryConfig};

use super::options::RemoteOptions;
use crate::error::{Error, Result};

fn retry(o: &RemoteOptions) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: o.backoff,
            max_backoff: o.max_backoff,
            base: 2.0,
        },
        max_retries: o.retries as usize,
        retry_timeout: o.timeout.saturating_mul(o.retries.saturating_add(1)),
    }
}

fn ms(d: std::time::Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

fn bad_url(url: &str, why: &str) -> Error {
    Error::invalid_argument(format!("{url}: {why}"))
}

/// `(bucket, key)` of `scheme://bucket/key`.
fn bucket_key<'u>(url: &'u str, rest: &'u str) -> Result<(&'u str, &'u str)> {
    let (b, k) = rest
        .split_once('/')
        .ok_or_else(|| bad_url(url, "expected scheme://bucket/key"))?;
    if b.is_empty() || k.is_empty() {
        return Err(bad_url(url, "expected scheme://bucket/key"));
    }
    Ok((b, k))
}

/// The storage options of `o` as keys of one store's configuration; an
/// unknown key is an error naming it and the URL.
fn config<K: std::str::FromStr>(url: &str, o: &RemoteOptions) -> Result<Vec<(K, String)>> {
    o.storage_options
        .iter()
        .map(|(k, v)| {
            let key = k
                .parse::<K>()
                .map_err(|_| bad_url(url, &format!("unknown storage option {k:?}")))?;
            Ok((key, v.clone()))
        })
        .collect()
}

fn path_of(url: &str, key: &str) -> Result<Path> {
    let key = key.split(['?', '#']).next().unwrap_or_default();
    Path::from_url_path(key).map_err(|e| bad_url(url, &e.to_string()))
}

/// The store serving `url` and the object's path in it. `http(s)://host/p`
/// reads by range requests; `s3://`, `gs://` and `az://` take their
/// credentials, region and endpoint from the environment as
/// `object_store`'s `from_env` builders do (`AWS_*`, `GOOGLE_*`,
/// `AZURE_*`; for an S3-compatible server on plain HTTP,
/// `AWS_ENDPOINT_URL` and `AWS_ALLOW_HTTP=true`), then from
/// [`RemoteOptions::storage_options`].
pub fn store_for_url(url: &str, o: &RemoteOptions) -> Result<(Arc<dyn ObjectStore>, Path)> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad_url(url, "not a URL"))?;
    let fail = |e: object_store::Error| bad_url(url, &e.to_string());
    let timeout = ClientConfigKey::Timeout;
    let connect = ClientConfigKey::ConnectTimeout;
    // A cloud store: its builder, given the timeouts, retries and storage
    // options of `o` as keys `K` of its configuration, and the object's
    // path `key`.
    macro_rules! cloud {
        ($builder:expr, $key:expr) => {{
            let mut b = $builder
                .with_config(K::Client(timeout), ms(o.timeout))
                .with_config(K::Client(connect), ms(o.connect_timeout))
                .with_retry(retry(o));
            for (k, v) in config::<K>(url, o)? {
                b = b.with_config(k, v);
            }
            let store = b.build().map_err(fail)?;
            Ok((Arc::new(store), path_of(url, $key)?))
        }};
    }
    match scheme {
        "http" | "https" => {
            let (host, p) = rest.split_once('/').unwrap_or((rest, ""));
            if host.is_empty() || p.is_empty() {
                return Err(bad_url(url, "expected http(s)://host/path"));
            }
            let client = ClientOptions::new()
                .with_allow_http(scheme == "http")
                .with_timeout(o.timeout)
                .with_connect_timeout(o.connect_timeout);
            let mut b = object_store::http::HttpBuilder::new()
                .with_url(format!("{scheme}://{host}"))
                .with_client_options(client)
                .with_retry(retry(o));
            for (k, v) in config::<ClientConfigKey>(url, o)? {
                b = b.with_config(k, v);
            }
            let store = b.build().map_err(fail)?;
            Ok((Arc::new(store), path_of(url, p)?))
        }
        "s3" | "s3a" => {
            use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey as K};
            let (bucket, key) = bucket_key(url, rest)?;
            cloud!(AmazonS3Builder::from_env().with_bucket_name(bucket), key)
        }
        "gs" => {
            use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey as K};
            let (bucket, key) = bucket_key(url, rest)?;
            cloud!(
                GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket),
                key
            )
        }
        "az" | "azure" => {
            use object_store::azure::{AzureConfigKey as K, MicrosoftAzureBuilder};
            let (container, key) = bucket_key(url, rest)?;
            cloud!(
                MicrosoftAzureBuilder::from_env().with_container_name(container),
                key
            )
        }
        _ => Err(bad_url(
            url,
            "unsupported scheme (http, https, s3, gs and az are)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_into_store_and_path() {
        let o = RemoteOptions::default();
        let (_, p) = store_for_url("http://127.0.0.1:9/a/b%20c.tgm", &o).unwrap();
        assert_eq!(p.as_ref(), "a/b c.tgm");
        for bad in [
            "ftp://x/y",
            "http://host",
            "http:///x",
            "s3://bucket",
            "s3:///key",
            "nothing",
        ] {
            let e = store_for_url(bad, &o).unwrap_err();
            assert_eq!(e.kind(), &crate::ErrorKind::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn storage_options_are_store_keys_and_unknown_ones_are_named() {
        let known = |pairs: &[(&str, &str)]| {
            RemoteOptions::default().with_storage_options(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        let http = known(&[("allow_http", "true"), ("user_agent", "x")]);
        store_for_url("http://127.0.0.1:9/a.tgm", &http).unwrap();
        let s3 = known(&[
            ("endpoint", "http://127.0.0.1:9"),
            ("allow_http", "true"),
            ("region", "us-east-1"),
        ]);
        store_for_url("s3://bucket/a.tgm", &s3).unwrap();
        for url in ["http://127.0.0.1:9/a.tgm", "s3://bucket/a.tgm"] {
            let e = store_for_url(url, &known(&[("no_such_key", "1")])).unwrap_err();
            assert_eq!(e.kind(), &crate::ErrorKind::InvalidArgument);
            assert!(e.to_string().contains("no_such_key"), "{e}");
            assert!(e.to_string().contains(url), "{e}");
        }
    }
}
