//! Transcripts in object stores (`s3://bucket/prefix`, `gs://`, `az://`): what makes a path
//! remote, the one registry of stores every session, scheduler and executor of a process reads
//! through (each bucket's store made once, on first use, from the usual environment and, for
//! S3, the AWS profile files), every wait on a store bounded by [`TIMEOUT_VARIABLE`], and the
//! listing that discovery uses in place of a walk (an object whose key no store path can name
//! left out with a warning, the rest listed).

use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::object_store::ObjectStoreRegistry;
use futures::StreamExt;
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path as StorePath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, RetryConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use url::Url;

/// The variable that bounds every wait on a store, in seconds (`TXQ_STORE_TIMEOUT=10`, `0.5`): a
/// request's answer, and all the retries of one that failed. docs/cli.md documents it.
pub const TIMEOUT_VARIABLE: &str = "TXQ_STORE_TIMEOUT";

/// How long a store is waited for when [`TIMEOUT_VARIABLE`] is not set.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a connection to a store may take at most (less when the timeout is shorter).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The schemes of the stores txq reads: `s3://`, `gs://`, and Azure's `az://` (also `abfs://`
/// and `abfss://`).
pub const SCHEMES: &[&str] = &["s3", "s3a", "gs", "az", "abfs", "abfss"];

/// Whether `path` names an object in a store (`s3://bucket/key`) rather than a local file.
pub fn is_remote(path: &Path) -> bool {
    scheme_of(path).is_some()
}

/// The scheme of a remote path (`s3` of `s3://bucket/key`).
fn scheme_of(path: &Path) -> Option<&str> {
    let text = path.to_str()?;
    let (scheme, rest) = text.split_once("://")?;
    (SCHEMES.contains(&scheme) && !rest.is_empty()).then_some(scheme)
}

/// A remote path taken apart: the store's URL (`s3://bucket`) and the object's key in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePath {
    pub store: Url,
    pub key: StorePath,
}

impl RemotePath {
    /// `s3://bucket/a/b.jsonl` as the store `s3://bucket` and the key `a/b.jsonl`; an error that
    /// says what is wrong with it otherwise.
    pub fn parse(path: &Path) -> Result<RemotePath, String> {
        let text = path.to_str().ok_or("not UTF-8")?;
        let (scheme, rest) = text.split_once("://").ok_or("no scheme")?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err("no bucket named after the scheme".into());
        }
        let store = Url::parse(&format!("{scheme}://{bucket}")).map_err(|e| format!("{e}"))?;
        let key =
            StorePath::parse(key.trim_end_matches('/')).map_err(|e| format!("not an object key: {e}"))?;
        Ok(RemotePath { store, key })
    }

    /// The path of one object of this store, as txq shows it (`s3://bucket/key`).
    pub fn path_of(store: &Url, key: &StorePath) -> PathBuf {
        let host = store.host_str().unwrap_or_default();
        PathBuf::from(format!("{}://{host}/{key}", store.scheme()))
    }
}

/// The stores of this process: local files, and one store per bucket made on first use from the
/// environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`); a store registered by hand takes a bucket's place.
#[derive(Debug, Default)]
pub struct StoreRegistry {
    stores: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
    /// The stores made here that list a page at a time from any key on (S3, Google Cloud
    /// Storage): a listing that meets a key no store path can name goes on around it.
    pages: Mutex<HashMap<String, Pages>>,
}

/// A store that lists a page at a time, from any key on.
#[derive(Clone)]
struct Pages(Arc<dyn PaginatedListStore>);

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pages")
    }
}

/// The store of this machine's files, one per process ([`super::read`] reads its files on the
/// reader's own thread).
pub fn local_store() -> Arc<dyn ObjectStore> {
    static STORE: OnceLock<Arc<dyn ObjectStore>> = OnceLock::new();
    STORE.get_or_init(|| Arc::new(object_store::local::LocalFileSystem::new())).clone()
}

