//! Deterministic randomness for the corpus generator: a SplitMix64 stream, ULIDs, RFC 3339 times.

/// Crockford base32, the ULID alphabet.
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A SplitMix64 pseudo-random stream: the same seed always yields the same sequence.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// An independent stream for the `index`-th item of a collection, so one item's draws never
    /// shift another's.
    pub fn derive(seed: u64, index: u64) -> Self {
        let mut mixer = Self::new(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
        Self::new(mixer.next_u64())
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`; `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64 + 1) as i64
    }

    /// Uniform in `lo..=hi` for sizes and counts.
    pub fn size(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo) as u64 + 1) as usize
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A uniformly chosen item; `items` must not be empty.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// `len` lowercase hex digits.
    pub(crate) fn hex(&mut self, len: usize) -> String {
        (0..len).map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize])).collect()
    }

    /// A 26-character ULID: 48 bits of `unix_ms` then 80 random bits, Crockford base32, so ULIDs
    /// made at later times sort after earlier ones.
    pub(crate) fn ulid(&mut self, unix_ms: u64) -> String {
        let random = (u128::from(self.next_u64()) << 16) ^ u128::from(self.next_u64() >> 48);
        let value = (u128::from(unix_ms & 0xFFFF_FFFF_FFFF) << 80) | (random & ((1 << 80) - 1));
        (0..26).rev().map(|digit| char::from(CROCKFORD[((value >> (5 * digit)) & 31) as usize])).collect()
    }
}

/// `unix_ms` as RFC 3339 UTC, `2026-10-07T09:14:03Z`, with `.mmm` when `with_millis`.
pub(crate) fn rfc3339(unix_ms: u64, with_millis: bool) -> String {
    let secs = unix_ms / 1000;
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let clock = secs % 86_400;
    let (hour, minute, second) = (clock / 3600, clock % 3600 / 60, clock % 60);
    let base = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if with_millis { format!("{base}.{:03}Z", unix_ms % 1000) } else { format!("{base}Z") }
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_instants() {
        assert_eq!(rfc3339(1_791_364_443_000, false), "2026-10-07T09:14:03Z");
        assert_eq!(rfc3339(951_782_400_007, true), "2000-02-29T00:00:00.007Z");
        assert_eq!(rfc3339(0, false), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn ulids_are_crockford_and_sort_by_time() {
        let mut rng = Rng::new(7);
        let earlier = rng.ulid(1_791_364_443_000);
        let later = rng.ulid(1_791_364_443_001);
        assert_eq!(earlier.len(), 26);
        assert!(earlier.bytes().all(|b| CROCKFORD.contains(&b)));
        assert!(earlier < later);
        assert_eq!(&earlier[..10], "01M4AT8AVR", "48-bit time, big-endian");
    }

    #[test]
    fn same_seed_same_stream() {
        let draws = |seed| {
            let mut rng = Rng::derive(seed, 3);
            (0..8).map(|_| rng.below(1000)).collect::<Vec<_>>()
        };
        assert_eq!(draws(42), draws(42));
        assert_ne!(draws(42), draws(43));
    }
}
