//! Philox4x32-10 (Salmon, Moraes, Dror & Shaw, SC'11; the Random123
//! generator cuRAND, JAX and CuPy build on): a counter-based generator, so
//! element `i` of a random array is a pure function of `(i, seed)`,
//! computed where it is used, the same on every backend and for any
//! thread count. The CUDA prelude's `lf_philox` is this function in C.

/// Multipliers and key increments of Philox4x32.
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// The ten rounds of Philox4x32 on `counter` under `key`.
#[inline]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let [mut c0, mut c1, mut c2, mut c3] = counter;
    let [mut k0, mut k1] = key;
    for round in 0..10 {
        if round > 0 {
            k0 = k0.wrapping_add(W0);
            k1 = k1.wrapping_add(W1);
        }
        let p0 = u64::from(M0) * u64::from(c0);
        let p1 = u64::from(M1) * u64::from(c2);
        (c0, c1, c2, c3) = (
            (p1 >> 32) as u32 ^ c1 ^ k0,
            p1 as u32,
            (p0 >> 32) as u32 ^ c3 ^ k1,
            p0 as u32,
        );
    }
    [c0, c1, c2, c3]
}

/// The generator as the `philox` operation computes it: counter words
/// `(low, high, 0, 0)` of `counter`, key words `(low, high)` of `key`, and
/// the first two output words as one u64 (word 0 low).
#[inline]
pub fn bits(counter: u64, key: u64) -> u64 {
    let [r0, r1, _, _] = philox4x32_10(
        [counter as u32, (counter >> 32) as u32, 0, 0],
        [key as u32, (key >> 32) as u32],
    );
    u64::from(r0) | (u64::from(r1) << 32)
}

/// Word `counter % 4` of the block at `counter / 4` (words as [`bits`]'s),
/// as the `philox_word` operation computes it: four consecutive counters
/// share one block, so a run of them costs a quarter of [`bits`]'s.
#[inline]
pub fn word(counter: u64, key: u64) -> u64 {
    let block = counter >> 2;
    let words = philox4x32_10(
        [block as u32, (block >> 32) as u32, 0, 0],
        [key as u32, (key >> 32) as u32],
    );
    u64::from(words[(counter & 3) as usize])
}

/// Words `2 * (counter % 2)` (low) and `2 * (counter % 2) + 1` (high) of
/// the block at `counter / 2` as one u64, as the `philox_pair` operation
/// computes it: two consecutive counters share one block (the even one
/// takes [`bits`] of the block's counter).
#[inline]
pub fn pair(counter: u64, key: u64) -> u64 {
    let block = counter >> 1;
    let [w0, w1, w2, w3] = philox4x32_10(
        [block as u32, (block >> 32) as u32, 0, 0],
        [key as u32, (key >> 32) as u32],
    );
    match counter & 1 {
        0 => u64::from(w0) | (u64::from(w1) << 32),
        _ => u64::from(w2) | (u64::from(w3) << 32),
    }
}

/// The four words of the blocks at the `L` counters `c0` under one key,
/// each round over all of them (so that a compiler vectorises it). Each
/// 32-bit word lives in the low half of a 64-bit lane, which is what a
/// vector 32×32→64-bit multiply reads, so no round packs or unpacks words;
/// the high halves hold garbage that every caller masks or shifts out
/// (masking here, by arrays' `map`, was a call that copied the arrays: 6 %
/// of Monte Carlo π).
#[inline(always)]
fn rounds_lanes<const L: usize>(mut c0: [u64; L], key: u64) -> [[u64; L]; 4] {
    const LOW: u64 = 0xFFFF_FFFF;
    let mut c1 = c0.map(|c| c >> 32);
    let (mut c2, mut c3) = ([0u64; L], [0u64; L]);
    let (mut k0, mut k1) = (key as u32, (key >> 32) as u32);
    for round in 0..10 {
        if round > 0 {
            k0 = k0.wrapping_add(W0);
            k1 = k1.wrapping_add(W1);
        }
        for lane in 0..L {
            let p0 = u64::from(M0) * (c0[lane] & LOW);
            let p1 = u64::from(M1) * (c2[lane] & LOW);
            c0[lane] = (p1 >> 32) ^ c1[lane] ^ u64::from(k0);
            c1[lane] = p1;
            c2[lane] = (p0 >> 32) ^ c3[lane] ^ u64::from(k1);
            c3[lane] = p0;
        }
    }
    [c0, c1, c2, c3]
}

