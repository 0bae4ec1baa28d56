//! `webmill serve` as a person and as an attacker meet it: the pages over
//! HTTP, hostile requests answered with a 4xx while the server lives on, a
//! job served while another process holds its lock, and the whole path in
//! a real headless Chromium driven through WebDriver — load the page, type a
//! query, submit it, follow a result to the document's page.

#[path = "../../tests/common/mod.rs"]
mod common;
#[path = "../../tests/common/site.rs"]
mod site;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

fn webmill(args: &[&str]) {
    let out = Command::new(bin()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "webmill {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A job of the generated rich site (titles, anchors to pages never
/// crawled), with near-copies planted, through every stage `serve` shows.
fn served_job(dir: &Path) -> PathBuf {
    let site_dir = dir.join("site");
    std::fs::create_dir_all(&site_dir).unwrap();
    site::write_rich_site(&site_dir, 80, 7);
    let words: String = (0..300).map(|i| format!("word{} ", i % 97)).collect();
    for n in 0..3 {
        std::fs::write(
            site_dir.join(format!("copy{n}.html")),
            format!("<title>Planted copy {n}</title><p>{words} tail{n}</p>"),
        )
        .unwrap();
    }
    let job = dir.join("job");
    let j = job.to_str().unwrap();
    let input = format!("http://site.example/={}", site_dir.display());
    webmill(&["-q", "--mem", "64M", "ingest", "--out", j, &input]);
    webmill(&["-q", "--mem", "64M", "pagerank", j]);
    webmill(&["-q", "--mem", "64M", "index", j]);
    webmill(&["-q", "--mem", "64M", "dedup", j, "--alg", "minhash"]);
    job
}

/// A running `webmill serve`, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(job: &Path) -> Server {
        Server::start_with(job, &[])
    }

    fn start_with(job: &Path, flags: &[&str]) -> Server {
        let mut child = Command::new(bin())
            .args(["serve", "--port", "0"])
            .args(flags)
            .arg(job)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|a| a.trim().trim_end_matches('/').parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        Server { child, addr }
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status, headers (lowercased names), body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 exchange over a fresh connection: `target` is sent as is
/// (raw bytes, so tests can send what no client library would).
fn http(addr: SocketAddr, method: &str, target: &[u8], body: Option<&str>) -> Response {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = Vec::new();
    req.extend_from_slice(method.as_bytes());
    req.push(b' ');
    req.extend_from_slice(target);
    req.extend_from_slice(b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    if let Some(b) = body {
        req.extend_from_slice(
            format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
                b.len()
            )
            .as_bytes(),
        );
    } else {
        req.extend_from_slice(b"\r\n");
    }
    s.write_all(&req).unwrap();
    // Read the head, then the body by its length: a peer may keep the
    // connection open whatever `Connection: close` asked.
    let mut raw = Vec::new();
    let mut buf = [0u8; 1 << 16];
    let split = loop {
        if let Some(p) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "no header end in {:?}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok());
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    loop {
        let done = match length {
            Some(n) => body.len() >= n,
            None if chunked => body.windows(5).any(|w| w == b"0\r\n\r\n"),
            None => false,
        };
        if done {
            break;
        }
        let n = s.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    if chunked {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(
            std::str::from_utf8(&b[..eol])
                .unwrap()
                .split(';')
                .next()
                .unwrap(),
            16,
        )
        .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[eol + 2 + size + 2..];
    }
}

fn get(addr: SocketAddr, target: &str) -> Response {
    http(addr, "GET", target.as_bytes(), None)
}

#[test]
fn pages_and_hostile_requests() {
    let dir = tempfile::tempdir().unwrap();
    let job = served_job(dir.path());
    let mut server = Server::start(&job);
    let a = server.addr;

    let home = get(a, "/");
    assert_eq!(home.status, 200);
    assert!(home.text().contains("name=\"q\""));
    assert!(home
        .header("content-security-policy")
        .is_some_and(|c| c.contains("default-src 'none'")));

    let r = get(a, "/search?q=alpha");
    assert_eq!(r.status, 200);
    let t = r.text();
    assert!(t.contains("class=\"result\""), "{t}");
    assert!(t.contains("<b>alpha</b>"), "query words marked: {t}");
    assert!(t.contains("PageRank <span class=\"barbox\""));
    let crawled: u64 = t
        .split("class=\"doc\" href=\"/doc/")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|d| d.parse().ok())
        .expect("a result links to its document page");

    // A planted near-copy shows its cluster on its page, and in results.
    let r = get(a, "/search?q=word5+word6");
    assert!(r.text().contains("similar</summary>"), "{}", r.text());

    let d = get(a, &format!("/doc/{crawled}"));
    assert_eq!(d.status, 200);
    assert!(d.text().contains("Links to this page"));
    assert!(d.text().contains("Cached text"));
    // A page never crawled (an outside link target) has its own page too.
    let outside = get(a, "/doc/0");
    assert_eq!(outside.status, 200);
    assert!(outside.text().contains("known from links to it"));
    let s = get(a, "/stats");
    assert_eq!(s.status, 200);
    // Issue 24: a plot with nothing to draw (three planted copies make one
    // distinct per-page count) is left out, not an empty box.
    assert!(!s.text().contains("/plot/dedup-minhash.svg"));
    assert_eq!(get(a, "/plot/dedup-minhash.svg").status, 404);
    // Issue 24: figures with their units and rounded as a person reads
    // them: no raw float (`bits per arc 7.721086799711469`), no JSON null.
    let page = s.text();
    assert!(
        page.contains("peak memory") && page.contains(" s</td>"),
        "{page}"
    );
    let long_fraction = page
        .as_bytes()
        .windows(8)
        .any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2..].iter().all(u8::is_ascii_digit));
    assert!(
        !long_fraction,
        "a figure shown with six or more decimals: {page}"
    );
    assert!(!page.contains("null"), "{page}");
    for plot in ["pagerank.svg", "degrees.svg"] {
        assert!(s.text().contains(&format!("/plot/{plot}")), "{plot}");
        let p = get(a, &format!("/plot/{plot}"));
        assert_eq!(p.status, 200, "{plot}");
        assert_eq!(p.header("content-type"), Some("image/svg+xml"));
        assert!(p.text().contains("<svg"));
    }

    // Empty, punctuation-only, unknown and very long queries are answered.
    for q in ["", "%21%3F", "zzzunknownword"] {
        let r = get(a, &format!("/search?q={q}"));
        assert_eq!(r.status, 200, "{q}");
        assert!(r.text().contains("No results"), "{q}");
    }
    let many: String = (0..1000).map(|i| format!("w{i}+")).collect();
    let r = get(a, &format!("/search?q={}", &many[..many.len() - 1]));
    assert_eq!(r.status, 400, "over MAX_QUERY_CHARS");
    let many: String = (0..300).map(|i| format!("w{i}+")).collect();
    let r = get(a, &format!("/search?q={many}"));
    assert_eq!(r.status, 200);
    assert!(r.text().contains("were not searched"));

    // Hostile requests: 4xx, never a crash.
    let huge = format!("/search?q={}", "a".repeat(100_000));
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("huge query string", huge.into_bytes(), 414),
        ("invalid UTF-8 escape", b"/search?q=%FF%FE".to_vec(), 400),
        ("bad escape", b"/search?q=%G0".to_vec(), 400),
        ("bad page", b"/search?q=alpha&page=0".to_vec(), 400),
        (
            "page past the last",
            b"/search?q=alpha&page=101".to_vec(),
            400,
        ),
        (
            "traversal in a docID",
            b"/doc/..%2F..%2Fjob.json".to_vec(),
            400,
        ),
        ("traversal in the path", b"/../../etc/passwd".to_vec(), 404),
        ("docID past the end", b"/doc/99999999".to_vec(), 404),
        ("docID over u64", b"/doc/18446744073709551616".to_vec(), 400),
        ("negative docID", b"/doc/-1".to_vec(), 400),
        ("traversal in a plot", b"/plot/..%2Fjob.json".to_vec(), 404),
        ("unknown plot", b"/plot/x.svg".to_vec(), 404),
        ("unknown page", b"/admin".to_vec(), 404),
        (
            "raw bytes in the target",
            b"/search?q=\xff\xfe".to_vec(),
            400,
        ),
    ];
    for (what, target, want) in &cases {
        let r = http(a, "GET", target, None);
        assert_eq!(r.status, *want, "{what}: {}", r.text());
    }
    let r = http(a, "POST", b"/search?q=alpha", Some("{}"));
    assert_eq!(r.status, 405, "POST");
    let r = get(a, &format!("/doc/{crawled}/raw"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-security-policy"), Some("sandbox"));
    assert_eq!(r.header("content-type"), Some("text/plain"));

    assert!(server.alive(), "the server survived every request");
    assert_eq!(get(a, "/").status, 200);
}

#[test]
fn serves_a_locked_read_only_job() {
    let dir = tempfile::tempdir().unwrap();
    let job = served_job(dir.path());
    // Another process holds the job's lock: serve reads without it.
    let _lock = webmill::job::Job::open(&job, false).unwrap();
    let mut server = Server::start(&job);
    assert_eq!(get(server.addr, "/search?q=alpha").status, 200);
    assert!(server.alive());
}

/// A WebDriver session on chromedriver (the W3C protocol over HTTP).
struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: tempfile::TempDir,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    /// Starts chromedriver and a headless Chromium; `None` (with the
    /// reason printed) when they are not installed.
    fn start() -> Option<Browser> {
        let (driver, chromium) = ("/usr/bin/chromedriver", "/usr/bin/chromium");
        if !Path::new(driver).exists() || !Path::new(chromium).exists() {
            eprintln!(
                "skipping the browser test: {driver} or {chromium} is missing \
                 (apt-get install chromium chromium-driver; .ci/run installs them)"
            );
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let t0 = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let caps = serde_json::json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                         "--no-first-run", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync",
                         "--window-size=1200,1000",
                         format!("--user-data-dir={}", profile.path().display())]
            }
        }}});
        let r = http(addr, "POST", b"/session", Some(&caps.to_string()));
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        let session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {v}"))
            .to_string();
        Some(Browser {
            driver,
            addr,
            session,
            _profile: profile,
        })
    }

    fn call(&self, method: &str, path: &str, body: Option<serde_json::Value>) -> serde_json::Value {
        let target = format!("/session/{}{path}", self.session);
        let body = body.map(|b| b.to_string());
        let r = http(self.addr, method, target.as_bytes(), body.as_deref());
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(r.status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    fn goto(&self, url: &str) {
        self.call("POST", "/url", Some(serde_json::json!({ "url": url })));
    }

    fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().unwrap().to_string()
    }

    fn find(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            Some(serde_json::json!({"using": "css selector", "value": css})),
        );
        v[ELEMENT].as_str().unwrap().to_string()
    }

    fn text(&self, element: &str) -> String {
        self.call("GET", &format!("/element/{element}/text"), None)
            .as_str()
            .unwrap()
            .to_string()
    }

    fn click(&self, element: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/click"),
            Some(serde_json::json!({})),
        );
    }

    fn type_into(&self, element: &str, text: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            Some(serde_json::json!({ "text": text })),
        );
    }

    /// Waits until the page's URL contains `part`.
    fn wait_for_url(&self, part: &str) -> String {
        let t0 = Instant::now();
        loop {
            let u = self.url();
            if u.contains(part) {
                return u;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "still at {u}, wanted {part}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&self, path: &Path) {
        use base64::Engine;
        let b64 = self.call("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let target = format!("/session/{}", self.session);
        let _ = std::panic::catch_unwind(|| http(self.addr, "DELETE", target.as_bytes(), None));
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

#[test]
fn a_person_searches_in_a_real_browser() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job = served_job(dir.path());
    let server = Server::start(&job);
    let base = format!("http://{}", server.addr);

    browser.goto(&format!("{base}/"));
    let bx = browser.find("main input[name=q]");
    browser.type_into(&bx, "alpha");
    browser.click(&browser.find("main button[type=submit]"));
    let url = browser.wait_for_url("/search?q=alpha");
    assert!(url.starts_with(&base), "{url}");
    let count = browser.text(&browser.find("#count"));
    assert!(count.contains("matching documents"), "{count}");
    let first_title = browser.text(&browser.find(".result a.title"));
    assert!(!first_title.is_empty());
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    browser.screenshot(&shots.join("serve-results.png"));

    // Follow the first result to its document page.
    browser.click(&browser.find(".result a.doc"));
    browser.wait_for_url("/doc/");
    let title = browser.text(&browser.find("#title"));
    assert_eq!(title, first_title, "the document page is the result's");
    let headings = browser.text(&browser.find("main"));
    assert!(headings.contains("Links to this page"));
    assert!(headings.contains("Cached text"));
    browser.screenshot(&shots.join("serve-doc.png"));

    // The stats page draws its plots.
    browser.goto(&format!("{base}/stats"));
    let img = browser.find("img[src='/plot/pagerank.svg']");
    let w = browser.call(
        "GET",
        &format!("/element/{img}/property/naturalWidth"),
        None,
    );
    assert!(w.as_u64().unwrap_or(0) > 0, "the convergence plot loaded");
    browser.screenshot(&shots.join("serve-stats.png"));
}

/// The files a process holds open that were deleted since it opened them.
fn deleted_open_files(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|p| p.display().to_string())
        .filter(|p| p.ends_with(" (deleted)"))
        .collect()
}

/// Issue 24: a server under continuous queries while `run --force`
/// rewrites its job answers every request wholly from the old job or
/// wholly from the new one, never with an error; once the run has finished
/// it answers as a server started on the new job does, and holds none of
/// the old job's files.
#[test]
fn a_server_under_queries_while_run_force_rewrites_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let site_dir = dir.path().join("site");
    std::fs::create_dir_all(&site_dir).unwrap();
    site::write_rich_site(&site_dir, 80, 7);
    let job = dir.path().join("job");
    let input = format!("http://site.example/={}", site_dir.display());
    let run = |extra: &[&str]| {
        let mut c = Command::new(bin());
        c.args(["-q", "--mem", "64M", "run", "--out"])
            .arg(&job)
            .args(extra)
            .arg(&input)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    let out = run(&[]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let targets = [
        "/search?q=alpha",
        "/search?q=gamma+delta",
        "/search?q=vec&page=2",
        "/doc/3",
        "/doc/20",
    ];
    let answers = |addr| -> Vec<String> {
        targets
            .iter()
            .map(|t| {
                let r = get(addr, t);
                assert_eq!(r.status, 200, "{t}: {}", r.text());
                r.text()
            })
            .collect()
    };
    let server = Server::start(&job);
    let old = answers(server.addr);

    // Rewrite the job with another damping factor (new ranks, so new
    // scores and orders; the near-duplicate clusters, which read the ranks,
    // are dropped and made again), querying all the while.
    let mut rewrite = run(&["--force", "--damping", "0.6"]).spawn().unwrap();
    let mut during = Vec::new();
    // A server started while the rewrite runs (it may open the job between
    // two publications) ends up serving the new job too.
    let mut mid = None;
    let status = loop {
        if mid.is_none() && !during.is_empty() {
            mid = Some(Server::start(&job));
        }
        if let Some(status) = rewrite.try_wait().unwrap() {
            break status;
        }
        for (i, t) in targets.iter().enumerate() {
            let r = get(server.addr, t);
            assert_eq!(r.status, 200, "during the rewrite, {t}: {}", r.text());
            during.push((i, r.text()));
        }
    };
    let mut err = String::new();
    rewrite
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "run --force: {err}");

    let fresh = Server::start(&job);
    let new = answers(fresh.addr);
    drop(fresh);
    assert_ne!(old, new, "the rewrite changed the answers");
    let from_old = during.iter().filter(|(i, t)| *t == old[*i]).count();
    eprintln!(
        "{} answers during the rewrite: {from_old} the old job's, the rest the new one's",
        during.len()
    );
    for (i, text) in &during {
        assert!(
            *text == old[*i] || *text == new[*i],
            "{} during the rewrite was neither the old job's answer nor the new one's:\n{text}",
            targets[*i]
        );
    }
    // The server switches to the new job, and lets go of the old files.
    let start = Instant::now();
    while answers(server.addr) != new {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the server still answers from the old job"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    if let Some(mid) = &mid {
        let start = Instant::now();
        while answers(mid.addr) != new {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "a server started during the rewrite still answers from an older state"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let start = Instant::now();
    loop {
        let held = deleted_open_files(server.child.id());
        if held.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the server holds deleted files: {held:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        during.len() >= targets.len(),
        "queries ran during the rewrite"
    );
}

/// A connection that reads a response, or `None` when the server closed
/// it or did not answer within `wait`.
fn answer_within(s: &mut TcpStream, wait: Duration) -> Option<Vec<u8>> {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 1 << 14];
    match s.read(&mut buf) {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(buf[..n].to_vec()),
    }
}

/// Issue 24: idle connections and clients that send their headers a byte
/// at a time are closed; beyond --max-connections new connections wait
/// until one closes; a query past --query-time answers with what it found,
/// marked partial.
#[test]
fn the_server_holds_its_ground() {
    let dir = tempfile::tempdir().unwrap();
    let job = served_job(dir.path());
    let server = Server::start_with(
        &job,
        &[
            "--idle-timeout",
            "1",
            "--header-timeout",
            "1",
            "--max-connections",
            "3",
            "--query-time",
            "0.000000001",
        ],
    );
    let a = server.addr;
    // Idle: closed after about a second, not kept.
    let t = Instant::now();
    let mut idle = TcpStream::connect(a).unwrap();
    assert_eq!(answer_within(&mut idle, Duration::from_secs(10)), None);
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "an idle connection was closed after {waited:?}"
    );
    // Slow headers: a byte every 200 ms is not a request after a second.
    let mut slow = TcpStream::connect(a).unwrap();
    let t = Instant::now();
    let mut closed = false;
    for b in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        .iter()
    {
        if slow.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        if t.elapsed() > Duration::from_secs(6) {
            break;
        }
    }
    let answer = answer_within(&mut slow, Duration::from_secs(3));
    assert!(
        closed
            || answer
                .as_deref()
                .is_none_or(|r| r.starts_with(b"HTTP/1.1 408")),
        "a client sending its headers slowly was kept: {:?}",
        answer.map(|r| String::from_utf8_lossy(&r).into_owned())
    );
    assert!(t.elapsed() < Duration::from_secs(8));

    // Three connections held open (each with a request answered, so not
    // idle yet); a fourth waits.
    let request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let mut held: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut s = TcpStream::connect(a).unwrap();
            s.write_all(request).unwrap();
            assert!(answer_within(&mut s, Duration::from_secs(10)).is_some());
            s
        })
        .collect();
    let mut fourth = TcpStream::connect(a).unwrap();
    fourth.write_all(request).unwrap();
    assert_eq!(
        answer_within(&mut fourth, Duration::from_millis(300)),
        None,
        "a fourth connection was served beside three"
    );
    // Once they close (or time out), it is served.
    held.clear();
    let r = answer_within(&mut fourth, Duration::from_secs(10)).expect("served once a slot freed");
    assert!(
        r.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&r)
    );

    // The query time limit: an answer, marked partial.
    let r = get(a, "/search?q=alpha");
    assert_eq!(r.status, 200);
    assert!(r.text().contains("partial answer"), "{}", r.text());
}
