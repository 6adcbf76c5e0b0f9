//! The CPU side of the smoke test, pure and GPU-free: test data, the reference GEMM and
//! convolution (in f64, on sampled entries), tolerances, and the arithmetic of the report
//! (GFLOP/s, GB/s, version numbers as the libraries encode them).
//!
//! The test matrices hold values in [-1, 1) that are exactly representable in FP16 (11
//! significant bits). So FP32, TF32 and FP16 GEMMs all see the *same* inputs with no input
//! rounding, every product is exact in FP32, and the only error left is the rounding of
//! the accumulation (plus, for FP16, of the output). That makes one tolerance per
//! precision meaningful for every size.

use serde::Serialize;

use crate::version::Version;

/// A small, fast, deterministic generator (SplitMix64): the same seed gives the same
/// matrices on every machine, so a failure can be reproduced.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_f64() * n as f64) as usize % n.max(1)
    }
}

/// `x` as IEEE half-precision bits, rounded to nearest, ties to even; overflow gives
/// infinity, NaN stays NaN.
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x007f_ffff;
    if exp == 0xff {
        // Inf or NaN (keep a quiet NaN payload bit).
        return sign | 0x7c00 | if man != 0 { 0x0200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // Subnormal half (or zero): shift the full significand into place.
        if e < -10 {
            return sign;
        }
        let m = man | 0x0080_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let halfway = 1 << (shift - 1);
        let round = rem > halfway || (rem == halfway && half & 1 == 1);
        return sign | (half + u32::from(round)) as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let round = rem > 0x1000 || (rem == 0x1000 && half & 1 == 1);
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    sign | (half + u32::from(round)) as u16
}

/// Half-precision bits as f32 (exact: every half is an f32).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x03ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise.
            let shift = m.leading_zeros() - 21;
            let m = (m << shift) & 0x03ff;
            sign | ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// `len` values in [-1, 1), each exactly representable in FP16 (and so in TF32 and FP32).
pub fn test_matrix(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..len)
        .map(|_| {
            let x = (rng.next_f64() * 2.0 - 1.0) as f32;
            f16_bits_to_f32(f32_to_f16_bits(x))
        })
        .collect()
}

/// The GEMM flavours the smoke test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// SGEMM: FP32 in, FP32 out, FP32 arithmetic (what `torch.mm` does on FP32 tensors).
    Fp32,
    /// FP32 in and out, TF32 tensor cores (Ampere and newer).
    Tf32,
    /// FP16 in and out, FP32 accumulation, tensor cores (Volta and newer).
    Fp16,
}

impl Precision {
    pub const ALL: [Precision; 3] = [Precision::Fp32, Precision::Tf32, Precision::Fp16];

    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Fp16 => "fp16",
        }
    }

    /// The lowest compute capability (major, minor) that runs it on tensor cores / at all.
    pub fn min_cc(self) -> (u32, u32) {
        match self {
            Precision::Fp32 => (0, 0),
            Precision::Tf32 => (8, 0),
            Precision::Fp16 => (7, 0),
        }
    }

    /// The largest acceptable normalised error (see [`Accuracy`]).
    ///
    /// FP32 and TF32: inputs are exact and products are exact in FP32, so the error is the
    /// FP32 rounding of the sum. Its worst case for k ≤ 8192 is k·2⁻²⁴ ≈ 4.9e-4 of Σ|a·b|;
    /// real blocked GEMMs stay near 1e-6, and a wrong or corrupted result is ≥ 1e-2.
    /// FP16 adds the rounding of the FP16 output (2⁻¹¹ ≈ 4.9e-4 of |c| ≤ Σ|a·b|) and
    /// cuBLAS's reduced-precision split-K reduction, hence 5e-3.
    pub fn tolerance(self) -> f64 {
        match self {
            Precision::Fp32 | Precision::Tf32 => 1e-4,
            Precision::Fp16 => 5e-3,
        }
    }

    /// Bytes per matrix element on the GPU.
    pub fn element_bytes(self) -> usize {
        match self {
            Precision::Fp32 | Precision::Tf32 => 4,
            Precision::Fp16 => 2,
        }
    }
}

