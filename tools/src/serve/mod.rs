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
//! copy, is served. Requests run on tokio; the disk work of each runs on
//! the blocking pool, sharing one [`Searcher`](webmill::search::Searcher).
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
use std::path::Path;
use std::sync::Arc;

use axum::extract::{Path as UrlPath, RawQuery, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

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

type App = Arc<Served>;

/// Serves `job` at `addr` until Ctrl-C; `on_listen` is told the address
/// actually bound (port 0 picks a free one).
pub fn serve(
    job: &Path,
    addr: SocketAddr,
    threads: Option<usize>,
    on_listen: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let app: App = Arc::new(Served::open(job)?);
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        rt.worker_threads(n.max(1));
    }
    let rt = rt.enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        on_listen(listener.local_addr()?);
        axum::serve(listener, router(app))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        anyhow::Ok(())
    })
}

/// The routes over `app`.
pub fn router(app: App) -> Router {
    Router::new()
        .route("/", get(home))
        .route("/search", get(search))
        .route("/doc/{id}", get(doc))
        .route("/doc/{id}/raw", get(raw))
        .route("/stats", get(stats))
        .route("/plot/{name}", get(plot))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(app.clone(), limits))
        .with_state(app)
}

/// Refuses over-long request targets before any handler sees them.
async fn limits(State(app): State<App>, req: Request, next: Next) -> Response {
    let len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if len > MAX_URI_BYTES {
        return error(
            &app,
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

async fn home(State(app): State<App>) -> Response {
    blocking(app, |a| Ok(html(StatusCode::OK, page::home(a)))).await
}

async fn search(State(app): State<App>, RawQuery(raw): RawQuery) -> Response {
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
        let query = webmill::search::Query::parse(&q);
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

async fn doc(State(app): State<App>, UrlPath(id): UrlPath<String>) -> Response {
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

async fn raw(State(app): State<App>, UrlPath(id): UrlPath<String>) -> Response {
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

async fn stats(State(app): State<App>) -> Response {
    blocking(app, |a| Ok(html(StatusCode::OK, page::stats(a)))).await
}

async fn plot(State(app): State<App>, UrlPath(name): UrlPath<String>) -> Response {
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

async fn not_found(State(app): State<App>) -> Response {
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