/// The registry of this process, shared by the corpus's reads and every session's runtime.
pub fn registry() -> Arc<StoreRegistry> {
    static REGISTRY: OnceLock<Arc<StoreRegistry>> = OnceLock::new();
    REGISTRY.get_or_init(|| Arc::new(StoreRegistry::default())).clone()
}

/// The key of a store: `scheme://host[:port]`, as DataFusion's own registry keys it.
fn key_of(url: &Url) -> String {
    format!("{}://{}", url.scheme(), &url[url::Position::BeforeHost..url::Position::AfterPort])
}

impl StoreRegistry {
    /// The store of `url` (`s3://bucket`), made on first use.
    pub fn store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>, object_store::Error> {
        if url.scheme() == "file" {
            return Ok(local_store());
        }
        let key = key_of(url);
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(store) = stores.get(&key) {
            return Ok(store.clone());
        }
        let (store, pages) = build(url)?;
        if let Some(pages) = pages {
            self.pages.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), Pages(pages));
        }
        stores.insert(key, store.clone());
        Ok(store)
    }

    /// The store of `url` as one that lists a page at a time, when it was made here and can.
    fn pages(&self, url: &Url) -> Option<Arc<dyn PaginatedListStore>> {
        self.pages.lock().unwrap_or_else(|e| e.into_inner()).get(&key_of(url)).map(|p| p.0.clone())
    }
}

impl ObjectStoreRegistry for StoreRegistry {
    fn register_store(&self, url: &Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        if url.scheme() == "file" {
            return None;
        }
        self.pages.lock().unwrap_or_else(|e| e.into_inner()).remove(&key_of(url));
        self.stores.lock().unwrap_or_else(|e| e.into_inner()).insert(key_of(url), store)
    }

    fn deregister_store(&self, url: &Url) -> DfResult<Arc<dyn ObjectStore>> {
        self.pages.lock().unwrap_or_else(|e| e.into_inner()).remove(&key_of(url));
        let removed = self.stores.lock().unwrap_or_else(|e| e.into_inner()).remove(&key_of(url));
        removed.ok_or_else(|| DataFusionError::Execution(format!("no object store for {url}")))
    }

    fn get_store(&self, url: &Url) -> DfResult<Arc<dyn ObjectStore>> {
        self.store(url).map_err(|e| DataFusionError::ObjectStore(Box::new(e)))
    }
}

/// A store for `url` from the environment: S3 from `AWS_*` (and, without keys in it, the
/// profile of `AWS_PROFILE` in `~/.aws/credentials` and `~/.aws/config`), Google Cloud Storage
/// from `GOOGLE_*`, Azure from `AZURE_*`; each waiting for an answer at most [`TIMEOUT_VARIABLE`]
/// seconds, retries included. With it, the same store as one that lists a page at a time.
type Built = (Arc<dyn ObjectStore>, Option<Arc<dyn PaginatedListStore>>);

fn build(url: &Url) -> Result<Built, object_store::Error> {
    use object_store::ClientConfigKey::{ConnectTimeout, Timeout};
    let bucket = url.host_str().unwrap_or_default();
    let timeout = store_timeout()?;
    let (request, connect) = (millis(timeout), millis(timeout.min(CONNECT_TIMEOUT)));
    let retry = RetryConfig { retry_timeout: timeout, ..RetryConfig::default() };
    Ok(match url.scheme() {
        "s3" | "s3a" => {
            use object_store::aws::AmazonS3ConfigKey::Client;
            let mut builder = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
            for (key, value) in profile::settings() {
                builder = builder.with_config(key, value);
            }
            let builder =
                builder.with_config(Client(Timeout), request).with_config(Client(ConnectTimeout), connect);
            let store = Arc::new(builder.with_retry(retry).build()?);
            (store.clone(), Some(store))
        }
        "gs" => {
            use object_store::gcp::GoogleConfigKey::Client;
            let builder = object_store::gcp::GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket);
            let builder =
                builder.with_config(Client(Timeout), request).with_config(Client(ConnectTimeout), connect);
            let store = Arc::new(builder.with_retry(retry).build()?);
            (store.clone(), Some(store))
        }
        "az" | "abfs" | "abfss" => {
            use object_store::azure::AzureConfigKey::Client;
            let builder = object_store::azure::MicrosoftAzureBuilder::from_env().with_container_name(bucket);
            let builder =
                builder.with_config(Client(Timeout), request).with_config(Client(ConnectTimeout), connect);
            (Arc::new(builder.with_retry(retry).build()?), None)
        }
        other => {
            return Err(object_store::Error::NotSupported {
                source: format!("no object store for the scheme {other}://").into(),
            });
        }
    })
}

