//! Unsigned LEB128 numbers: seven bits a byte, the high bit saying another byte follows. Small
//! numbers (most counts, indexes and sizes) take one or two bytes.

/// Appends `n`.
pub(crate) fn put(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Takes a number from the front of `input`; `None` (input unchanged) when it is cut off or
/// longer than 64 bits.
pub(crate) fn take(input: &mut &[u8]) -> Option<u64> {
    let mut rest = *input;
    let n = read(|| {
        let (&byte, after) = rest.split_first()?;
        rest = after;
        Some(byte)
    })?;
    *input = rest;
    Some(n)
}

/// A number from the bytes `next` gives, one at a time; `None` when they end before it does or
/// it is longer than 64 bits.
pub(crate) fn read(mut next: impl FnMut() -> Option<u8>) -> Option<u64> {
    let mut n = 0u64;
    for i in 0..10 {
        let byte = next()?;
        n |= u64::from(byte & 0x7f).checked_shl(7 * i)?;
        if byte < 0x80 {
            return (i < 9 || byte <= 1).then_some(n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_and_cut_ones_do_not() {
        for n in [0, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let mut bytes = Vec::new();
            put(&mut bytes, n);
            bytes.push(0xaa);
            let mut input = &bytes[..];
            assert_eq!(take(&mut input), Some(n));
            assert_eq!(input, &[0xaa]);
            let mut cut = &bytes[..bytes.len() - 2];
            assert_eq!(take(&mut cut), None);
        }
        // Eleven bytes, or ten whose last holds more than the 64th bit: too long.
        assert_eq!(take(&mut &[0xff; 11][..]), None);
        assert_eq!(take(&mut &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02][..]), None);
    }
}
