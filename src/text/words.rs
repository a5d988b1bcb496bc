//! Lists in words: `a`, `a and b`, `a, b and c`.

/// The items joined as a sentence lists them: commas between, `and` before the last.
pub(crate) fn listed<S: AsRef<str>>(items: &[S]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.as_ref().to_string(),
        Some((last, rest)) => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", rest.join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_read_as_a_sentence_writes_them() {
        assert_eq!(super::listed::<&str>(&[]), "");
        assert_eq!(super::listed(&["a"]), "a");
        assert_eq!(super::listed(&["a", "b"]), "a and b");
        assert_eq!(super::listed(&["a", "b", "c"]), "a, b and c");
    }
}