/// How long a store is waited for: [`TIMEOUT_VARIABLE`] seconds, else [`DEFAULT_TIMEOUT`].
fn store_timeout() -> Result<Duration, object_store::Error> {
    let Some(value) = std::env::var_os(TIMEOUT_VARIABLE) else { return Ok(DEFAULT_TIMEOUT) };
    let text = value.to_string_lossy();
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| *seconds > 0.0)
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| object_store::Error::Generic {
            store: "txq",
            source: format!(
                "{TIMEOUT_VARIABLE}={}: not a number of seconds above 0 (give 30, or 0.5)",
                crate::text::escape::text(&text)
            )
            .into(),
        })
}

/// A duration as the store's settings take it (`1500ms`).
fn millis(duration: Duration) -> String {
    format!("{}ms", duration.as_millis().max(1))
}

/// What a remote place given holds: the objects under it (or the one object it names).
#[derive(Debug)]
pub struct Listing {
    pub objects: Vec<ObjectMeta>,
    /// The place names one object, not a prefix.
    pub is_object: bool,
    /// What was left out, one warning each: an object whose key no store path can name (a
    /// segment `..` or `.`, an empty one of `//`, a control character).
    pub warnings: Vec<String>,
}

/// Lists every remote place among `paths`, at once; an error names the place and why it cannot
/// be listed (no bucket, no credentials, refused).
pub async fn list_all(paths: &[PathBuf]) -> crate::error::Result<HashMap<PathBuf, Listing>> {
    let remote: Vec<&PathBuf> = paths.iter().filter(|p| is_remote(p)).collect();
    let listings = futures::future::join_all(remote.iter().map(|path| list(path))).await;
    remote.into_iter().zip(listings).map(|(path, listing)| Ok((path.clone(), listing?))).collect()
}

/// The objects under one remote place, by key; the place itself when it is one object.
async fn list(path: &Path) -> crate::error::Result<Listing> {
    let unreachable = |why: String| crate::error::Error::Path { path: path.to_path_buf(), why };
    let cannot_list = |e: object_store::Error| unreachable(format!("cannot list: {}", short(&e)));
    let place = RemotePath::parse(path).map_err(unreachable)?;
    let store = registry().store(&place.store).map_err(|e| unreachable(short(&e)))?;
    let prefix = (!place.key.as_ref().is_empty()).then_some(&place.key);
    let mut objects = Vec::new();
    let mut warnings = Vec::new();
    let mut stream = store.list(prefix);
    while let Some(object) = stream.next().await {
        match object {
            Ok(object) => objects.push(object),
            // A key no store path can name fails its whole page: listed again around it.
            Err(e @ object_store::Error::InvalidPath { .. }) => {
                let Some(pages) = registry().pages(&place.store) else { return Err(cannot_list(e)) };
                (objects, warnings) =
                    list_around_odd_keys(pages.as_ref(), &place).await.map_err(cannot_list)?;
                break;
            }
            Err(e) => return Err(cannot_list(e)),
        }
    }
    if objects.is_empty()
        && warnings.is_empty()
        && let Some(key) = prefix
    {
        // Not a prefix of any object: maybe an object itself.
        match store.head(key).await {
            Ok(object) => return Ok(Listing { objects: vec![object], is_object: true, warnings }),
            Err(object_store::Error::NotFound { .. }) => {
                return Err(unreachable("no such object, and no object under it".into()));
            }
            Err(e) => return Err(unreachable(short(&e))),
        }
    }
    objects.sort_by(|a, b| a.location.as_ref().cmp(b.location.as_ref()));
    Ok(Listing { objects, is_object: false, warnings })
}

