//! Sizes as people write and read them: `2G`, `512MiB`, `1.5GB` parsed (the flags that take a
//! size), and a number of bytes shown as `64 MiB` (every size txq shows).

/// Parses a size: a number (decimals allowed) and an optional unit. `K`, `M`, `G`, `T` and
/// `KiB`, `MiB`, `GiB`, `TiB` are powers of 1024; `KB`, `MB`, `GB`, `TB` powers of 1000 (as GNU
/// `sort -S` reads them); no unit or `B` is bytes. Case and a space before the unit do not matter.
pub(crate) fn parse(text: &str) -> Result<u64, String> {
    let s = text.trim();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("not a size: {text:?} (expected a number and a unit, e.g. 2G or 512MiB)"))?;
    let unit = unit.trim().to_ascii_uppercase();
    let scale: f64 = match unit.as_str() {
        "" | "B" => 1.0,
        "K" | "KIB" => 1024.0,
        "M" | "MIB" => 1024f64.powi(2),
        "G" | "GIB" => 1024f64.powi(3),
        "T" | "TIB" => 1024f64.powi(4),
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        _ => {
            return Err(format!(
                "unknown unit in {text:?}: use B, K, M, G, T (powers of 1024) or KB, MB, GB, TB"
            ));
        }
    };
    let bytes = number * scale;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("{text:?} is too large"));
    }
    Ok(bytes.round() as u64)
}

/// A size as people read it: `64 MiB`, `1.5 GiB`, `300 bytes` (powers of 1024, one decimal
/// where it is not `.0`). Every size txq shows is written so.
pub(crate) fn describe(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64;
    let mut unit = "";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    let text = format!("{value:.1}");
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_both_kinds_of_units() {
        assert_eq!(parse("2G"), Ok(2 << 30));
        assert_eq!(parse("512M"), Ok(512 << 20));
        assert_eq!(parse("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse("64 mib"), Ok(64 << 20));
        assert_eq!(parse("1000000"), Ok(1_000_000));
        assert_eq!(parse("2GB"), Ok(2_000_000_000));
        assert_eq!(parse("10B"), Ok(10));
        assert!(parse("lots").is_err());
        assert!(parse("2X").is_err());
        assert!(parse("").is_err());
        assert!(parse("99999999999T").is_err());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(describe(64 << 20), "64 MiB");
        assert_eq!(describe(3 << 29), "1.5 GiB");
        assert_eq!(describe(300), "300 bytes");
        assert_eq!(describe(1024), "1 KiB");
    }
}
