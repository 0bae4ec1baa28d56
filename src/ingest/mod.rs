//! Ingest: web dumps (WARC files, directories of HTML) into a repository, URL
//! records, links and anchors; then the URL resolver.

pub mod html;
pub mod pagefile;
pub mod url;
pub mod warc;