/// How many keys a page of a listing asks for (S3's most).
const PAGE_KEYS: usize = 1000;

/// The objects under `place` listed a page at a time, each whose key no store path can name left
/// out and named in a warning. A page holding such a key fails whole, and names the first: pages
/// half as long are asked for until one ends before it, then the listing goes on after it.
async fn list_around_odd_keys(
    pages: &dyn PaginatedListStore,
    place: &RemotePath,
) -> Result<(Vec<ObjectMeta>, Vec<String>), object_store::Error> {
    let prefix = (!place.key.as_ref().is_empty()).then(|| format!("{}/", place.key));
    let (mut objects, mut warnings) = (Vec::<ObjectMeta>::new(), Vec::new());
    let mut after: Option<String> = None;
    let mut keys = PAGE_KEYS;
    loop {
        let options =
            PaginatedListOptions { offset: after.clone(), max_keys: Some(keys), ..Default::default() };
        match pages.list_paginated(prefix.as_deref(), options).await {
            Ok(page) => {
                let more = page.page_token.is_some();
                for object in page.result.objects {
                    let key = object.location.to_string();
                    // A key ending in `/` is named without it: asked for after it, it comes again.
                    match after.as_deref() == Some(key.as_str()) {
                        true => after = Some(format!("{key}/")),
                        false => after = Some(key),
                    }
                    if objects.last().is_none_or(|last| last.location != object.location) {
                        objects.push(object);
                    }
                }
                if !more {
                    return Ok((objects, warnings));
                }
            }
            Err(object_store::Error::InvalidPath { source }) => {
                let odd = match &source {
                    object_store::path::Error::EmptySegment { path }
                    | object_store::path::Error::BadSegment { path, .. } => path.clone(),
                    _ => return Err(object_store::Error::InvalidPath { source }),
                };
                if keys > 1 {
                    keys /= 2;
                    continue;
                }
                let named = format!(
                    "{}://{}/{odd}",
                    place.store.scheme(),
                    place.store.host_str().unwrap_or_default()
                );
                warnings.push(format!(
                    "{}: not read: no object store path names this key (a segment `.` or `..`, an empty one, or a control character)",
                    crate::text::escape::text(&named)
                ));
                after = Some(odd);
                keys = PAGE_KEYS;
            }
            Err(e) => return Err(e),
        }
    }
}

/// An object-store error in one line, without the request's whole dump; a wait that ran out
/// says how long it was and what sets it.
pub fn short(e: &object_store::Error) -> String {
    let text = e.to_string();
    let line = one_line(text.lines().next().unwrap_or_default());
    match (timed_out(e), store_timeout()) {
        (true, Ok(timeout)) => {
            format!("{line}: no answer within {} s ({TIMEOUT_VARIABLE} sets how long)", timeout.as_secs_f64())
        }
        _ => line,
    }
}

/// Whether a request of `e` was given up on for a wait that ran out.
fn timed_out(e: &object_store::Error) -> bool {
    use object_store::client::{HttpError, HttpErrorKind};
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(error) = source {
        if error.downcast_ref::<HttpError>().is_some_and(|h| matches!(h.kind(), HttpErrorKind::Timeout)) {
            return true;
        }
        source = error.source();
    }
    false
}

/// A store's text (an error, with the body its server sent) as one line: each run of white space,
/// line breaks included, one space, and any other control character escaped.
pub(crate) fn one_line(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    crate::text::escape::text(&words.join(" ")).into_owned()
}

/// A stamp of an object's version for the inference cache, from its e_tag (or version): a
/// rewritten object gets a new one.
pub fn version_stamp(object: &ObjectMeta) -> Option<u64> {
    let tag = object.e_tag.as_deref().or(object.version.as_deref())?;
    Some(xxhash_rust::xxh3::xxh3_64(tag.as_bytes()))
}

/// An AWS profile's settings from the shared files, for a process whose environment holds no
/// keys: `AWS_PROFILE` (else `default`) in `AWS_SHARED_CREDENTIALS_FILE` (else
/// `~/.aws/credentials`) and `AWS_CONFIG_FILE` (else `~/.aws/config`, as `[profile NAME]`).
mod profile {
    use object_store::aws::AmazonS3ConfigKey;

