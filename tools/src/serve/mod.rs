//! `webmill serve`: the searcher "run by a web server" (Brin & Page §4.5),
//! a local web page over one job's files.
//!
//! | route | page |
//! |---|---|
//! | `/` | the query box and what the job holds |
//! | `/search?q=WORDS&page=N` | ten results a page: title, URL, snippet with the words marked, PageRank bar, `+N more from this host`, `+N similar` |
//! | `/doc/DOCID` | a document: URL, title, rank, links in (with anchor text) and out, near-duplicates, cached text |
//! | `/doc/DOCID/raw` | the stored bytes, as `text/plain` in a sandbox |
//! | `/stats` | each finished stage's figures and the job's plots |
//! | `/plot/NAME` | a plot (names from a fixed list, never a path) |
//!
//! The job is opened read-only through a [`JobView`](webmill::job::JobView):
//! no lock is taken, so a job another process is writing, or a read-only
//! copy, is served. Each request reads one generation of the job, whole
//! ([`Live`]): every file is opened at once, a new generation is opened
//! beside the old one once its writer has let go of the job and swapped in
//! between requests, and the old files are closed when its last request
//! ends. Requests run on tokio; the disk work of each runs on the blocking
//! pool, sharing one [`Searcher`](webmill::search::Searcher).
//!
//! The server holds its ground ([`Limits`]): connections are accepted on
//! our own loop over hyper's HTTP/1.1 connection, at most
//! `max_connections` at once (the others wait in the listen queue); a
//! client has `header_timeout` to send a request's headers; a connection
//! without a request under way and silent for `idle_timeout` is closed; a
//! query's matching stops at `query_time` and its page says the answer is
//! partial; when the last connection of a burst closes, freed heap memory
//! goes back to the system.
//!
//! Hostile requests get a 4xx page and never reach the engine with anything
//! unchecked: a request line over [`MAX_URI_BYTES`] is refused (414), query
//! text over [`MAX_QUERY_CHARS`] characters or not UTF-8 once decoded is
//! refused (400), a docID is parsed as a number (400) and looked up in the
//! doc table (404), page numbers stop at [`MAX_PAGE`], plot names are
//! matched against the plots the job has (404). Pages escape everything
//! they show and carry a Content-Security-Policy without scripts.

mod data;
mod page;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::extract::{Path as UrlPath, RawQuery, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use webmill::job::{JobView, MANIFEST};

pub use data::Served;

/// Longest request target (path and query) accepted, in bytes.
pub const MAX_URI_BYTES: usize = 8 << 10;
/// Longest query text accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 2048;
/// Last result page served.
pub const MAX_PAGE: usize = 100;
/// Results a page.
pub const PER_PAGE: usize = 10;

const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
                   form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// How the server holds its ground.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Worker threads of the runtime (default: one per core).
    pub threads: Option<usize>,
    /// Connections served at once; further ones wait to be accepted.
    pub max_connections: usize,
    /// Time a client has to send a request's headers, from its first byte.
    pub header_timeout: Duration,
    /// A connection with no request under way and nothing read or written
    /// for this long is closed.
    pub idle_timeout: Duration,
    /// A query's matching stops after this long; its page says the answer
    /// is partial.
    pub query_time: Duration,
    /// How often the job is checked for a new generation.
    pub watch_every: Duration,
    /// Say on stderr when the served generation changes.
    pub verbose: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            threads: None,
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            query_time: Duration::from_secs(2),
            watch_every: Duration::from_millis(250),
            verbose: true,
        }
    }
}

/// The job as served: one generation at a time. A request takes the current
/// [`Served`] when it starts and reads only it, so it never sees two
/// generations; a new one (a writer published and let go of the job) is
/// opened whole beside the old one and swapped in between requests, and the
/// old one's files are closed when its last request ends.
pub struct Live {
    dir: PathBuf,
    current: RwLock<Arc<Served>>,
    /// job.json's identity when `current` was chosen.
    stamp: Mutex<Option<Stamp>>,
    verbose: bool,
    query_time: Duration,
}

/// What identifies one writing of job.json (it is replaced by a rename).
type Stamp = (u64, u64, i64, i64, u64);

fn stamp(dir: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(dir.join(MANIFEST)).ok()?;
    Some((m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.len()))
}

type App = Arc<Served>;
type Shared = Arc<Live>;