/// Entries to check: the four corners, then pseudo-random positions.
pub fn sample_positions(rows: usize, cols: usize, count: usize, seed: u64) -> Vec<(usize, usize)> {
    if rows == 0 || cols == 0 {
        return Vec::new();
    }
    let mut out = vec![(0, 0), (rows - 1, cols - 1), (0, cols - 1), (rows - 1, 0)];
    out.dedup();
    let mut rng = SplitMix64::new(seed);
    while out.len() < count.max(out.len()) {
        out.push((rng.below(rows), rng.below(cols)));
    }
    out.truncate(count.max(1));
    out
}

/// One entry of C = A·B in f64, with Σ|a·b| (the scale its rounding error is measured
/// against). Column-major, as cuBLAS stores matrices: A is m×k (`a[i + l*m]`), B is k×n
/// (`b[l + j*k]`).
pub fn gemm_entry(a: &[f32], b: &[f32], m: usize, k: usize, i: usize, j: usize) -> (f64, f64) {
    let mut sum = 0.0f64;
    let mut abs = 0.0f64;
    for l in 0..k {
        let p = f64::from(a[i + l * m]) * f64::from(b[l + j * k]);
        sum += p;
        abs += p.abs();
    }
    (sum, abs)
}

/// How a GPU result compares with the CPU reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accuracy {
    /// Entries compared.
    pub samples: usize,
    /// The largest |gpu − reference| / Σ|a·b| over the samples (0 for an exact match).
    pub max_error: f64,
    pub tolerance: f64,
    /// Every entry of the result (not only the samples) is finite.
    pub all_finite: bool,
    /// The worst entry: `[row, col]`, the GPU's value and the reference.
    pub worst: Option<Worst>,
    pub passed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Worst {
    pub row: usize,
    pub col: usize,
    pub gpu: f64,
    pub reference: f64,
}

/// Compares sampled entries: `got(i, j)` is the GPU's value, `want(i, j)` the reference
/// and its Σ|a·b| scale. A non-finite value anywhere fails.
pub fn compare(
    positions: &[(usize, usize)],
    got: impl Fn(usize, usize) -> f64,
    want: impl Fn(usize, usize) -> (f64, f64),
    all_finite: bool,
    tolerance: f64,
) -> Accuracy {
    let mut max_error = 0.0f64;
    let mut worst = None;
    let mut finite = all_finite;
    for &(i, j) in positions {
        let g = got(i, j);
        let (r, scale) = want(i, j);
        let err = if g.is_finite() {
            (g - r).abs() / scale.max(f64::MIN_POSITIVE)
        } else {
            finite = false;
            f64::INFINITY
        };
        if err > max_error || worst.is_none() {
            max_error = max_error.max(err);
            worst = Some(Worst {
                row: i,
                col: j,
                gpu: g,
                reference: r,
            });
        }
    }
    Accuracy {
        samples: positions.len(),
        max_error,
        tolerance,
        all_finite: finite,
        worst,
        passed: finite && max_error <= tolerance && !positions.is_empty(),
    }
}

/// What a whole m×n product would take on the CPU, from the time `samples` reference
/// entries took: every entry is the same dot product, so the time scales with their count.
/// It is this one-core reference loop, not a tuned CPU library, that the GPU is set
/// against (None when nothing was sampled or timed).
pub fn cpu_gemm_ms(sampled_ms: f64, samples: usize, m: usize, n: usize) -> Option<f64> {
    (samples > 0 && sampled_ms > 0.0).then(|| sampled_ms * (m * n) as f64 / samples as f64)
}

/// 2·m·n·k floating-point operations in `ms` milliseconds, as GFLOP/s.
pub fn gflops(m: usize, n: usize, k: usize, ms: f64) -> f64 {
    if ms <= 0.0 {
        return 0.0;
    }
    2.0 * m as f64 * n as f64 * k as f64 / (ms * 1e-3) / 1e9
}

/// Bytes moved in `seconds`, as GB/s (10⁹ bytes, as PCIe speeds are quoted).
pub fn gb_per_s(bytes: usize, seconds: f64) -> f64 {
    if seconds <= 0.0 {
        return 0.0;
    }
    bytes as f64 / seconds / 1e9
}

/// How many timed iterations make a measurement of about `target_ms`, given one took
/// `one_ms`: at least 3, at most 200.
pub fn iterations_for(one_ms: f64, target_ms: f64) -> u32 {
    if one_ms.is_nan() || one_ms <= 0.0 {
        return 3;
    }
    (target_ms / one_ms).ceil().clamp(3.0, 200.0) as u32
}

