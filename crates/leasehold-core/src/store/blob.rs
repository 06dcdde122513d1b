//! Git's name for a file's content: the blob id, the SHA-1 of `blob <length>\0<bytes>`. It is
//! the `sha` the contents API answers for a file and expects as the precondition of the next
//! write (docs/github-semantics.md#blob-ids), so a state written inside the state branch's first
//! commit (`engine/bootstrap.rs`) has a version to carry without a read to learn it.
//!
//! SHA-1 as FIPS 180-4 defines it, written for this one use: the input is a state document of
//! at most [`MAX_STATE_BYTES`](super::MAX_STATE_BYTES), hashed once per first use. Nothing here
//! is relied on for security: a wrong id costs one refused compare-and-swap and a read.

/// The blob id git (and so GitHub) gives a file holding exactly `text`, as 40 lowercase hex
/// digits.
pub fn blob_sha(text: &str) -> String {
    let mut message = format!("blob {}\0", text.len()).into_bytes();
    message.extend_from_slice(text.as_bytes());
    hex(sha1(message))
}

/// A SHA-1 digest as 40 lowercase hex digits.
fn hex(h: [u32; 5]) -> String {
    h.iter().map(|w| format!("{w:08x}")).collect()
}

fn sha1(mut message: Vec<u8>) -> [u32; 5] {
    let bits = (message.len() as u64).wrapping_mul(8);
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bits.to_be_bytes());
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    let mut w = [0u32; 80];
    for block in message.chunks_exact(64) {
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
                20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_matches_the_standard_vectors() {
        // FIPS 180-4's examples, the empty message and one that pads into a second block.
        assert_eq!(
            hex(sha1(b"abc".to_vec())),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(sha1(Vec::new())),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        assert_eq!(
            hex(sha1(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".to_vec()
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(
            hex(sha1(vec![b'a'; 1_000_000])),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    #[test]
    fn blob_ids_are_gits() {
        // `git hash-object` of an empty file, of "hello\n", and of a non-ASCII text (its
        // length is in bytes, not characters).
        assert_eq!(blob_sha(""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            blob_sha("hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        assert_eq!(blob_sha("é\n"), "c6003325155f475bd7c87731607525dce73be9cf");
    }
}
