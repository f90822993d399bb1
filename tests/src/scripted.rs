//! Scripted model answers for tests: a script of [`Reply`]s, and [`ScriptedServer`], a
//! scripted OpenAI-compatible HTTP/1.1 server on `127.0.0.1` that answers it (std and
//! `serde_json` only: the CLI's and the machine crate's tests include this file by path).
//!
//! The server is for what needs the wire: the tests of the model client itself
//! (`OpenAiClient`: retries, timeouts, streams, headers, broken bodies), of recording
//! (cassettes), and of processes that dial a URL (the CLI, a killed turn). The integration
//! tests of turn behaviour run on the same scripts without HTTP:
//! `archmax_tests::in_process::InProcessModel` (`tests/src/in_process.rs`) answers them in
//! process as the client would have read them from this server, from the same queue
//! (`Script`).
//!
//! Each `POST /v1/chat/completions` (or `POST /chat/completions`) pops the next [`Reply`] of
//! the script and records the request. Connections are kept alive unless the client sends
//! `Connection: close` (or speaks HTTP/1.0 without `keep-alive`). The server stops when the
//! [`ScriptedServer`] is dropped.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{Value, json};

/// Largest accepted request head (request line and headers), in bytes.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `200 OK` with this JSON body (a full `chat.completion` object).
    Json(Value),
    /// This status with this body text, verbatim (`Content-Type: application/json`).
    Status(u16, String),
    /// Full control: status, extra headers, and a body sent verbatim (may be invalid JSON).
    Raw {
        /// The HTTP status.
        status: u16,
        /// Extra response headers; a `Content-Type` here replaces the default.
        headers: Vec<(String, String)>,
        /// The body text.
        body: String,
    },
    /// Waits this long, then sends the inner reply (for client-timeout tests).
    Delayed(Duration, Box<Reply>),
    /// Never answers: holds the connection open until the server is dropped.
    Hang,
    /// `200 OK` declaring `declared` body bytes, sends the first `sent` bytes of this body,
    /// then closes the connection (a reset mid-body).
    ResetMidBody {
        /// The body text (only its first `sent` bytes go out).
        body: String,
        /// How many bytes are sent before the close.
        sent: usize,
        /// The `Content-Length` declared.
        declared: usize,
    },
    /// `200 OK` `text/event-stream`, sent chunked: each piece written and flushed in turn,
    /// `gap` apart, then the stream ends as `end` says.
    Sse {
        /// The raw pieces (usually `data: …\n\n` events).
        pieces: Vec<String>,
        /// The pause before each piece after the first.
        gap: Duration,
        /// How the stream ends after the last piece.
        end: SseEnd,
    },
    /// `200 OK` with a body of `bytes` bytes (`{"pad":"xxxx…"}`), streamed in chunks without
    /// building it in memory; `declare_length: false` sends it chunked (no `Content-Length`).
    Huge {
        /// The body length.
        bytes: usize,
        /// Whether a `Content-Length` header announces it.
        declare_length: bool,
    },
}

/// How a [`Reply::Sse`] stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseEnd {
    /// The chunked body is terminated properly (the connection stays usable).
    Close,
    /// The connection is closed mid-body (no chunked terminator): a cut stream.
    Cut,
    /// The body is left open until the server is dropped.
    Hang,
}

/// One `data: <json>` event.
pub fn sse_data(chunk: &Value) -> String {
    format!("data: {chunk}\n\n")
}

/// The `data: [DONE]` event.
pub const SSE_DONE: &str = "data: [DONE]\n\n";

/// A `chat.completion.chunk` with this delta (and finish reason).
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    })
}

