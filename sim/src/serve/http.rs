//! The network front: HTTP/1.1 on tokio (hyper, with axum's request and response types), no
//! routing of its own. Each request goes to the core over a bounded channel (a full channel is
//! a 429, never a wait); a watch reply is a stream of the lines the core pushes, ended by
//! `timeoutSeconds` or by the core closing it (apiserver
//! `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go`).
//!
//! A client cannot hold the server: its headers must arrive within 32 s (kube-apiserver's
//! `ReadHeaderTimeout`, `staging/src/k8s.io/apiserver/pkg/server/secure_serving.go`), its body
//! within `--request-timeout` (a 504, as the apiserver's timeout filter answers), and a
//! shutdown closes what is still open after a short grace.

use std::convert::Infallible;
use std::pin::pin;
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;

use super::core::{ApiRequest, Msg};
use super::negotiate::Output;
use super::query::{failure, parse_query, Reply};

/// kube-apiserver's `MaxRequestBodyBytes` (3 MiB, `--max-request-bytes`' default there): a
/// larger body is 413 before it is decoded.
const BODY_LIMIT: usize = 3 << 20;

/// kube-apiserver's `ReadHeaderTimeout` ("just shy of requestTimeoutUpperBound").
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);
/// The shortest `--request-timeout` accepted: below a second a client on a loaded machine could
/// not send a manifest in time.
pub const REQUEST_TIMEOUT_MIN: Duration = Duration::from_secs(1);
/// The longest `--request-timeout` accepted.
pub const REQUEST_TIMEOUT_MAX: Duration = Duration::from_secs(3600);
/// How long a shutdown waits for open connections (a watch, a half-sent request) before it
/// closes them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// What every request's handler shares: the way to the core and the body deadline.
#[derive(Clone)]
struct Front {
    tx: SyncSender<Msg>,
    request_timeout: Duration,
}

fn json_response(code: u16, body: String) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn reply_response(r: Reply) -> Response {
    reply_response_as(r, Output::Json)
}

