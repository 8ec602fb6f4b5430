//! HTTP/2 over TLS against a local server with a self-signed certificate: it works only with
//! `skip_verify`, and fails with a clear certificate error without it.

use hrns_blocking::mock::Reply;
use hrns_core::session::{
    ApprovalPolicy, Event, Provider, Session, SessionConfig, TransportErrorKind, TurnError,
};
use hrns_tokio::{Client, ClientConfig, ClientError, Runner, ToolContext, Toolbox, TurnOutcome};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// Answers `/v1/models` with one model named after the HTTP version the request came in, and
/// chat requests with a streamed answer.
async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let version = format!("{:?}", req.version());
    let (content_type, body) = if req.uri().path().ends_with("/models") {
        let list = serde_json::json!({"object": "list", "data": [{"id": version}]});
        ("application/json", list.to_string().into_bytes())
    } else {
        let answer = Reply::text_answer(&format!("hello over {version}"));
        ("text/event-stream", answer.body().to_vec())
    };
    Ok(Response::builder()
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .unwrap())
}

/// Starts an HTTP/2-only TLS server with a fresh self-signed certificate on loopback.
async fn start_server() -> SocketAddr {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return; // the client refused the certificate
                };
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), hyper::service::service_fn(handle))
                    .await;
            });
        }
    });
    addr
}

fn provider(addr: SocketAddr) -> Provider {
    Provider::new(format!("https://localhost:{}/v1", addr.port()), None)
}

fn config(skip_verify: bool) -> ClientConfig {
    ClientConfig {
        skip_verify,
        ..ClientConfig::default()
    }
}

#[tokio::test]
async fn http2_with_skip_verify_works() {
    let addr = start_server().await;
    let client = Client::new(provider(addr), &config(true));
    let models = client.list_models().await.unwrap();
    assert_eq!(models[0].id, "HTTP/2.0", "negotiated HTTP/2 by ALPN");

    let mut c = SessionConfig::new(provider(addr), "m");
    c.approval = ApprovalPolicy::Auto;
    let mut session = Session::new(c);
    let mut runner = Runner::new(client, Toolbox::new(), ToolContext::new("/").unwrap());
    let mut text = String::new();
    let outcome = runner
        .run(&mut session, "hi", |e| {
            if let Event::TextDelta { text: t } = e {
                text.push_str(t);
            }
        })
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Finished);
    assert_eq!(text, "hello over HTTP/2.0");
}

#[tokio::test]
async fn a_self_signed_certificate_is_refused_without_skip_verify() {
    let addr = start_server().await;
    let client = Client::new(provider(addr), &config(false));
    let error = match client.list_models().await {
        Err(ClientError::Transport(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(error.kind, TransportErrorKind::Tls, "{error}");
    assert!(error.message.contains("certificate"), "{}", error.message);
    assert!(error.message.contains("skip_verify"), "{}", error.message);

    // In a turn it fails at once: a TLS error is not retried.
    let mut session = Session::new(SessionConfig::new(provider(addr), "m"));
    let mut runner = Runner::new(client, Toolbox::new(), ToolContext::new("/").unwrap());
    let outcome = runner.run(&mut session, "hi", |_| {}).await.unwrap();
    match outcome {
        TurnOutcome::Failed(TurnError::Transport { kind, message }) => {
            assert_eq!(kind, TransportErrorKind::Tls);
            assert!(message.contains("certificate"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}