/// [`rounds_lanes`] of the `L` blocks at counters `block, block + 1, ...`.
#[inline(always)]
fn blocks_lanes<const L: usize>(block: u64, key: u64) -> [[u64; L]; 4] {
    rounds_lanes(
        std::array::from_fn(|lane| block.wrapping_add(lane as u64)),
        key,
    )
}

/// [`word`] of the `4 * L` consecutive counters from `first` (a multiple
/// of 4) under one key, into `out`: `L` blocks, their words in counter
/// order.
#[inline(always)]
pub fn words_lanes<const L: usize>(first: u64, key: u64, out: &mut [u64]) {
    const LOW: u64 = 0xFFFF_FFFF;
    let [w0, w1, w2, w3] = blocks_lanes::<L>(first >> 2, key);
    for (lane, words) in out.chunks_exact_mut(4).take(L).enumerate() {
        words.copy_from_slice(&[
            w0[lane] & LOW,
            w1[lane] & LOW,
            w2[lane] & LOW,
            w3[lane] & LOW,
        ]);
    }
}

/// [`pair`] of the `2 * L` consecutive counters from `first` (even) under
/// one key, into `out`: `L` blocks, their pairs in counter order.
#[inline(always)]
pub fn pairs_lanes<const L: usize>(first: u64, key: u64, out: &mut [u64]) {
    const LOW: u64 = 0xFFFF_FFFF;
    let [w0, w1, w2, w3] = blocks_lanes::<L>(first >> 1, key);
    for (lane, pairs) in out.chunks_exact_mut(2).take(L).enumerate() {
        pairs.copy_from_slice(&[
            (w0[lane] & LOW) | (w1[lane] << 32),
            (w2[lane] & LOW) | (w3[lane] << 32),
        ]);
    }
}

/// [`bits`] of `L` counters under one key, the rounds over all of them at
/// once (`rounds_lanes`): the same values as `L` calls of [`bits`].
#[inline(always)]
pub fn bits_lanes<const L: usize>(counters: &[u64; L], key: u64) -> [u64; L] {
    const LOW: u64 = 0xFFFF_FFFF;
    let [w0, w1, _, _] = rounds_lanes(*counters, key);
    std::array::from_fn(|lane| (w0[lane] & LOW) | (w1[lane] << 32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors (`tests/kat_vectors`).
    #[test]
    fn known_answers() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(bits(0, 0), 0xe169_c58d_6627_e8d5);
    }

    #[test]
    fn words_are_the_blocks_words_in_counter_order() {
        let [w0, w1, w2, w3] = philox4x32_10([0; 4], [0; 2]);
        let want = [w0, w1, w2, w3].map(u64::from);
        assert_eq!([0, 1, 2, 3].map(|c| word(c, 0)), want);
        assert_eq!(word(0, 0) | (word(1, 0) << 32), bits(0, 0));
        // Counters 4..8 are the block at counter 1.
        let next = philox4x32_10([1, 0, 0, 0], [0; 2]).map(u64::from);
        assert_eq!([4, 5, 6, 7].map(|c| word(c, 0)), next);
    }

    #[test]
    fn pairs_are_the_blocks_halves_in_counter_order() {
        assert_eq!(pair(0, 9), bits(0, 9));
        assert_eq!(pair(6, 9), bits(3, 9));
        let [_, _, w2, w3] = philox4x32_10([3, 0, 0, 0], [9, 0]).map(u64::from);
        assert_eq!(pair(7, 9), w2 | (w3 << 32));
    }

    #[test]
    fn pair_lanes_compute_what_pair_computes() {
        for (first, key) in [(0, 0), (1 << 40, 7), (u64::MAX - 15, u64::MAX)] {
            let mut out = [0u64; 16];
            pairs_lanes::<8>(first, key, &mut out);
            let want: Vec<u64> = (0..16).map(|i| pair(first + i, key)).collect();
            assert_eq!(out.to_vec(), want, "from {first} under {key}");
        }
    }

    #[test]
    fn word_lanes_compute_what_word_computes() {
        for (first, key) in [(0, 0), (1 << 40, 7), (u64::MAX - 31, u64::MAX)] {
            let mut out = [0u64; 32];
            words_lanes::<8>(first, key, &mut out);
            let want: Vec<u64> = (0..32).map(|i| word(first + i, key)).collect();
            assert_eq!(out.to_vec(), want, "from {first} under {key}");
        }
    }

    #[test]
    fn lanes_compute_what_bits_computes() {
        let counters: [u64; 8] = std::array::from_fn(|i| (i as u64) * 0x1234_5678_9abc_def1);
        for key in [0, 7, u64::MAX] {
            let want = counters.map(|c| bits(c, key));
            assert_eq!(bits_lanes(&counters, key), want);
        }
    }
}