/// The largest square size from `sizes` whose three `bytes`-per-element matrices fit in
/// `free` bytes with a margin (cuBLAS wants workspace; the display needs some too).
pub fn sizes_that_fit(sizes: &[usize], element_bytes: usize, free: u64) -> Vec<usize> {
    let budget = free as f64 * 0.6;
    sizes
        .iter()
        .copied()
        .filter(|n| 3.0 * (*n as f64).powi(2) * element_bytes as f64 <= budget)
        .collect()
}

/// A 2-D convolution (cross-correlation, as deep-learning frameworks and cuDNN's
/// `CUDNN_CROSS_CORRELATION` define it), NCHW input, KCRS filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConvShape {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub k: usize,
    pub r: usize,
    pub s: usize,
    pub pad: usize,
    pub stride: usize,
}

impl ConvShape {
    /// The small convolution the smoke test runs: a batch of 2 RGB 16×16 images, 4 3×3
    /// filters, padding 1.
    pub const SMOKE: ConvShape = ConvShape {
        n: 2,
        c: 3,
        h: 16,
        w: 16,
        k: 4,
        r: 3,
        s: 3,
        pad: 1,
        stride: 1,
    };

    pub fn out_h(&self) -> usize {
        (self.h + 2 * self.pad - self.r) / self.stride + 1
    }

    pub fn out_w(&self) -> usize {
        (self.w + 2 * self.pad - self.s) / self.stride + 1
    }

    pub fn input_len(&self) -> usize {
        self.n * self.c * self.h * self.w
    }

    pub fn filter_len(&self) -> usize {
        self.k * self.c * self.r * self.s
    }

    pub fn output_len(&self) -> usize {
        self.n * self.k * self.out_h() * self.out_w()
    }
}

/// The tolerance of the convolution check: FP32 data (exact in TF32, which cuDNN may use
/// on Ampere and newer), sums of 27 products.
pub const CONV_TOLERANCE: f64 = 1e-4;

/// The convolution on the CPU, in f64: each output with its Σ|x·w| scale, NKPQ order.
pub fn conv2d_reference(x: &[f32], f: &[f32], s: &ConvShape) -> Vec<(f64, f64)> {
    let (p, q) = (s.out_h(), s.out_w());
    let mut out = Vec::with_capacity(s.output_len());
    for n in 0..s.n {
        for k in 0..s.k {
            for oy in 0..p {
                for ox in 0..q {
                    let mut sum = 0.0f64;
                    let mut abs = 0.0f64;
                    for c in 0..s.c {
                        for r in 0..s.r {
                            for t in 0..s.s {
                                let iy = (oy * s.stride + r) as isize - s.pad as isize;
                                let ix = (ox * s.stride + t) as isize - s.pad as isize;
                                if iy < 0 || ix < 0 || iy >= s.h as isize || ix >= s.w as isize {
                                    continue;
                                }
                                let xi = ((n * s.c + c) * s.h + iy as usize) * s.w + ix as usize;
                                let fi = ((k * s.c + c) * s.r + r) * s.s + t;
                                let prod = f64::from(x[xi]) * f64::from(f[fi]);
                                sum += prod;
                                abs += prod.abs();
                            }
                        }
                    }
                    out.push((sum, abs));
                }
            }
        }
    }
    out
}

/// `cudnnGetVersion()` (and `torch.backends.cudnn.version()`) as a version: 9.x encodes
/// MAJOR·10000 + MINOR·100 + PATCH (90300 → 9.3.0), 8.x and older MAJOR·1000 + MINOR·100 +
/// PATCH (8907 → 8.9.7).
pub fn decode_cudnn_version(v: u64) -> Version {
    let v = v as u32;
    if v >= 90000 {
        Version::new(&[v / 10000, v % 10000 / 100, v % 100])
    } else {
        Version::new(&[v / 1000, v % 1000 / 100, v % 100])
    }
}

