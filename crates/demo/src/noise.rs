//! Deterministic noise: every random-looking number of the simulation is a hash of the seed and what it is for
//! (a topic, a minute, a sample index), so the same seed and start time give the same estate however often and
//! at whatever times it is observed.

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A hash of a string (FNV-1a), to key noise by names.
pub fn name_key(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A uniform number in [0, 1) for (seed, a, b).
pub fn unit(seed: u64, a: u64, b: u64) -> f64 {
    let h = mix(mix(seed ^ mix(a)) ^ b);
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal number for (seed, a, b) (Box-Muller over two uniforms).
pub fn normal(seed: u64, a: u64, b: u64) -> f64 {
    let u1 = unit(seed, a, b.wrapping_mul(2)).max(1e-12);
    let u2 = unit(seed, a, b.wrapping_mul(2).wrapping_add(1));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Noise in [-1, 1] that moves smoothly: uniform knots every `knot_ms`, interpolated with a smoothstep.
pub fn smooth(seed: u64, key: u64, t_ms: u64, knot_ms: u64) -> f64 {
    let k = t_ms / knot_ms;
    let f = (t_ms % knot_ms) as f64 / knot_ms as f64;
    let f = f * f * (3.0 - 2.0 * f);
    let a = unit(seed, key, k) * 2.0 - 1.0;
    let b = unit(seed, key, k + 1) * 2.0 - 1.0;
    a + (b - a) * f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_a_function_of_its_inputs_and_in_range() {
        assert_eq!(unit(7, 1, 2), unit(7, 1, 2));
        assert_ne!(unit(7, 1, 2), unit(8, 1, 2));
        for i in 0..1000 {
            let u = unit(1, 2, i);
            assert!((0.0..1.0).contains(&u));
            let s = smooth(1, 2, i * 7_919, 60_000);
            assert!((-1.0..=1.0).contains(&s), "{s}");
        }
        let mean: f64 = (0..10_000).map(|i| normal(3, 4, i)).sum::<f64>() / 10_000.0;
        assert!(mean.abs() < 0.05, "{mean}");
    }
}
