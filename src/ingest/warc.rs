//! Reading WARC files (placeholder).
