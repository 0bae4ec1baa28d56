//! Every on-disk reader on arbitrary bytes: the container, and each file
//! kind of the registry (`webmill::kinds::KINDS`) through its verify and
//! dump, as `webmill verify` and `webmill dump` run them. Nothing may panic.
//!
//! Checksums guard every block, so mutated files rarely get past them. The
//! input's first byte chooses: even, the rest is the file as it is (the
//! container's own parsing: header, footer, block index, checksums); odd, a
//! valid container of kind `KINDS[byte / 2 % len]` is written with the rest
//! cut at NUL bytes into header parameters, footer metadata and blocks
//! separators (a block: 8 key bytes, a record count byte, its payload), so
//! the kind's own record decoding sees arbitrary payloads.

use webmill::container::{BlockCodec, Container, ContainerWriter};
use webmill::kinds::{dump_file, verify_file, KINDS};

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| serde_json::json!({}))
}

/// The check: panics on a violated property, returns on anything else.
pub fn check(data: &[u8]) {
    let dir = std::env::temp_dir().join(format!("webmill-fuzz-kinds-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("input.wm");
    let _ = std::fs::remove_file(&path);
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let kind = KINDS[(pick / 2) as usize % KINDS.len()];
    if pick % 2 == 0 {
        if std::fs::write(&path, rest).is_err() {
            return;
        }
    } else {
        let mut parts = rest.split(|&b| b == 0).collect::<Vec<_>>().into_iter();
        let params = json(parts.next().unwrap_or_default());
        let meta = json(parts.next().unwrap_or_default());
        let Ok(mut w) = ContainerWriter::create(&path, kind.tag, kind.version, &params) else {
            return;
        };
        for (i, block) in parts.filter(|p| p.len() >= 9).take(64).enumerate() {
            let codec = if i % 2 == 0 {
                BlockCodec::Raw
            } else {
                BlockCodec::Zstd(1)
            };
            if w.write_block(codec, &block[..8], u64::from(block[8]), &block[9..])
                .is_err()
            {
                return;
            }
        }
        if w.finish(&meta).is_err() {
            return;
        }
    }
    if let Ok(c) = Container::open(&path) {
        let _ = c.verify(|_, _, _| Ok(()));
        for i in 0..c.blocks().len() {
            let _ = c.read_block(i);
        }
    }
    let _ = verify_file(&path);
    let _ = dump_file(&path, &mut std::io::sink());
    let _ = (kind.verify)(&path);
    let _ = (kind.dump)(&path, &mut std::io::sink());
}
