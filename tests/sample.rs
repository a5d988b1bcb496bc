//! The sample corpus kept in the repository is exactly what the generator writes.

use std::path::Path;

fn files_under(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.push((rel, std::fs::read(entry.path()).unwrap()));
        }
    }
    out
}

#[test]
fn committed_sample_matches_the_generator() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sample");
    let fresh = tempfile::tempdir().unwrap();
    let out = crate::util::txq(&["generate", "--out", fresh.path().to_str().unwrap()], fresh.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (a, b) = (files_under(&committed), files_under(fresh.path()));
    let names = |files: &[(String, Vec<u8>)]| files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "regenerate with: cargo run -- generate --out examples/sample");
    for ((name, bytes_a), (_, bytes_b)) in a.iter().zip(&b) {
        assert!(
            bytes_a == bytes_b,
            "{name} differs: regenerate with: cargo run -- generate --out examples/sample"
        );
    }
}
