//! Near-duplicates by sorting sketches.