impl Reply {
    /// A streamed answer saying `pieces` in turn: a role-only chunk, one chunk per piece, a
    /// `stop` chunk, a usage chunk (no choices) and `[DONE]`.
    pub fn stream_text(pieces: &[&str]) -> Reply {
        let mut out = vec![sse_data(&chunk(
            json!({"role": "assistant", "content": ""}),
            None,
        ))];
        out.extend(
            pieces
                .iter()
                .map(|p| sse_data(&chunk(json!({"content": p}), None))),
        );
        out.push(sse_data(&chunk(json!({}), Some("stop"))));
        out.push(sse_data(&json!({
            "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "scripted-model",
            "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": pieces.len()}
        })));
        out.push(SSE_DONE.to_owned());
        Reply::sse(out)
    }

    /// A stream of these raw pieces, ended properly, with no gap.
    pub fn sse(pieces: Vec<String>) -> Reply {
        Reply::Sse {
            pieces,
            gap: Duration::ZERO,
            end: SseEnd::Close,
        }
    }

    /// This stream with `gap` between its pieces (other replies are unchanged).
    pub fn with_gap(self, gap: Duration) -> Reply {
        match self {
            Reply::Sse { pieces, end, .. } => Reply::Sse { pieces, gap, end },
            other => other,
        }
    }

    /// This stream keeping only its first `n` pieces, then cut (the connection closed
    /// mid-body) or left hanging (other replies are unchanged).
    pub fn cut_after(self, n: usize, end: SseEnd) -> Reply {
        match self {
            Reply::Sse {
                mut pieces, gap, ..
            } => {
                pieces.truncate(n);
                Reply::Sse { pieces, gap, end }
            }
            other => other,
        }
    }

    /// A `chat.completion` whose assistant message says `content`.
    pub fn text(content: &str) -> Reply {
        Reply::Json(completion(
            json!({"role": "assistant", "content": content}),
            "stop",
        ))
    }

    /// A `chat.completion` whose assistant message makes these tool calls, in order:
    /// `(id, name, arguments)`, the arguments sent as JSON text.
    pub fn tool_calls(calls: Vec<(&str, &str, Value)>) -> Reply {
        let calls: Vec<Value> = calls
            .into_iter()
            .map(|(id, name, arguments)| {
                json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}
                })
            })
            .collect();
        Reply::Json(completion(
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            "tool_calls",
        ))
    }

    /// This reply with `usage` set to the given object (e.g.
    /// `{"prompt_tokens": 10, "completion_tokens": 2}`). Only affects [`Reply::Json`] (also
    /// inside [`Reply::Delayed`]); other replies are returned unchanged.
    pub fn with_usage(self, usage: Value) -> Reply {
        self.with_field("usage", usage)
    }

    /// This reply with the top-level `model` field set. Same scope as [`Reply::with_usage`].
    pub fn with_model(self, model: &str) -> Reply {
        self.with_field("model", Value::String(model.to_owned()))
    }

    /// An error status with a JSON body `{"error": {"message": message}}`.
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::Status(status, json!({"error": {"message": message}}).to_string())
    }

    /// This reply plus a response header (turns the reply into [`Reply::Raw`]).
    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Delayed(delay, inner) => {
                Reply::Delayed(delay, Box::new(inner.with_header(name, value)))
            }
            other => {
                let (status, mut headers, body) = other.into_parts();
                headers.push((name.to_owned(), value.to_owned()));
                Reply::Raw {
                    status,
                    headers,
                    body,
                }
            }
        }
    }

    /// This reply, sent after `delay`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delayed(delay, Box::new(self))
    }

    fn with_field(self, key: &str, value: Value) -> Reply {
        match self {
            Reply::Json(mut body) => {
                if let Some(obj) = body.as_object_mut() {
                    obj.insert(key.to_owned(), value);
                }
                Reply::Json(body)
            }
            Reply::Delayed(delay, inner) => {
                Reply::Delayed(delay, Box::new(inner.with_field(key, value)))
            }
            other => other,
        }
    }

    /// Status, extra headers and body; a [`Reply::Delayed`] yields its inner reply's parts.
    fn into_parts(self) -> (u16, Vec<(String, String)>, String) {
        match self {
            Reply::Json(body) => (200, Vec::new(), body.to_string()),
            Reply::Status(status, body) => (status, Vec::new(), body),
            Reply::Raw {
                status,
                headers,
                body,
            } => (status, headers, body),
            Reply::Delayed(_, inner) => inner.into_parts(),
            Reply::Hang | Reply::ResetMidBody { .. } | Reply::Huge { .. } | Reply::Sse { .. } => {
                (500, Vec::new(), String::new())
            }
        }
    }
}

fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]
    })
}

/// One request the server received on a chat-completions route.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The request method (`POST`).
    pub method: String,
    /// The request target as sent (e.g. `/v1/chat/completions`).
    pub path: String,
    /// The request headers, names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or a JSON string holding the raw text when it is not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The replies not given yet, in order: the queue the HTTP server and the in-process model
/// (`archmax_tests::in_process`) both answer from.
#[derive(Debug)]
pub(crate) struct Script {
    replies: VecDeque<Reply>,
    scripted: usize,
    asked: usize,
}

impl Script {
    pub(crate) fn new(replies: Vec<Reply>) -> Script {
        Script {
            scripted: replies.len(),
            replies: replies.into(),
            asked: 0,
        }
    }

