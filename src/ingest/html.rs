//! Extracting title, tokens and links from HTML (placeholder).
