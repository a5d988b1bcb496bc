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
    txq::generate::write_rupu_corpus(fresh.path(), &txq::generate::RupuOptions::default()).unwrap();
    let (a, b) = (files_under(&committed), files_under(fresh.path()));
    assert_eq!(a.len(), b.len(), "regenerate with: cargo run -- generate --out examples/sample");
    for ((name_a, bytes_a), (name_b, bytes_b)) in a.iter().zip(&b) {
        assert_eq!(name_a, name_b);
        assert!(
            bytes_a == bytes_b,
            "{name_a} differs: regenerate with: cargo run -- generate --out examples/sample"
        );
    }
}