    /// The reply to the next request: the next scripted one, or, past the end, a 500 saying
    /// so (`who` starts its text).
    pub(crate) fn next(&mut self, who: &str) -> Reply {
        self.asked += 1;
        let (asked, scripted) = (self.asked, self.scripted);
        self.replies.pop_front().unwrap_or_else(|| {
            Reply::error(
                500,
                &format!(
                    "{who}: script exhausted: request {asked} arrived but only {scripted} replies were scripted"
                ),
            )
        })
    }

    /// How many replies have not been given yet.
    pub(crate) fn remaining(&self) -> usize {
        self.replies.len()
    }
}

struct State {
    script: Script,
    requests: Vec<RecordedRequest>,
}

struct Shared {
    state: Mutex<State>,
    connections: Mutex<Vec<TcpStream>>,
    accepted: AtomicUsize,
    stop: AtomicBool,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A scripted chat-completions server on `127.0.0.1`; stops on drop.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ScriptedServer {
    /// Binds `127.0.0.1:0` and serves `script` on a background thread.
    pub fn start(script: Vec<Reply>) -> io::Result<ScriptedServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script: Script::new(script),
                requests: Vec::new(),
            }),
            connections: Mutex::new(Vec::new()),
            accepted: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        let accept = thread::Builder::new()
            .name("scripted-server".to_owned())
            .spawn(move || accept_loop(listener, accept_shared))?;
        Ok(ScriptedServer {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The base URL to configure a client with: `http://127.0.0.1:<port>/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every chat-completions request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.state)
            .requests
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every chat-completions request received so far (method, path, headers, body).
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.state).requests.clone()
    }

    /// How many scripted replies have not been served yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.state).script.remaining()
    }

    /// How many TCP connections have been accepted so far.
    pub fn connections(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept() so the thread sees the flag.
        let woke = TcpStream::connect(self.addr).is_ok();
        if let Some(handle) = self.accept.take()
            && woke
        {
            let _ = handle.join();
        }
        for stream in lock(&self.shared.connections).drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        if let Ok(clone) = stream.try_clone() {
            lock(&shared.connections).push(clone);
        }
        let conn_shared = Arc::clone(&shared);
        let _ = thread::Builder::new()
            .name("scripted-conn".to_owned())
            .spawn(move || {
                let _ = serve_connection(stream, &conn_shared);
            });
    }
}

struct Request {
    method: String,
    path: String,
    version: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn wants_close(&self) -> bool {
        let connection = self
            .header("connection")
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        if self.version == "HTTP/1.0" {
            !connection.contains("keep-alive")
        } else {
            connection.contains("close")
        }
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) => return Ok(()),
            Err(e) => {
                let body =
                    json!({"error": {"message": format!("scripted server: bad request: {e}")}});
                write_response(&mut writer, 400, &[], &body.to_string(), true)?;
                return Ok(());
            }
        };
        let close = request.wants_close();
        let mut reply = route(shared, request);
        while let Reply::Delayed(delay, inner) = reply {
            thread::sleep(delay);
            reply = *inner;
        }
        match reply {
            Reply::Hang => {
                while !shared.stop.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(10));
                }
                return Ok(());
            }
            Reply::ResetMidBody {
                body,
                sent,
                declared,
            } => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\nConnection: keep-alive\r\n\r\n"
                );
                writer.write_all(head.as_bytes())?;
                writer.write_all(&body.as_bytes()[..sent.min(body.len())])?;
                writer.flush()?;
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
            Reply::Huge {
                bytes,
                declare_length,
            } => {
                write_huge(&mut writer, bytes, declare_length)?;
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
            Reply::Sse { pieces, gap, end } => {
                write_sse(&mut writer, &pieces, gap)?;
                match end {
                    SseEnd::Close => {
                        writer.write_all(b"0\r\n\r\n")?;
                        writer.flush()?;
                        if close {
                            let _ = writer.shutdown(Shutdown::Both);
                            return Ok(());
                        }
                        continue;
                    }
                    SseEnd::Cut => {
                        let _ = writer.shutdown(Shutdown::Both);
                        return Ok(());
                    }
                    SseEnd::Hang => {
                        while !shared.stop.load(Ordering::SeqCst) {
                            thread::sleep(Duration::from_millis(10));
                        }
                        return Ok(());
                    }
                }
            }
            _ => {}
        }
        let (status, headers, body) = reply.into_parts();
        write_response(&mut writer, status, &headers, &body, close)?;
        if close {
            let _ = writer.shutdown(Shutdown::Both);
            return Ok(());
        }
    }
}

fn route(shared: &Shared, request: Request) -> Reply {
    let path = request.path.split('?').next().unwrap_or_default();
    let chat = path == "/v1/chat/completions" || path == "/chat/completions";
    if !chat || request.method != "POST" {
        let message = format!(
            "scripted server: no route for {} {} (only POST /v1/chat/completions and POST /chat/completions)",
            request.method, request.path
        );
        return Reply::error(404, &message);
    }
    let body = serde_json::from_slice(&request.body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&request.body).into_owned()));
    let mut state = lock(&shared.state);
    state.requests.push(RecordedRequest {
        method: request.method,
        path: request.path,
        headers: request.headers,
        body,
    });
    state.script.next("scripted server")
}

fn read_line_limited<R: BufRead>(reader: &mut R, budget: &mut usize) -> io::Result<String> {
    let mut line = Vec::new();
    let n = reader
        .by_ref()
        .take((*budget as u64).saturating_add(1))
        .read_until(b'\n', &mut line)?;
    if n > *budget {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request head too large",
        ));
    }
    *budget -= n;
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    String::from_utf8(line)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "non-UTF-8 head"))
}

/// Reads one request; `Ok(None)` on a clean end of stream before a request starts.
fn read_request<R: BufRead>(reader: &mut R) -> io::Result<Option<Request>> {
    let mut budget = MAX_HEAD_BYTES;
    let mut request_line = String::new();
    // Tolerate blank lines between requests (RFC 9112 §2.2).
    while request_line.is_empty() {
        if reader.fill_buf()?.is_empty() {
            return Ok(None);
        }
        request_line = read_line_limited(reader, &mut budget)?;
    }
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("malformed request line: {request_line}"),
        ));
    };
    let mut headers = Vec::new();
    loop {
        let line = read_line_limited(reader, &mut budget)?;
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("malformed header: {line}"),
            ));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        path: path.to_owned(),
        version: version.to_owned(),
        headers,
        body: Vec::new(),
    };
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    if chunked {
        request.body = read_chunked(reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "invalid Content-Length"))?;
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(Some(request))
}

fn read_chunked<R: BufRead>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut budget = MAX_HEAD_BYTES;
        let line = read_line_limited(reader, &mut budget)?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "invalid chunk size"))?;
        if size == 0 {
            // Trailer section, ended by an empty line.
            while !read_line_limited(reader, &mut budget)?.is_empty() {}
            return Ok(body);
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        read_line_limited(reader, &mut budget)?;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A `{"pad":"xxxx…"}` body of `bytes` bytes, in 64 KiB writes; stops quietly when the client
/// hangs up.
fn write_huge<W: Write>(writer: &mut W, bytes: usize, declare_length: bool) -> io::Result<()> {
    let length = if declare_length {
        format!("Content-Length: {bytes}\r\n")
    } else {
        "Transfer-Encoding: chunked\r\n".to_owned()
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{length}Connection: close\r\n\r\n"
    );
    writer.write_all(head.as_bytes())?;
    let open = b"{\"pad\":\"";
    let pad = vec![b'x'; 64 * 1024];
    let mut left = bytes.saturating_sub(open.len() + 2);
    let mut send = |part: &[u8]| -> io::Result<()> {
        if declare_length {
            writer.write_all(part)
        } else {
            writer.write_all(format!("{:x}\r\n", part.len()).as_bytes())?;
            writer.write_all(part)?;
            writer.write_all(b"\r\n")
        }
    };
    send(open)?;
    while left > 0 {
        let n = left.min(pad.len());
        if send(&pad[..n]).is_err() {
            return Ok(());
        }
        left -= n;
    }
    send(b"\"}")?;
    if !declare_length {
        writer.write_all(b"0\r\n\r\n")?;
    }
    writer.flush()
}

/// The head of an SSE answer, then each piece as one chunk, flushed, `gap` apart.
fn write_sse<W: Write>(writer: &mut W, pieces: &[String], gap: Duration) -> io::Result<()> {
    writer.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n",
    )?;
    writer.flush()?;
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 && !gap.is_zero() {
            thread::sleep(gap);
        }
        writer.write_all(format!("{:x}\r\n", piece.len()).as_bytes())?;
        writer.write_all(piece.as_bytes())?;
        writer.write_all(b"\r\n")?;
        writer.flush()?;
    }
    Ok(())
}

fn write_response<W: Write>(
    writer: &mut W,
    status: u16,
    headers: &[(String, String)],
    body: &str,
    close: bool,
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    head.push_str(if close {
        "Connection: close\r\n\r\n"
    } else {
        "Connection: keep-alive\r\n\r\n"
    });
    writer.write_all(head.as_bytes())?;
    writer.write_all(body.as_bytes())?;
    writer.flush()
}

/// The tool results a recorded model request carried, in order.
pub fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}