    pub(super) fn settings() -> Vec<(AmazonS3ConfigKey, String)> {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let mut out = Vec::new();
        let name = std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty());
        if set("AWS_ACCESS_KEY_ID") && name.is_none() {
            return out;
        }
        let name = name.unwrap_or_else(|| "default".to_string());
        let home = dirs::home_dir().unwrap_or_default();
        let file = |var: &str, default: &str| {
            std::env::var_os(var).map(std::path::PathBuf::from).unwrap_or_else(|| home.join(default))
        };
        let credentials = read(&file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"), &name, false);
        let config = read(&file("AWS_CONFIG_FILE", ".aws/config"), &name, true);
        for (key, value) in config.into_iter().chain(credentials) {
            let key = match key.as_str() {
                "aws_access_key_id" => AmazonS3ConfigKey::AccessKeyId,
                "aws_secret_access_key" => AmazonS3ConfigKey::SecretAccessKey,
                "aws_session_token" => AmazonS3ConfigKey::Token,
                // The environment's region and endpoint go before the profile's.
                "region" if !set("AWS_REGION") && !set("AWS_DEFAULT_REGION") => AmazonS3ConfigKey::Region,
                "endpoint_url" if !set("AWS_ENDPOINT_URL") && !set("AWS_ENDPOINT") => {
                    AmazonS3ConfigKey::Endpoint
                }
                _ => continue,
            };
            out.push((key, value));
        }
        out
    }

    /// The `key = value` lines of profile `name` in an INI file (`[name]`, or in the config file
    /// `[profile name]`; `[default]` in both).
    fn read(path: &std::path::Path, name: &str, config: bool) -> Vec<(String, String)> {
        let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
        let wanted = match (config, name) {
            (true, n) if n != "default" => format!("profile {n}"),
            (_, n) => n.to_string(),
        };
        let mut inside = false;
        let mut out = Vec::new();
        for line in text.lines().map(str::trim) {
            if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                inside = section.trim() == wanted;
            } else if inside
                && let Some((key, value)) = line.split_once('=')
                && !line.starts_with(['#', ';'])
            {
                out.push((key.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        out
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn a_profile_is_read_from_its_section_only() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("credentials");
            std::fs::write(
                &path,
                "[default]\naws_access_key_id = A\n# aws_secret_access_key = no\n[work]\n\
                 aws_access_key_id=B\naws_secret_access_key = C\n",
            )
            .unwrap();
            assert_eq!(super::read(&path, "default", false), [("aws_access_key_id".into(), "A".into())]);
            assert_eq!(
                super::read(&path, "work", false),
                [("aws_access_key_id".into(), "B".into()), ("aws_secret_access_key".into(), "C".into())]
            );
            let config = dir.path().join("config");
            std::fs::write(&config, "[profile work]\nregion = eu-west-3\n[work]\nregion = no\n").unwrap();
            assert_eq!(super::read(&config, "work", true), [("region".into(), "eu-west-3".into())]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_paths_are_taken_apart_and_local_ones_are_not_remote() {
        let place = RemotePath::parse(Path::new("s3://bucket/a/b.jsonl")).unwrap();
        assert_eq!(place.store.as_str(), "s3://bucket");
        assert_eq!(place.key.as_ref(), "a/b.jsonl");
        assert_eq!(RemotePath::path_of(&place.store, &place.key), Path::new("s3://bucket/a/b.jsonl"));
        assert_eq!(RemotePath::parse(Path::new("gs://bucket/")).unwrap().key.as_ref(), "");
        assert!(RemotePath::parse(Path::new("s3:///key")).is_err());
        assert!(RemotePath::parse(Path::new("s3://bucket/a/../b")).is_err());
        assert!(is_remote(Path::new("az://container/x")));
        for local in ["/tmp/s3://x", "s3:/x", "http://host/x", "./s3://b", "s3://"] {
            assert!(!is_remote(Path::new(local)), "{local}");
        }
    }
}
