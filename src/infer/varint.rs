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
    if let Some((&byte, rest)) = input.split_first()
        && byte < 0x80
    {
        *input = rest;
        return Some(u64::from(byte));
    }
    let mut n = 0u64;
    for (i, &byte) in input.iter().enumerate().take(10) {
        n |= u64::from(byte & 0x7f).checked_shl(7 * i as u32)?;
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return None;
            }
            *input = &input[i + 1..];
            return Some(n);
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
