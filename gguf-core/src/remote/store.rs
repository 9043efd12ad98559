//! Object stores (S3, GCS, Azure) through `object_store`, configured from
//! the environment as its `from_env` builders read it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    ClientConfigKey, GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig,
};
use url::Url;

use crate::error::{Error, RemoteError, Result, SourceError};

use super::backend::{Counters, Identity, RangeSource};
use super::redact::{redact, server_text, Secrets};
use super::store_http::Connector;
use crate::read::OpenOptions;

pub(crate) struct StoreSource {
    store: Arc<dyn ObjectStore>,
    path: Path,
    /// What the store's clients send as credentials, cut out of errors.
    secrets: Secrets,
}

/// A few quick retries of transient failures, not object_store's default
/// of ten over three minutes: a reader waiting on a header wants an
/// answer.
fn retry() -> RetryConfig {
    RetryConfig {
        max_retries: 2,
        retry_timeout: std::time::Duration::from_secs(15),
        ..RetryConfig::default()
    }
}

impl StoreSource {
    pub(crate) fn new(url: &Url, options: &OpenOptions) -> Result<Self> {
        let connect = format!("{}ms", options.connect_timeout.as_millis());
        let total = format!("{}ms", options.read_timeout.as_millis());
        let secrets = Secrets::new(url, None);
        let err = |e: object_store::Error| {
            Error::Source(SourceError::BadUrl {
                url: redact(url),
                reason: format!(
                    "cannot configure the object store: {}",
                    server_text(&super::http::chain(&e), &secrets)
                ),
            })
        };
        let connector = || Connector {
            connect_timeout: options.connect_timeout,
            timeout: options.read_timeout,
        };
        let store: Arc<dyn ObjectStore> = match url.scheme() {
            "s3" | "s3a" => {
                use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey as K};
                Arc::new(
                    AmazonS3Builder::from_env()
                        .with_url(url.as_str())
                        .with_http_connector(connector())
                        .with_config(K::Client(ClientConfigKey::ConnectTimeout), connect)
                        .with_config(K::Client(ClientConfigKey::Timeout), total)
                        .with_retry(retry())
                        .build()
                        .map_err(err)?,
                )
            }
            "gs" => {
                use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey as K};
                Arc::new(
                    GoogleCloudStorageBuilder::from_env()
                        .with_url(url.as_str())
                        .with_http_connector(connector())
                        .with_config(K::Client(ClientConfigKey::ConnectTimeout), connect)
                        .with_config(K::Client(ClientConfigKey::Timeout), total)
                        .with_retry(retry())
                        .build()
                        .map_err(err)?,
                )
            }
            _ => {
                use object_store::azure::{AzureConfigKey as K, MicrosoftAzureBuilder};
                Arc::new(
                    MicrosoftAzureBuilder::from_env()
                        .with_url(url.as_str())
                        .with_http_connector(connector())
                        .with_config(K::Client(ClientConfigKey::ConnectTimeout), connect)
                        .with_config(K::Client(ClientConfigKey::Timeout), total)
                        .with_retry(retry())
                        .build()
                        .map_err(err)?,
                )
            }
        };
        let path = Path::from_url_path(url.path()).map_err(|e| {
            Error::Source(SourceError::BadUrl {
                url: redact(url),
                reason: format!("bad object path: {e}"),
            })
        })?;
        Ok(StoreSource {
            store,
            path,
            secrets,
        })
    }

    /// The object's size and identity (`HEAD`).
    pub(crate) async fn head(&self, display: &str) -> Result<Identity> {
        let meta = self
            .store
            .head(&self.path)
            .await
            .map_err(|e| store_error(display, e, &self.secrets))?;
        Ok(Identity {
            size: meta.size,
            etag: meta.e_tag,
            last_modified: Some(meta.last_modified.to_rfc3339()),
        })
    }

    /// One ranged `GET`, conditional on the ETag of the `HEAD`.
    pub(crate) async fn read(
        &self,
        display: &str,
        offset: u64,
        len: u64,
        known: &Identity,
        received: &AtomicU64,
    ) -> Result<(Vec<u8>, Identity)> {
        let end = offset.saturating_add(len).min(known.size);
        if offset >= end {
            return Ok((Vec::new(), known.clone()));
        }
        let options = GetOptions {
            range: Some(GetRange::Bounded(offset..end)),
            if_match: known.etag.clone(),
            ..GetOptions::default()
        };
        let result = self
            .store
            .get_opts(&self.path, options)
            .await
            .map_err(|e| store_error(display, e, &self.secrets))?;
        let identity = Identity {
            size: result.meta.size,
            etag: result.meta.e_tag.clone(),
            last_modified: Some(result.meta.last_modified.to_rfc3339()),
        };
        if result.range != (offset..end) {
            return Err(Error::Remote(RemoteError::BadContentRange {
                url: display.into(),
                offset,
                end,
                found: Some(format!(
                    "bytes {}-{}",
                    result.range.start,
                    result.range.end.saturating_sub(1)
                )),
            }));
        }
        let expected = end - offset;
        let mut body = Vec::with_capacity(expected as usize);
        let mut stream = result.into_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| {
                let mut err = store_error(display, e, &self.secrets);
                if let Error::Remote(RemoteError::Network { message, .. }) = &mut err {
                    *message = format!(
                        "connection lost after {} of {expected} bytes: {message}",
                        body.len()
                    );
                }
                err
            })?;
            received.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            if body.len() as u64 + chunk.len() as u64 > expected {
                return Err(Error::Remote(RemoteError::BadContentRange {
                    url: display.into(),
                    offset,
                    end,
                    found: Some(format!("a body longer than {expected} bytes")),
                }));
            }
            body.extend_from_slice(&chunk);
        }
        if (body.len() as u64) < expected {
            return Err(Error::Remote(RemoteError::ShortBody {
                url: display.into(),
                offset,
                expected,
                got: body.len() as u64,
            }));
        }
        Ok((body, identity))
    }
}

/// An object_store error as ours. Its messages can carry the body of the
/// server's answer (which may echo the request's credentials): that text
/// goes through [`server_text`].
fn store_error(display: &str, e: object_store::Error, secrets: &Secrets) -> Error {
    use object_store::Error as E;
    match e {
        E::NotFound { .. } => Error::Remote(RemoteError::HttpStatus {
            url: display.into(),
            status: 404,
        }),
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            Error::Remote(RemoteError::HttpStatus {
                url: display.into(),
                status: 403,
            })
        }
        E::Precondition { .. } | E::NotModified { .. } => {
            Error::Remote(RemoteError::RemoteChanged {
                url: display.into(),
                what: "ETag",
                before: "the ETag of the first response".into(),
                after: "another (the server refused the conditional read)".into(),
            })
        }
        e => Error::Remote(RemoteError::Network {
            url: display.into(),
            message: server_text(&super::http::chain(&e), secrets),
        }),
    }
}

#[async_trait::async_trait]
impl RangeSource for StoreSource {
    /// A `HEAD` first (the object's size and identity), then ranged `GET`s
    /// conditional on it.
    async fn read_range(
        &self,
        display: &str,
        offset: u64,
        len: u64,
        known: Option<Identity>,
        counters: &Counters,
    ) -> Result<(Vec<u8>, Identity)> {
        let known = match known {
            Some(k) => k,
            None => {
                counters.heads.fetch_add(1, Ordering::Relaxed);
                self.head(display).await?
            }
        };
        counters.requests.fetch_add(1, Ordering::Relaxed);
        self.read(display, offset, len, &known, &counters.bytes)
            .await
    }
}
