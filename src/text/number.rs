//! Numbers as people read them: digits grouped by thousands (`1,234,567`), the one grouping the
//! export's progress, the spend reports' tables and the report page share.

/// `n` with `separator` between each group of three digits: `1,234,567`.
pub(crate) fn grouped(n: u64, separator: char) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(separator);
        }
        out.push(digit);
    }
    out
}

/// `n`, signed, with `separator` between each group of three digits: `-1,000`.
pub(crate) fn grouped_signed(n: i64, separator: char) -> String {
    let digits = grouped(n.unsigned_abs(), separator);
    if n < 0 { format!("-{digits}") } else { digits }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_grouped_by_three_from_the_right() {
        assert_eq!(grouped(0, ','), "0");
        assert_eq!(grouped(999, ','), "999");
        assert_eq!(grouped(1_234_567, ','), "1,234,567");
        assert_eq!(grouped_signed(-1000, ','), "-1,000");
        assert_eq!(grouped_signed(i64::MIN, ','), "-9,223,372,036,854,775,808");
    }
}