impl Live {
    /// Opens the job's current generation.
    pub fn open(dir: &Path, limits: &Limits) -> webmill::Result<Live> {
        let before = stamp(dir);
        let served = JobView::read_whole(dir, Served::open)?;
        Ok(Live {
            dir: dir.to_path_buf(),
            current: RwLock::new(Arc::new(served)),
            stamp: Mutex::new(before),
            verbose: limits.verbose,
            query_time: limits.query_time,
        })
    }

    /// The generation a request reads.
    pub fn current(&self) -> App {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Switches to the job's new generation if job.json changed and no
    /// writer holds the job (a run publishing several stages is waited
    /// for, so requests never see its intermediate states). Returns the
    /// generation switched to.
    pub fn refresh(&self) -> webmill::Result<Option<u64>> {
        let now = stamp(&self.dir);
        if now == *self.stamp.lock().unwrap_or_else(|e| e.into_inner()) {
            return Ok(None);
        }
        if webmill::job::writer_active(&self.dir) {
            return Ok(None);
        }
        let served = JobView::read_whole(&self.dir, Served::open)?;
        if webmill::job::writer_active(&self.dir) {
            // A writer began meanwhile: wait for it to finish.
            return Ok(None);
        }
        *self.stamp.lock().unwrap_or_else(|e| e.into_inner()) = now;
        let generation = served.generation();
        if generation == self.current().generation() {
            return Ok(None);
        }
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(served);
        Ok(Some(generation))
    }
}

/// Blocking threads (searches, pages) per runtime worker.
const BLOCKING_PER_WORKER: usize = 4;

/// Serves `job` at `addr` until Ctrl-C; `on_listen` is told the address
/// actually bound (port 0 picks a free one).
pub fn serve(
    job: &Path,
    addr: SocketAddr,
    limits: Limits,
    on_listen: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let live: Shared = Arc::new(Live::open(job, &limits)?);
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    let workers = limits.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    rt.worker_threads(workers.max(1))
        // Searches run on blocking threads and are bound by the cores: more
        // threads than a few per core only add stacks and allocator arenas
        // (a burst of 64 clients left 28 MB of them resident), so requests
        // beyond them wait their turn, and idle threads go after 2 s.
        .max_blocking_threads(BLOCKING_PER_WORKER * workers.max(1))
        .thread_keep_alive(Duration::from_secs(2));
    let rt = rt.enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| webmill::Error::io(format!("cannot listen on {addr}"), e))?;
        on_listen(listener.local_addr()?);
        tokio::spawn(watch(live.clone(), limits.watch_every));
        let app = router(live);
        tokio::select! {
            r = accept_loop(listener, app, limits) => r,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}

/// Checks the job for a new generation every `every`.
async fn watch(live: Shared, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let l = live.clone();
        match tokio::task::spawn_blocking(move || l.refresh()).await {
            Ok(Ok(Some(g))) if live.verbose => {
                eprintln!("the job changed: now serving its generation {g}")
            }
            Ok(Err(e)) if live.verbose => {
                eprintln!("the job changed but cannot be opened yet ({e}); still serving the previous one")
            }
            _ => {}
        }
    }
}

/// Accepts connections while fewer than `limits.max_connections` are open
/// (the others wait in the listen queue) and serves each with the
/// timeouts.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: Limits,
) -> anyhow::Result<()> {
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let permit = slots.clone().acquire_owned().await?;
        let (stream, _) = match listener.accept().await {
            Ok(c) => c,
            // Out of descriptors or a connection reset before accept: wait
            // a little and go on; the server stays up.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        open.fetch_add(1, Ordering::SeqCst);
        let (app, limits, open) = (app.clone(), limits.clone(), open.clone());
        tokio::spawn(async move {
            connection(stream, app, &limits).await;
            drop(permit);
            if open.fetch_sub(1, Ordering::SeqCst) == 1 {
                // The last connection of a burst closed: give the memory
                // its buffers held back to the system.
                webmill::resources::release_freed_heap();
            }
        });
    }
}

