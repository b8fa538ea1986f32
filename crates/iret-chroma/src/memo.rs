//! Which of an index's chunks a collection holds, remembered in the index folder
//! (`store-holding/COLLECTION-ID`) per version of the collection and set of keys: a tag
//! line, then one byte per key (1: held). Written whole or not at all (a temporary file
//! renamed); a memo of another tag, or unreadable, is asked again.
use std::io::Write;
use std::path::Path;

/// The collection's version and a hash of the keys asked.
pub(crate) fn tag(version: &str, keys: &[[u8; 16]]) -> String {
    let mut h = blake3::Hasher::new();
    for k in keys {
        h.update(k);
    }
    format!("{version} {}", h.finalize().to_hex())
}

pub(crate) fn read(file: &Path, tag: &str, n: usize) -> Option<Vec<bool>> {
    let bytes = std::fs::read(file).ok()?;
    let at = bytes.iter().position(|&b| b == b'\n')?;
    if &bytes[..at] != tag.as_bytes() || bytes.len() - at - 1 != n {
        return None;
    }
    Some(bytes[at + 1..].iter().map(|&b| b == 1).collect())
}

pub(crate) fn write(dir: &Path, file: &Path, tag: &str, held: &[bool]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(tag.as_bytes())?;
    tmp.write_all(b"\n")?;
    tmp.write_all(&held.iter().map(|&h| h as u8).collect::<Vec<u8>>())?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_answers_only_for_its_version_and_keys() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m/c");
        let keys = [[1u8; 16], [2u8; 16], [3u8; 16]];
        let held = vec![true, false, true];
        let t = tag("v1", &keys);
        write(&dir.path().join("m"), &file, &t, &held).unwrap();
        assert_eq!(read(&file, &t, 3), Some(held));
        assert_eq!(read(&file, &tag("v2", &keys), 3), None);
        assert_eq!(read(&file, &tag("v1", &keys[..2]), 2), None);
        std::fs::write(&file, b"garbage").unwrap();
        assert_eq!(read(&file, &t, 3), None);
    }
}
