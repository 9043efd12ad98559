//! The HTTP client object_store's S3, GCS and Azure clients use here: its
//! own reqwest client (built as object_store builds it from the options
//! its `from_env` builders read) with reqwest's redirect handling off, and
//! redirects of reads followed by [`redirect`](super::redirect), so that no
//! `Referer` is sent and a redirect to another origin carries no
//! `Authorization`, `x-amz-security-token`, `x-ms-*` or cookie.

use std::time::Duration;

use async_trait::async_trait;
use object_store::client::{
    ClientOptions, HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpService,
};
use object_store::ClientConfigKey as K;
use reqwest::Method;
use url::Url;

use super::redirect::{keep_for_other_origin, next_hop, same_origin, Policy};

/// Builds [`Service`]s for object_store.
#[derive(Debug)]
pub(crate) struct Connector {
    pub(crate) connect_timeout: Duration,
    /// object_store's `timeout`: a whole request, body included.
    pub(crate) timeout: Duration,
}

fn flag(options: &ClientOptions, key: K) -> bool {
    options
        .get_config_value(&key)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

fn config_error(e: impl std::fmt::Display) -> object_store::Error {
    object_store::Error::Generic {
        store: "HTTP client",
        source: e.to_string().into(),
    }
}

impl HttpConnector for Connector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let user_agent = options
            .get_config_value(&K::UserAgent)
            .unwrap_or_else(|| concat!("gguf-rs/", env!("CARGO_PKG_VERSION")).into());
        let mut builder = reqwest::Client::builder()
            .user_agent(user_agent)
            .connect_timeout(self.connect_timeout)
            .timeout(self.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .no_gzip()
            .https_only(!flag(options, K::AllowHttp))
            .danger_accept_invalid_certs(flag(options, K::AllowInvalidCertificates));
        if flag(options, K::Http1Only) {
            builder = builder.http1_only();
        }
        if flag(options, K::Http2Only) {
            builder = builder.http2_prior_knowledge();
        }
        if let Some(proxy) = options.get_config_value(&K::ProxyUrl) {
            let mut proxy = reqwest::Proxy::all(proxy).map_err(config_error)?;
            if let Some(excludes) = options.get_config_value(&K::ProxyExcludes) {
                proxy = proxy.no_proxy(reqwest::NoProxy::from_string(&excludes));
            }
            if let Some(pem) = options.get_config_value(&K::ProxyCaCertificate) {
                let cert = reqwest::Certificate::from_pem(pem.as_bytes()).map_err(config_error)?;
                builder = builder.add_root_certificate(cert);
            }
            builder = builder.proxy(proxy);
        }
        let client = builder.build().map_err(config_error)?;
        Ok(HttpClient::new(Service { client }))
    }
}

/// One object store's HTTP client.
#[derive(Debug)]
struct Service {
    client: reqwest::Client,
}

fn http_error(kind: HttpErrorKind, e: impl std::error::Error + Send + Sync + 'static) -> HttpError {
    HttpError::new(kind, e)
}

#[async_trait]
impl HttpService for Service {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        // Only reads are followed: a request with a body (a credential
        // exchange) gets the redirect back, which object_store reports.
        let reads = *req.method() == Method::GET || *req.method() == Method::HEAD;
        if !reads || !req.body().is_empty() {
            return self.client.call(req).await;
        }
        let (parts, body) = req.into_parts();
        let mut url = Url::parse(&parts.uri.to_string())
            .map_err(|e| http_error(HttpErrorKind::Request, e))?;
        let mut headers = parts.headers;
        let mut hops = 0;
        loop {
            let mut hop = HttpRequest::new(body.clone());
            *hop.method_mut() = parts.method.clone();
            *hop.uri_mut() = url
                .as_str()
                .parse()
                .map_err(|e| http_error(HttpErrorKind::Request, e))?;
            *hop.headers_mut() = headers.clone();
            let resp = self.client.call(hop).await?;
            let next = next_hop(&url, resp.status(), resp.headers(), hops, Policy::default())
                .map_err(|e| http_error(HttpErrorKind::Unknown, e))?;
            let Some(next) = next else {
                return Ok(resp);
            };
            if !same_origin(&url, &next) {
                keep_for_other_origin(&mut headers);
            }
            url = next;
            hops += 1;
        }
    }
}