/// Serves one connection: HTTP/1.1 with keep-alive, headers within
/// `header_timeout`, closed after `idle_timeout` without a request.
async fn connection(stream: tokio::net::TcpStream, app: Router, limits: &Limits) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let epoch = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let busy = Arc::new(AtomicUsize::new(0));
    let io = TokioIo::new(Watched {
        inner: stream,
        epoch,
        last: last.clone(),
    });
    let b = busy.clone();
    let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let (app, busy) = (app.clone(), b.clone());
        async move {
            busy.fetch_add(1, Ordering::SeqCst);
            let r = tower::ServiceExt::oneshot(app, req).await;
            busy.fetch_sub(1, Ordering::SeqCst);
            r
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true)
        .serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let tick = (limits.idle_timeout / 4).max(Duration::from_millis(100));
    let mut closing = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            _ = tokio::time::sleep(tick), if !closing => {
                let idle = epoch.elapsed().saturating_sub(Duration::from_millis(last.load(Ordering::Relaxed)));
                if busy.load(Ordering::SeqCst) == 0 && idle >= limits.idle_timeout {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// A stream that notes when it last read or wrote (milliseconds after
/// `epoch`), for the idle timeout.
struct Watched {
    inner: tokio::net::TcpStream,
    epoch: Instant,
    last: Arc<AtomicU64>,
}

impl Watched {
    fn touch(&self) {
        self.last
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = std::pin::Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.touch();
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = std::pin::Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(r, std::task::Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        r
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The routes over `live`.
pub fn router(live: Shared) -> Router {
    Router::new()
        .route("/", get(home))
        .route("/search", get(search))
        .route("/doc/{id}", get(doc))
        .route("/doc/{id}/raw", get(raw))
        .route("/stats", get(stats))
        .route("/plot/{name}", get(plot))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(live.clone(), limits))
        .with_state(live)
}

/// Refuses over-long request targets before any handler sees them.
async fn limits(State(live): State<Shared>, req: Request, next: Next) -> Response {
    let len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if len > MAX_URI_BYTES {
        return error(
            &live.current(),
            StatusCode::URI_TOO_LONG,
            &format!("The request is {len} bytes long; at most {MAX_URI_BYTES} are read."),
        );
    }
    next.run(req).await
}

fn html(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

fn error(app: &Served, status: StatusCode, message: &str) -> Response {
    html(status, page::error(app, status.as_u16(), message))
}

/// Runs `f` on the blocking pool; an engine error is a 500 page naming it
/// (a corrupt file names the file and block), as `webmill verify` would.
async fn blocking(
    app: App,
    f: impl FnOnce(&Served) -> Result<Response, webmill::Error> + Send + 'static,
) -> Response {
    let a = app.clone();
    match tokio::task::spawn_blocking(move || f(&a)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => error(&app, StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => error(
            &app,
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the request failed: {e}"),
        ),
    }
}

async fn home(State(live): State<Shared>) -> Response {
    let app = live.current();
    blocking(app, |a| Ok(html(StatusCode::OK, page::home(a)))).await
}

async fn search(State(live): State<Shared>, RawQuery(raw): RawQuery) -> Response {
    let app = live.current();
    let live_query_time = live.query_time;
    let params = match parse_query_string(raw.as_deref().unwrap_or("")) {
        Ok(p) => p,
        Err(why) => return error(&app, StatusCode::BAD_REQUEST, &why),
    };
    let q = params
        .iter()
        .find(|(k, _)| k == "q")
        .map_or("", |(_, v)| v.as_str())
        .to_string();
    if q.chars().count() > MAX_QUERY_CHARS {
        return error(
            &app,
            StatusCode::BAD_REQUEST,
            &format!("The query is longer than {MAX_QUERY_CHARS} characters."),
        );
    }
    let page = match params.iter().find(|(k, _)| k == "page") {
        None => 1,
        Some((_, v)) => match v.parse::<usize>() {
            Ok(p) if (1..=MAX_PAGE).contains(&p) => p,
            _ => {
                return error(
                    &app,
                    StatusCode::BAD_REQUEST,
                    &format!("The page must be a number from 1 to {MAX_PAGE}."),
                )
            }
        },
    };
    blocking(app, move |a| {
        let s = match &a.searcher {
            Ok(s) => s,
            Err(why) => return Ok(error(a, StatusCode::NOT_FOUND, why)),
        };
        let mut query = webmill::search::Query::parse(&q);
        query.deadline = Some(Instant::now() + live_query_time);
        let results = s.search(&query, PER_PAGE, (page - 1) * PER_PAGE)?;
        Ok(html(
            StatusCode::OK,
            page::results(a, &q, page, PER_PAGE, &results),
        ))
    })
    .await
}

// The error is the response itself (an error page), returned once per request.
#[allow(clippy::result_large_err)]
fn parse_docid(app: &Served, id: &str) -> Result<u64, Response> {
    match id.parse::<u64>() {
        Ok(d) if d < app.doc_count() => Ok(d),
        Ok(d) => Err(error(
            app,
            StatusCode::NOT_FOUND,
            &format!(
                "There is no docID {d}: this job has {} documents.",
                app.doc_count()
            ),
        )),
        Err(_) => Err(error(
            app,
            StatusCode::BAD_REQUEST,
            "A document is named by its docID, a number.",
        )),
    }
}

async fn doc(State(live): State<Shared>, UrlPath(id): UrlPath<String>) -> Response {
    let app = live.current();
    let d = match parse_docid(&app, &id) {
        Ok(d) => d,
        Err(r) => return r,
    };
    blocking(app, move |a| {
        Ok(match a.doc_info(d)? {
            Some(info) => html(StatusCode::OK, page::doc(a, &info)),
            None => error(a, StatusCode::NOT_FOUND, "No such document."),
        })
    })
    .await
}

async fn raw(State(live): State<Shared>, UrlPath(id): UrlPath<String>) -> Response {
    let app = live.current();
    let d = match parse_docid(&app, &id) {
        Ok(d) => d,
        Err(r) => return r,
    };
    blocking(app, move |a| {
        let Some((_content_type, body)) = a.raw(d)? else {
            return Ok(error(
                a,
                StatusCode::NOT_FOUND,
                "This document's bytes are not in the repository.",
            ));
        };
        // Shown as text whatever it is: never rendered, never run.
        let mut r = body.into_response();
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("sandbox"),
        );
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        Ok(r)
    })
    .await
}

async fn stats(State(live): State<Shared>) -> Response {
    let app = live.current();
    blocking(app, |a| Ok(html(StatusCode::OK, page::stats(a)))).await
}

async fn plot(State(live): State<Shared>, UrlPath(name): UrlPath<String>) -> Response {
    let app = live.current();
    blocking(app, move |a| {
        Ok(match a.plot(&name)? {
            Some(svg) => {
                let mut r = svg.into_response();
                let h = r.headers_mut();
                h.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("image/svg+xml"),
                );
                h.insert(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
                );
                r
            }
            None => error(a, StatusCode::NOT_FOUND, "This job has no such plot."),
        })
    })
    .await
}

async fn not_found(State(live): State<Shared>) -> Response {
    let app = live.current();
    error(&app, StatusCode::NOT_FOUND, "There is no such page.")
}

/// Decodes an `application/x-www-form-urlencoded` query string strictly:
/// `+` is a space, `%XX` a byte, and every value must be UTF-8 once
/// decoded (an error message otherwise).
pub fn parse_query_string(s: &str) -> Result<Vec<(String, String)>, String> {
    fn decode(part: &str) -> Result<String, String> {
        let b = part.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' => {
                    // Two hex digits exactly (`u8::from_str_radix` would
                    // also take a sign: `%+F`).
                    let digit = |k: usize| b.get(i + k).and_then(|&c| char::from(c).to_digit(16));
                    let (Some(hi), Some(lo)) = (digit(1), digit(2)) else {
                        return Err(format!("The query string has a bad escape at byte {i}."));
                    };
                    out.push((hi * 16 + lo) as u8);
                    i += 2;
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8(out).map_err(|e| {
            format!(
                "The query is not UTF-8 text (bad byte at {} once decoded).",
                e.utf8_error().valid_up_to()
            )
        })
    }
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_query_string;

    #[test]
    fn query_strings_decode_strictly() {
        assert_eq!(
            parse_query_string("q=vec+push%21&page=2").unwrap(),
            vec![
                ("q".to_string(), "vec push!".to_string()),
                ("page".to_string(), "2".to_string())
            ]
        );
        assert_eq!(
            parse_query_string("q=%C3%A9").unwrap()[0].1,
            "é".to_string()
        );
        assert!(parse_query_string("q=%FF").is_err());
        assert!(parse_query_string("q=%C3").is_err());
        assert!(parse_query_string("q=%G1").is_err());
        assert!(parse_query_string("q=%4").is_err());
        assert_eq!(parse_query_string("").unwrap(), vec![]);
    }

    /// Regression: `%+F` was decoded as byte 0x0F (`u8::from_str_radix`
    /// accepts a leading `+`); a sign is not a hex digit.
    #[test]
    fn a_sign_is_not_a_hex_digit() {
        for bad in ["q=%+F", "q=%-1", "q=%+", "q=a%+0b"] {
            let e = parse_query_string(bad).unwrap_err();
            assert!(e.contains("bad escape"), "{bad}: {e}");
        }
        assert_eq!(parse_query_string("q=%2B%2b").unwrap()[0].1, "++");
    }
}
