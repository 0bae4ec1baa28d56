use super::*;
use crate::error::Error;
use serde_json::json;

fn sample(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("sample.wm");
    let mut w = ContainerWriter::create(&path, "test", 3, &json!({"k": 10})).unwrap();
    w.write_block(BlockCodec::Zstd(3), b"a", 2, b"hello hello hello")
        .unwrap();
    w.write_block(BlockCodec::Raw, b"m", 1, &[1, 2, 3, 4, 5, 6, 7, 8, 9])
        .unwrap();
    w.write_block(BlockCodec::Zstd(1), b"x", 0, b"").unwrap();
    w.finish(&json!({"total": 3})).unwrap();
    path
}

#[test]
fn roundtrip() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let c = Container::open_kind(&path, "test", 3).unwrap();
    assert_eq!(c.params()["k"], 10);
    assert_eq!(c.meta()["total"], 3);
    assert_eq!(c.blocks().len(), 3);
    assert_eq!(c.records(), 3);
    assert_eq!(c.read_block(0).unwrap(), b"hello hello hello");
    assert_eq!(&*c.map_block(1).unwrap(), &[1, 2, 3, 4, 5, 6, 7, 8, 9][..]);
    assert_eq!(c.map_block(1).unwrap().as_ptr() as usize % 8, 0);
    assert!(c.read_block(2).unwrap().is_empty());
    assert_eq!(c.find_block(b"0"), None);
    assert_eq!(c.find_block(b"a"), Some(0));
    assert_eq!(c.find_block(b"n"), Some(1));
    assert_eq!(c.find_block(b"z"), Some(2));
    c.verify(|_, _, _| Ok(())).unwrap();
    // Kind and version are checked.
    assert!(matches!(
        Container::open_kind(&path, "edges", 3),
        Err(Error::WrongKind { .. })
    ));
    assert!(matches!(
        Container::open_kind(&path, "test", 4),
        Err(Error::Version { .. })
    ));
}

#[test]
fn unpublished_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone.wm");
    {
        let mut w = ContainerWriter::create(&path, "test", 1, &json!({})).unwrap();
        w.write_block(BlockCodec::Raw, b"", 1, b"x").unwrap();
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Flipping any single byte, anywhere, is caught by open + verify, and the
/// message names the file.
#[test]
fn every_flipped_byte_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let good = std::fs::read(&path).unwrap();
    let bad_path = dir.path().join("bad.wm");
    for i in 0..good.len() {
        for flip in [0x01u8, 0x80] {
            let mut bytes = good.clone();
            bytes[i] ^= flip;
            std::fs::write(&bad_path, &bytes).unwrap();
            let result = Container::open(&bad_path).and_then(|c| c.verify(|_, _, _| Ok(())));
            let err = result.expect_err(&format!("flip of byte {i} by {flip:#x} went unnoticed"));
            assert!(
                err.to_string().contains("bad.wm"),
                "message does not name the file: {err}"
            );
        }
    }
}

#[test]
fn every_truncation_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let good = std::fs::read(&path).unwrap();
    let bad_path = dir.path().join("cut.wm");
    for len in 0..good.len() {
        std::fs::write(&bad_path, &good[..len]).unwrap();
        let err = Container::open(&bad_path)
            .and_then(|c| c.verify(|_, _, _| Ok(())))
            .expect_err(&format!("truncation to {len} bytes went unnoticed"));
        assert!(err.to_string().contains("cut.wm"), "{err}");
    }
}

#[test]
fn junk_is_not_a_container() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("junk");
    std::fs::write(&p, vec![0xabu8; 4096]).unwrap();
    assert!(matches!(Container::open(&p), Err(Error::BadMagic { .. })));
}

/// A block key longer than the index can hold is refused with an internal
/// error naming the file, not a panic; a key of exactly 65535 bytes fits.
#[test]
fn overlong_block_key_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.wm");
    let mut w = ContainerWriter::create(&path, "test", 1, &json!({})).unwrap();
    w.write_block(BlockCodec::Raw, &vec![7; 65535], 1, b"x")
        .unwrap();
    let err = w
        .write_block(BlockCodec::Raw, &vec![7; 65536], 1, b"y")
        .unwrap_err();
    assert!(matches!(err, Error::Internal(_)), "{err:?}");
    assert!(err.to_string().contains("keys.wm"), "{err}");
    w.finish(&json!({})).unwrap();
    let c = Container::open(&path).unwrap();
    assert_eq!(c.blocks().len(), 1);
    assert_eq!(c.blocks()[0].key.len(), 65535);
}
