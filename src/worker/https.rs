//! The REST API behind an https listener: OpenSSL's TLS (the context built
//! at start by `front::connect::listeners`, with client certificates when
//! `ssl.client.auth` asks for them) and a small HTTP/1.1 reader in front
//! of the same [`route`] the http listener uses.
//!
//! Not tiny_http's own TLS: it builds its context from a PEM key and chain
//! only (no client certificates, no truststore) and shakes hands on its
//! one accepting thread, where a client that connects and sends nothing
//! stalls every other. Here each connection has its thread, a handshake
//! deadline and an idle deadline, and at most [`MAX_CONNECTIONS`] at once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openssl::ssl::SslAcceptor;

use super::rest::{route, Api, Response};

/// Largest request body read, as on the http listener.
const MAX_BODY: u64 = 1024 * 1024;
/// Largest request line plus headers.
const MAX_HEAD: u64 = 64 * 1024;
/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 64;
/// How long a client may take to shake hands.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// How long a kept-alive connection may sit idle (or a request trickle in).
const IDLE: Duration = Duration::from_secs(60);

/// Binds now (a taken port fails the start) and serves on threads.
pub fn serve_https(bind: &(String, u16), tls: Arc<SslAcceptor>, api: Arc<dyn Api>) -> Result<(), std::io::Error> {
    let listener = TcpListener::bind((bind.0.as_str(), bind.1))?;
    log::info!("REST API listening on https://{}:{}", bind.0, bind.1);
    let open = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new().name("worker-https".into()).spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                open.fetch_sub(1, Ordering::SeqCst);
                log::warn!("https: {MAX_CONNECTIONS} connections are open; one more is closed");
                continue;
            }
            let (tls, api, open) = (tls.clone(), api.clone(), open.clone());
            let spawned = std::thread::Builder::new().name("worker-https-conn".into()).spawn(move || {
                connection(stream, &tls, api.as_ref());
                open.fetch_sub(1, Ordering::SeqCst);
            });
            if spawned.is_err() {
                log::warn!("https: no thread for a new connection; it is closed");
            }
        }
    })?;
    Ok(())
}

fn connection(stream: TcpStream, tls: &SslAcceptor, api: &dyn Api) {
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let _ = stream.set_read_timeout(Some(HANDSHAKE));
    let _ = stream.set_write_timeout(Some(HANDSHAKE));
    let stream = match tls.accept(stream) {
        Ok(s) => s,
        Err(e) => {
            // A client without a required certificate, one the truststore
            // does not vouch for, or plain http on this port.
            log::info!("https: handshake with {peer} failed: {e}");
            return;
        }
    };
    let _ = stream.get_ref().set_read_timeout(Some(IDLE));
    let _ = stream.get_ref().set_write_timeout(Some(IDLE));
    let mut conn = BufReader::new(stream);
    loop {
        match request(&mut conn, api) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                log::debug!("https: connection from {peer} ended: {e}");
                break;
            }
        }
    }
    let _ = conn.get_mut().shutdown();
}

/// A request's head: method, target, and the headers that matter here.
#[derive(Debug, Default, PartialEq)]
struct Head {
    method: String,
    url: String,
    content_length: Option<u64>,
    chunked: bool,
    expect_continue: bool,
    keep_alive: bool,
}

/// Reads one request and answers it; Ok(false) when the connection is to
/// close (the client closed it or asked to).
fn request<S: Read + Write>(conn: &mut BufReader<S>, api: &dyn Api) -> std::io::Result<bool> {
    let Some(head) = read_head(conn)? else { return Ok(false) };
    let head = match head {
        Ok(h) => h,
        Err(status) => {
            write_response(conn.get_mut(), &Response { status, body: None, location: None }, false)?;
            return Ok(false);
        }
    };
    if head.content_length.is_some_and(|n| n > MAX_BODY) {
        write_response(conn.get_mut(), &Response { status: 413, body: None, location: None }, false)?;
        return Ok(false);
    }
    if head.expect_continue {
        conn.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        conn.get_mut().flush()?;
    }
    let mut body = Vec::new();
    if head.chunked {
        chunked_transfer::Decoder::new(&mut *conn).take(MAX_BODY).read_to_end(&mut body)?;
    } else if let Some(n) = head.content_length {
        (&mut *conn).take(n).read_to_end(&mut body)?;
        if body.len() as u64 != n {
            return Ok(false);
        }
    }
    let r = route(api, &head.method, &head.url, &body);
    log::debug!("{} {} -> {} (https)", head.method, head.url, r.status);
    write_response(conn.get_mut(), &r, head.keep_alive)?;
    Ok(head.keep_alive)
}

/// The request line and headers; None at a clean end of the connection,
/// Some(Err(status)) for a request this server will not read.
fn read_head<R: BufRead>(conn: &mut R) -> std::io::Result<Option<Result<Head, u16>>> {
    let mut limited = conn.take(MAX_HEAD);
    let mut line = String::new();
    // Clients may send empty lines between requests (RFC 9112 2.2).
    while line.trim().is_empty() {
        line.clear();
        if limited.read_line(&mut line)? == 0 {
            return Ok(None);
        }
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(url), Some(version)) = (parts.next(), parts.next(), parts.next()) else { return Ok(Some(Err(400))) };
    if !version.starts_with("HTTP/1.") {
        return Ok(Some(Err(505)));
    }
    let mut head = Head { method: method.to_ascii_uppercase(), url: url.to_string(), keep_alive: version != "HTTP/1.0", ..Head::default() };
    loop {
        line.clear();
        if limited.read_line(&mut line)? == 0 {
            return Ok(Some(Err(431)));
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        let Some((name, value)) = l.split_once(':') else { return Ok(Some(Err(400))) };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => match value.parse() {
                Ok(n) => head.content_length = Some(n),
                Err(_) => return Ok(Some(Err(400))),
            },
            "transfer-encoding" => head.chunked = value.eq_ignore_ascii_case("chunked"),
            "expect" => head.expect_continue = value.eq_ignore_ascii_case("100-continue"),
            "connection" if value.eq_ignore_ascii_case("close") => head.keep_alive = false,
            "connection" if value.eq_ignore_ascii_case("keep-alive") => head.keep_alive = true,
            _ => {}
        }
    }
    Ok(Some(Ok(head)))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

fn write_response<W: Write>(w: &mut W, r: &Response, keep_alive: bool) -> std::io::Result<()> {
    let body = r.body.as_ref().map(|b| b.to_string()).unwrap_or_default();
    let mut out = format!("HTTP/1.1 {} {}\r\n", r.status, reason(r.status));
    if r.body.is_some() {
        out.push_str("Content-Type: application/json\r\n");
    }
    if r.status != 204 {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    if let Some(l) = &r.location {
        out.push_str(&format!("Location: {l}\r\n"));
    }
    if !keep_alive {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("\r\n");
    out.push_str(&body);
    w.write_all(out.as_bytes())?;
    w.flush()
}

#[cfg(test)]
mod tests;