/// A CUDA version as the driver and runtime encode it (12040 → 12.4).
pub fn decode_cuda_version(v: i32) -> Version {
    let v = v.max(0) as u32;
    Version::new(&[v / 1000, v % 1000 / 10])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_time_scales_from_the_sampled_entries_to_the_whole_product() {
        // 256 of 1024×1024 entries took 2 ms: all of them take 4096 times that.
        assert_eq!(cpu_gemm_ms(2.0, 256, 1024, 1024), Some(8192.0));
        assert_eq!(cpu_gemm_ms(2.0, 256, 2048, 1024), Some(16384.0));
        assert_eq!(cpu_gemm_ms(0.0, 256, 1024, 1024), None, "not timed");
        assert_eq!(cpu_gemm_ms(2.0, 0, 1024, 1024), None, "nothing sampled");
    }

    #[test]
    fn half_conversion_round_trips_and_rounds_to_even() {
        // Known encodings.
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(65520.0), 0x7c00); // rounds up to infinity
        assert_eq!(f32_to_f16_bits(f32::INFINITY), 0x7c00);
        assert!(f16_bits_to_f32(f32_to_f16_bits(f32::NAN)).is_nan());
        assert_eq!(f32_to_f16_bits(0.0), 0);
        assert_eq!(f32_to_f16_bits(-0.0), 0x8000);
        // The smallest subnormal half, 2^-24, and half of it (a tie, rounds to even: 0).
        assert_eq!(f32_to_f16_bits(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_f16_bits(2f32.powi(-25)), 0x0000);
        assert_eq!(f32_to_f16_bits(3.0 * 2f32.powi(-25)), 0x0002);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        // Every half converts to f32 and back unchanged.
        for h in 0u16..=0xffff {
            let f = f16_bits_to_f32(h);
            if f.is_nan() {
                continue;
            }
            assert_eq!(f32_to_f16_bits(f), h, "{h:#06x} -> {f}");
        }
    }

    #[test]
    fn test_matrices_are_deterministic_and_half_exact() {
        let a = test_matrix(1000, 7);
        assert_eq!(a, test_matrix(1000, 7));
        assert_ne!(a, test_matrix(1000, 8));
        for x in &a {
            assert!((-1.0..1.0).contains(x));
            assert_eq!(f16_bits_to_f32(f32_to_f16_bits(*x)), *x);
        }
        // Not degenerate: many distinct values.
        let mut d: Vec<u32> = a.iter().map(|x| x.to_bits()).collect();
        d.sort();
        d.dedup();
        assert!(d.len() > 900);
    }

    /// A straightforward FP32 GEMM (what a correct GPU must agree with), column-major.
    fn cpu_sgemm(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        let mut c = vec![0f32; m * n];
        for j in 0..n {
            for l in 0..k {
                let blj = b[l + j * k];
                for i in 0..m {
                    c[i + j * m] += a[i + l * m] * blj;
                }
            }
        }
        c
    }

    #[test]
    fn an_fp32_gemm_passes_and_a_corrupted_one_fails() {
        let (m, n, k) = (64, 48, 512);
        let a = test_matrix(m * k, 1);
        let b = test_matrix(k * n, 2);
        let c = cpu_sgemm(&a, &b, m, n, k);
        let pos = sample_positions(m, n, 100, 3);
        let want = |i: usize, j: usize| gemm_entry(&a, &b, m, k, i, j);
        let acc = compare(
            &pos,
            |i, j| f64::from(c[i + j * m]),
            want,
            true,
            Precision::Fp32.tolerance(),
        );
        assert!(acc.passed, "{acc:?}");
        assert!(acc.max_error < 1e-6, "{acc:?}");
        assert_eq!(acc.samples, 100);

        // One wrong entry among the samples fails, and is the one reported.
        let (bi, bj) = pos[10];
        let mut bad = c.clone();
        bad[bi + bj * m] += 0.5;
        let acc = compare(
            &pos,
            |i, j| f64::from(bad[i + j * m]),
            want,
            true,
            Precision::Fp32.tolerance(),
        );
        assert!(!acc.passed);
        let w = acc.worst.unwrap();
        assert_eq!((w.row, w.col), (bi, bj));

        // A NaN fails, whether sampled or seen by the full scan.
        let acc = compare(
            &pos,
            |_, _| f64::NAN,
            want,
            true,
            Precision::Fp32.tolerance(),
        );
        assert!(!acc.passed && !acc.all_finite);
        let acc = compare(
            &pos,
            |i, j| f64::from(c[i + j * m]),
            want,
            false,
            Precision::Fp32.tolerance(),
        );
        assert!(!acc.passed);
    }

    #[test]
    fn fp16_output_rounding_is_within_its_tolerance() {
        let (m, n, k) = (32, 32, 2048);
        let a = test_matrix(m * k, 4);
        let b = test_matrix(k * n, 5);
        let c: Vec<f32> = cpu_sgemm(&a, &b, m, n, k)
            .into_iter()
            .map(|x| f16_bits_to_f32(f32_to_f16_bits(x)))
            .collect();
        let pos = sample_positions(m, n, 200, 6);
        let acc = compare(
            &pos,
            |i, j| f64::from(c[i + j * m]),
            |i, j| gemm_entry(&a, &b, m, k, i, j),
            true,
            Precision::Fp16.tolerance(),
        );
        assert!(acc.passed, "{acc:?}");
        // But the FP16 result would not pass as FP32: the tolerances mean something.
        assert!(acc.max_error > Precision::Fp32.tolerance() / 100.0);
    }

    #[test]
    fn samples_include_corners_and_stay_in_range() {
        let p = sample_positions(10, 7, 50, 1);
        assert_eq!(p.len(), 50);
        assert_eq!(&p[..4], &[(0, 0), (9, 6), (0, 6), (9, 0)]);
        assert!(p.iter().all(|&(i, j)| i < 10 && j < 7));
        assert_eq!(sample_positions(1, 1, 5, 1)[0], (0, 0));
        assert!(sample_positions(0, 5, 5, 1).is_empty());
    }

    #[test]
    fn throughput_arithmetic() {
        // 8192³·2 = 1.0995e12 flop in 100 ms = 10995 GFLOP/s.
        let g = gflops(8192, 8192, 8192, 100.0);
        assert!((g - 10995.1).abs() < 0.1, "{g}");
        assert_eq!(gflops(1, 1, 1, 0.0), 0.0);
        assert!((gb_per_s(128 << 20, 0.01) - 13.421_772_8).abs() < 1e-6);
        assert_eq!(iterations_for(100.0, 200.0), 3);
        assert_eq!(iterations_for(1.0, 200.0), 200);
        assert_eq!(iterations_for(10.0, 200.0), 20);
        assert_eq!(iterations_for(0.0, 200.0), 3);
        // 3 × 8192² × 4 B = 768 MiB needs about 1.3 GB free.
        let sizes = [1024, 2048, 4096, 8192];
        assert_eq!(sizes_that_fit(&sizes, 4, 2 << 30), sizes);
        assert_eq!(sizes_that_fit(&sizes, 4, 1 << 30), [1024, 2048, 4096]);
        assert_eq!(sizes_that_fit(&sizes, 2, 1 << 30), sizes);
        assert!(sizes_that_fit(&sizes, 4, 1 << 20).is_empty());
    }

    #[test]
    fn convolution_reference_by_hand() {
        // One 3×3 image of ones, one 3×3 filter of ones, padding 1: corners see 4 pixels,
        // edges 6, the centre 9.
        let s = ConvShape {
            n: 1,
            c: 1,
            h: 3,
            w: 3,
            k: 1,
            r: 3,
            s: 3,
            pad: 1,
            stride: 1,
        };
        let out = conv2d_reference(&[1.0; 9], &[1.0; 9], &s);
        let v: Vec<f64> = out.iter().map(|o| o.0).collect();
        assert_eq!(v, [4.0, 6.0, 4.0, 6.0, 9.0, 6.0, 4.0, 6.0, 4.0]);
        // Cross-correlation, not convolution: the filter is not flipped.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let mut f = [0.0f32; 9];
        f[0] = 1.0; // top-left tap reads the pixel up and to the left
        let s0 = ConvShape { pad: 1, ..s };
        let out = conv2d_reference(&x, &f, &s0);
        assert_eq!(out[4].0, 1.0);
        assert_eq!(out[8].0, 5.0);
        assert_eq!(ConvShape::SMOKE.output_len(), 2 * 4 * 16 * 16);
        // Stride 2 halves the output.
        let s2 = ConvShape {
            stride: 2,
            ..ConvShape::SMOKE
        };
        assert_eq!((s2.out_h(), s2.out_w()), (8, 8));
    }

    #[test]
    fn library_version_numbers() {
        assert_eq!(decode_cudnn_version(90300).to_string(), "9.3.0");
        assert_eq!(decode_cudnn_version(91002).to_string(), "9.10.2");
        assert_eq!(decode_cudnn_version(8907).to_string(), "8.9.7");
        assert_eq!(decode_cudnn_version(7605).to_string(), "7.6.5");
        assert_eq!(decode_cuda_version(12040).to_string(), "12.4");
        assert_eq!(decode_cuda_version(13010).to_string(), "13.1");
        assert_eq!(decode_cuda_version(11080).to_string(), "11.8");
    }
}