/// `r` written in the negotiated media type (`negotiate.rs`): a JSON reply as YAML when asked.
fn reply_response_as(r: Reply, output: Output) -> Response {
    match r {
        Reply::Json { code, body } if output == Output::Yaml => {
            let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = super::negotiate::yaml_body(&body);
            (code, [(header::CONTENT_TYPE, "application/yaml")], body).into_response()
        }
        Reply::Json { code, body } => json_response(code, body),
        Reply::Text { code, body } => {
            let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (
                code,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                body,
            )
                .into_response()
        }
        Reply::Typed {
            code,
            content_type,
            body,
        } => {
            let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (code, [(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        Reply::Warned { reply, warnings } => {
            let mut response = reply_response_as(*reply, output);
            for w in warnings {
                // RFC 7234 warn-text: a quoted string (apiserver `pkg/warning`, code 299).
                let text = w.replace('\\', "\\\\").replace('"', "\\\"");
                // UTF-8 (the webhook writes an em dash) as obs-text, which Go sends as it is.
                let value = format!("299 - \"{text}\"");
                if let Ok(v) = header::HeaderValue::from_bytes(value.as_bytes()) {
                    response.headers_mut().append(header::WARNING, v);
                }
            }
            response
        }
        Reply::Watch { rx, timeout_s } => {
            // A timeout beyond what the clock can add is no timeout.
            let deadline = timeout_s
                .and_then(|s| tokio::time::Instant::now().checked_add(Duration::from_secs(s)));
            let stream =
                futures_util::stream::unfold((rx, deadline), |(mut rx, deadline)| async move {
                    let next = match deadline {
                        Some(d) => tokio::time::timeout_at(d, rx.recv()).await.ok().flatten(),
                        None => rx.recv().await,
                    };
                    next.map(|line| (Ok::<_, Infallible>(line.into_text() + "\n"), (rx, deadline)))
                });
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from_stream(stream))
                .expect("a valid response")
        }
    }
}

/// A protobuf body of a kind `proto::object` reads (client-go's typed clients, kubectl from
/// 1.32 on) becomes the JSON the rest of the server reads, so every create, update, delete and
/// eviction takes it; a kind it does not read is passed on, to be a 404 where the resource is
/// not served and a 415 where it is; malformed bytes are a 400.
fn from_protobuf(
    content_type: String,
    body: Vec<u8>,
    method: &hyper::Method,
) -> Result<(String, Vec<u8>), Reply> {
    let protobuf = content_type.starts_with("application/vnd.kubernetes.protobuf");
    let with_body = [
        hyper::Method::POST,
        hyper::Method::PUT,
        hyper::Method::DELETE,
    ];
    if !protobuf || !with_body.contains(method) || body.is_empty() {
        return Ok((content_type, body));
    }
    match super::proto::object(&body, *method == hyper::Method::DELETE) {
        Ok(v) => Ok((
            "application/json".into(),
            serde_json::to_vec(&v).expect("values encode"),
        )),
        Err(super::proto::Refusal::Kind(_)) => Ok((content_type, body)),
        Err(super::proto::Refusal::Malformed(why)) => Err(super::query::bad_request(format!(
            "error decoding the request body as protobuf: {why}"
        ))),
    }
}

/// The request's body within `--request-timeout` and `BODY_LIMIT`, or the reply refusing it.
async fn read_body(body: Body, request_timeout: Duration) -> Result<Vec<u8>, Reply> {
    match tokio::time::timeout(request_timeout, axum::body::to_bytes(body, BODY_LIMIT)).await {
        Err(_) => {
            // The apiserver's timeout filter (`filters/timeout.go`) answers a request that did
            // not finish in time with 504 Timeout.
            Err(failure(
                504,
                "Timeout",
                "Timeout: request did not complete within requested timeout - context deadline exceeded",
            ))
        }
        Ok(Ok(b)) => Ok(b.to_vec()),
        Ok(Err(e)) => {
            // A body over the limit is 413, as the apiserver answers; anything else 400.
            let too_large = e.to_string().contains("length limit");
            let (code, reason) = if too_large {
                (413, "RequestEntityTooLarge")
            } else {
                (400, "BadRequest")
            };
            Err(failure(code, reason, format!("reading the body: {e}")))
        }
    }
}

async fn handle(State(front): State<Front>, req: Request) -> Response {
    let Front {
        tx,
        request_timeout,
    } = front;
    let (parts, body) = req.into_parts();
    let header = |h: header::HeaderName| {
        parts
            .headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    // Media types are case-insensitive (RFC 9110; Go's `mime.ParseMediaType` lowers them).
    let content_type = header(header::CONTENT_TYPE).to_ascii_lowercase();
    let path = parts.uri.path();
    let accept = header(header::ACCEPT);
    let output = if super::negotiate::negotiated(path) {
        match super::negotiate::negotiate(path, &accept) {
            Ok(o) => o,
            Err(refused) => return reply_response(refused),
        }
    } else {
        Output::Json
    };
    let body = match read_body(body, request_timeout).await {
        Ok(b) => b,
        Err(refused) => return reply_response(refused),
    };
    let (content_type, body) = match from_protobuf(content_type, body, &parts.method) {
        Ok(decoded) => decoded,
        Err(refused) => return reply_response(refused),
    };
    let r = ApiRequest {
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        query: parse_query(parts.uri.query().unwrap_or("")),
        content_type,
        accept,
        user_agent: parts
            .headers
            .get(header::USER_AGENT)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default(),
        body,
    };
    let (otx, orx) = tokio::sync::oneshot::channel();
    match tx.try_send(Msg::Api(r, otx)) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            return reply_response(failure(
                429,
                "TooManyRequests",
                "the simulation core is busy",
            ))
        }
        Err(TrySendError::Disconnected(_)) => {
            return reply_response(failure(
                503,
                "ServiceUnavailable",
                "the simulation core has stopped",
            ))
        }
    }
    match orx.await {
        Ok(r) => reply_response_as(r, output),
        Err(_) => reply_response(failure(
            503,
            "ServiceUnavailable",
            "the simulation core has stopped",
        )),
    }
}

/// Serve on `listener` until `stop` fires, then give open connections `SHUTDOWN_GRACE`.
pub async fn serve(
    listener: std::net::TcpListener,
    tx: SyncSender<Msg>,
    stop: tokio::sync::oneshot::Receiver<()>,
    request_timeout: Duration,
) -> Result<(), String> {
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
    let app = Router::new().fallback(handle).with_state(Front {
        tx,
        request_timeout,
    });
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut stop = pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(connection(stream, app.clone(), closing_rx.clone()));
                }
                // Out of descriptors, say: wait for some to close rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    let _ = closing_tx.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, drained).await;
    connections.abort_all();
    Ok(())
}

/// One HTTP/1.1 connection, with the header deadline; told to finish once shutdown begins.
async fn connection(
    stream: tokio::net::TcpStream,
    app: Router,
    mut closing: tokio::sync::watch::Receiver<bool>,
) {
    let service = hyper_util::service::TowerToHyperService::new(app);
    let mut builder = hyper::server::conn::http1::Builder::new();
    // A client that shuts its side down once its request is sent (`nc -N`, some scripts)
    // still gets its answer, as from Go's net/http.
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .half_close(true);
    let mut conn = pin!(builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service));
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = closing.wait_for(|c| *c) => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}
