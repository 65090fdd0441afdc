// lazyfuse device prelude: the value semantics of every element operation
// (the same as lazyfuse_core::semantics), one overload per element type.
// Integers wrap (arithmetic goes through the unsigned type: signed overflow
// is undefined in C++); integer // and % by zero give 0 and round toward
// -inf; float // and % are NumPy's divmod; minimum/maximum propagate NaN
// (fminf/fmaxf do not); float->int casts saturate and map NaN to 0.
// f16 and bf16 compute in f32 and round once per operation.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define LF_D static __device__ __forceinline__

#define LF_COMPARE(T)                                                   \
    LF_D bool lf_equal(T a, T b) { return a == b; }                     \
    LF_D bool lf_not_equal(T a, T b) { return a != b; }                 \
    LF_D bool lf_less(T a, T b) { return a < b; }                       \
    LF_D bool lf_less_equal(T a, T b) { return a <= b; }                \
    LF_D bool lf_greater(T a, T b) { return a > b; }                    \
    LF_D bool lf_greater_equal(T a, T b) { return a >= b; }

#define LF_INT_COMMON(T, U)                                             \
    LF_COMPARE(T)                                                       \
    LF_D T lf_add(T a, T b) { return (T)((U)a + (U)b); }                \
    LF_D T lf_subtract(T a, T b) { return (T)((U)a - (U)b); }           \
    LF_D T lf_multiply(T a, T b) { return (T)((U)a * (U)b); }           \
    LF_D T lf_negative(T a) { return (T)((U)0 - (U)a); }                \
    LF_D T lf_square(T a) { return lf_multiply(a, a); }                 \
    LF_D T lf_minimum(T a, T b) { return a < b ? a : b; }               \
    LF_D T lf_maximum(T a, T b) { return a > b ? a : b; }               \
    LF_D T lf_floor(T a) { return a; }                                  \
    LF_D T lf_ceil(T a) { return a; }                                   \
    LF_D T lf_trunc(T a) { return a; }                                  \
    LF_D T lf_round(T a) { return a; }                                  \
    LF_D bool lf_isnan(T) { return false; }                             \
    LF_D bool lf_isinf(T) { return false; }                             \
    LF_D bool lf_isfinite(T) { return true; }                           \
    LF_D T lf_reciprocal(T a) { return a == 0 ? (T)0 : (T)(1 / a); }    \
    LF_D T lf_invert(T a) { return (T)~a; }                             \
    LF_D T lf_fma(T a, T b, T c) { return lf_add(lf_multiply(a, b), c); } \
    LF_D T lf_popc(T a) { return (T)__popcll((unsigned long long)(U)a); } \
    LF_D T lf_clz(T a) {                                                \
        return (T)(__clzll((long long)(unsigned long long)(U)a) - (64 - 8 * (int)sizeof(T))); \
    }                                                                   \
    LF_D T lf_ffs(T a) { return (T)__ffsll((long long)(unsigned long long)(U)a); } \
    LF_D T lf_brev(T a) {                                               \
        return (T)(__brevll((unsigned long long)(U)a) >> (64 - 8 * sizeof(T))); \
    }                                                                   \
    LF_D T lf_bitwise_and(T a, T b) { return (T)(a & b); }              \
    LF_D T lf_bitwise_or(T a, T b) { return (T)(a | b); }               \
    LF_D T lf_bitwise_xor(T a, T b) { return (T)(a ^ b); }              \
    /* A negative count is a huge one (NumPy): compared as unsigned. */ \
    LF_D T lf_left_shift(T a, T b) {                                    \
        return (unsigned long long)b < sizeof(T) * 8 ? (T)((U)a << b) : (T)0; \
    }                                                                   \
    LF_D T lf_power_nonneg(T a, T b) {                                  \
        T r = 1;                                                        \
        while (b != 0) {                                                \
            if (b & 1) r = lf_multiply(r, a);                           \
            a = lf_multiply(a, a);                                      \
            b = (T)(b >> 1);                                            \
        }                                                               \
        return r;                                                       \
    }

// NumPy's gcd and lcm: Euclid on the magnitudes, in the unsigned type;
// the lcm's product wraps there.
template <typename U> LF_D U lf_gcd_magnitudes(U a, U b) {
    while (a != 0) { U c = a; a = (U)(b % a); b = c; }
    return b;
}
template <typename U> LF_D U lf_lcm_magnitudes(U a, U b) {
    U g = lf_gcd_magnitudes(a, b);
    return g == 0 ? (U)0 : (U)((a / g) * b);
}

#define LF_SIGNED(T, U)                                                 \
    LF_INT_COMMON(T, U)                                                 \
    LF_D U lf_magnitude(T a) { return a < 0 ? (U)((U)0 - (U)a) : (U)a; } \
    LF_D T lf_gcd(T a, T b) { return (T)lf_gcd_magnitudes(lf_magnitude(a), lf_magnitude(b)); } \
    LF_D T lf_lcm(T a, T b) { return (T)lf_lcm_magnitudes(lf_magnitude(a), lf_magnitude(b)); } \
    LF_D T lf_absolute(T a) { return a < 0 ? lf_negative(a) : a; }      \
    LF_D T lf_sign(T a) { return (T)((a > 0) - (a < 0)); }              \
    LF_D T lf_floor_divide(T a, T b) {                                  \
        if (b == 0) return 0;                                           \
        if (b == (T)-1) return lf_negative(a);                          \
        T q = (T)(a / b);                                               \
        return (a % b != 0 && ((a < 0) != (b < 0))) ? (T)(q - 1) : q;  \
    }                                                                   \
    LF_D T lf_remainder(T a, T b) {                                     \
        if (b == 0 || b == (T)-1) return 0;                             \
        T r = (T)(a % b);                                               \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;       \
    }                                                                   \
    LF_D T lf_true_divide(T a, T b) { return lf_floor_divide(a, b); }   \
    LF_D T lf_fmod(T a, T b) { return (b == 0 || b == (T)-1) ? (T)0 : (T)(a % b); } \
    LF_D T lf_right_shift(T a, T b) {                                   \
        return (unsigned long long)b < sizeof(T) * 8 ? (T)(a >> b) : (a < 0 ? (T)-1 : (T)0); \
    }                                                                   \
    LF_D T lf_power(T a, T b) {                                         \
        if (b < 0) return a == 1 ? (T)1 : a == (T)-1 ? ((b & 1) ? a : (T)1) : (T)0; \
        return lf_power_nonneg(a, b);                                   \
    }

#define LF_UNSIGNED(T)                                                  \
    LF_INT_COMMON(T, T)                                                 \
    LF_D T lf_gcd(T a, T b) { return lf_gcd_magnitudes(a, b); }         \
    LF_D T lf_lcm(T a, T b) { return lf_lcm_magnitudes(a, b); }         \
    LF_D T lf_absolute(T a) { return a; }                               \
    LF_D T lf_sign(T a) { return (T)(a > 0); }                          \
    LF_D T lf_floor_divide(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \
    LF_D T lf_remainder(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); } \
    LF_D T lf_true_divide(T a, T b) { return lf_floor_divide(a, b); }   \
    LF_D T lf_fmod(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }     \
    LF_D T lf_right_shift(T a, T b) {                                   \
        return (unsigned long long)b < sizeof(T) * 8 ? (T)(a >> b) : (T)0; \
    }                                                                   \
    LF_D T lf_power(T a, T b) { return lf_power_nonneg(a, b); }

LF_SIGNED(signed char, unsigned char)
LF_SIGNED(short, unsigned short)
LF_SIGNED(int, unsigned int)
LF_SIGNED(long long, unsigned long long)
LF_UNSIGNED(unsigned char)
LF_UNSIGNED(unsigned short)
LF_UNSIGNED(unsigned int)
LF_UNSIGNED(unsigned long long)

#define LF_FLOAT(T, S)                                                  \
    LF_COMPARE(T)                                                       \
    LF_D T lf_add(T a, T b) { return a + b; }                           \
    LF_D T lf_subtract(T a, T b) { return a - b; }                      \
    LF_D T lf_multiply(T a, T b) { return a * b; }                      \
    LF_D T lf_true_divide(T a, T b) { return a / b; }                   \
    LF_D T lf_negative(T a) { return -a; }                              \
    LF_D T lf_square(T a) { return a * a; }                             \
    LF_D T lf_absolute(T a) { return fabs##S(a); }                      \
    LF_D T lf_sign(T a) { return a > 0 ? (T)1 : a < 0 ? (T)-1 : a == 0 ? (T)0 : a; } \
    LF_D T lf_sqrt(T a) { return sqrt##S(a); }                          \
    LF_D T lf_exp(T a) { return exp##S(a); }                            \
    LF_D T lf_exp2(T a) { return exp2##S(a); }                          \
    LF_D T lf_expm1(T a) { return expm1##S(a); }                        \
    LF_D T lf_log(T a) { return log##S(a); }                            \
    LF_D T lf_log2(T a) { return log2##S(a); }                          \
    LF_D T lf_log10(T a) { return log10##S(a); }                        \
    LF_D T lf_log1p(T a) { return log1p##S(a); }                        \
    LF_D T lf_sin(T a) { return sin##S(a); }                            \
    LF_D T lf_cos(T a) { return cos##S(a); }                            \
    LF_D T lf_tan(T a) { return tan##S(a); }                            \
    LF_D T lf_arcsin(T a) { return asin##S(a); }                        \
    LF_D T lf_arccos(T a) { return acos##S(a); }                        \
    LF_D T lf_arctan(T a) { return atan##S(a); }                        \
    LF_D T lf_sinh(T a) { return sinh##S(a); }                          \
    LF_D T lf_cosh(T a) { return cosh##S(a); }                          \
    LF_D T lf_tanh(T a) { return tanh##S(a); }                          \
    LF_D T lf_arcsinh(T a) { return asinh##S(a); }                      \
    LF_D T lf_erf(T a) { return erf##S(a); }                            \
    LF_D T lf_erfc(T a) { return erfc##S(a); }                          \
    LF_D T lf_gamma(T a) { return tgamma##S(a); }                       \
    LF_D T lf_lgamma(T a) { return lgamma##S(a); }                      \
    LF_D T lf_arccosh(T a) { return acosh##S(a); }                      \
    LF_D T lf_arctanh(T a) { return atanh##S(a); }                      \
    LF_D T lf_floor(T a) { return floor##S(a); }                        \
    LF_D T lf_fma(T a, T b, T c) { return fma##S(a, b, c); }            \
    LF_D T lf_ceil(T a) { return ceil##S(a); }                          \
    LF_D T lf_trunc(T a) { return trunc##S(a); }                        \
    LF_D T lf_round(T a) { return rint##S(a); }                         \
    LF_D T lf_rint(T a) { return rint##S(a); }                          \
    LF_D T lf_cbrt(T a) { return cbrt##S(a); }                          \
    LF_D T lf_reciprocal(T a) { return (T)1 / a; }                      \
    LF_D T lf_deg2rad(T a) { return a * ((T)3.14159265358979323846 / (T)180); } \
    LF_D T lf_rad2deg(T a) { return a * ((T)180 / (T)3.14159265358979323846); } \
    LF_D T lf_arctan2(T a, T b) { return atan2##S(a, b); }              \
    LF_D T lf_hypot(T a, T b) { return hypot##S(a, b); }                \
    LF_D T lf_logaddexp(T a, T b) {                                     \
        if (a == b) return a + (T)0.693147180559945309417232121458176568; \
        T d = a - b;                                                    \
        return d > 0 ? a + log1p##S(exp##S(-d))                         \
             : d <= 0 ? b + log1p##S(exp##S(d)) : d;                    \
    }                                                                   \
    LF_D T lf_logaddexp2(T a, T b) {                                    \
        const T log2e = (T)1.442695040888963407359924681001892137;     \
        if (a == b) return a + 1;                                       \
        T d = a - b;                                                    \
        return d > 0 ? a + log1p##S(exp2##S(-d)) * log2e                \
             : d <= 0 ? b + log1p##S(exp2##S(d)) * log2e : d;           \
    }                                                                   \
    LF_D T lf_heaviside(T a, T b) {                                     \
        return a < 0 ? (T)0 : a > 0 ? (T)1 : a == 0 ? b : a;            \
    }                                                                   \
    LF_D T lf_copysign(T a, T b) { return copysign##S(a, b); }          \
    LF_D T lf_fmod(T a, T b) { return fmod##S(a, b); }                  \
    LF_D T lf_nextafter(T a, T b) { return nextafter##S(a, b); }        \
    LF_D bool lf_isnan(T a) { return isnan(a); }                        \
    LF_D bool lf_isinf(T a) { return isinf(a); }                        \
    LF_D bool lf_isfinite(T a) { return isfinite(a); }                  \
    LF_D T lf_power(T a, T b) { return pow##S(a, b); }                  \
    LF_D T lf_minimum(T a, T b) { return (isnan(a) || a < b) ? a : b; } \
    LF_D T lf_maximum(T a, T b) { return (isnan(a) || a > b) ? a : b; } \
    LF_D void lf_divmod(T a, T b, T *quotient, T *remainder) {          \
        T rem = fmod##S(a, b);                                          \
        if (b == 0) { *quotient = a / b; *remainder = rem; return; }    \
        T div = (a - rem) / b;                                          \
        if (rem != 0) {                                                 \
            if ((b < 0) != (rem < 0)) { rem += b; div -= 1; }           \
        } else {                                                        \
            rem = copysign##S((T)0, b);                                 \
        }                                                               \
        T fl;                                                           \
        if (div != 0) {                                                 \
            fl = floor##S(div);                                         \
            if (div - fl > (T)0.5) fl += 1;                             \
        } else {                                                        \
            fl = copysign##S((T)0, a / b);                              \
        }                                                               \
        *quotient = fl;                                                 \
        *remainder = rem;                                               \
    }                                                                   \
    LF_D T lf_floor_divide(T a, T b) { T q, r; lf_divmod(a, b, &q, &r); return q; } \
    LF_D T lf_remainder(T a, T b) { T q, r; lf_divmod(a, b, &q, &r); return r; }

LF_FLOAT(float, f)
LF_FLOAT(double, )

// The bits of the 16-bit float after a toward b (half and bfloat16 alike:
// sign, then magnitude), two numbers that differ: NumPy's half nextafter.
LF_D unsigned short lf_half_step(unsigned short a, unsigned short b) {
    if ((a & 0x7fffu) == 0) return (unsigned short)((b & 0x8000u) + 1);
    bool toward_zero = (a & 0x8000u) == 0 ? (short)a > (short)b
                     : ((b & 0x8000u) == 0 || (a & 0x7fffu) > (b & 0x7fffu));
    return (unsigned short)(toward_zero ? a - 1 : a + 1);
}

// Philox4x32-10 (Random123) of counter words (low, high, 0, 0) under key
// words (low, high): its four output words (a struct, not an array, so
// they stay in registers).
struct lf_philox_words { unsigned int w0, w1, w2, w3; };
LF_D lf_philox_words lf_philox_block(unsigned long long counter, unsigned long long key) {
    unsigned int c0 = (unsigned int)counter, c1 = (unsigned int)(counter >> 32), c2 = 0, c3 = 0;
    unsigned int k0 = (unsigned int)key, k1 = (unsigned int)(key >> 32);
    for (int round = 0; round < 10; ++round) {
        if (round > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
        unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        c0 = hi1 ^ c1 ^ k0; c1 = lo1; c2 = hi0 ^ c3 ^ k1; c3 = lo0;
    }
    lf_philox_words w = {c0, c1, c2, c3};
    return w;
}

// As lazyfuse_core::philox::bits: the first two output words.
LF_D unsigned long long lf_philox(unsigned long long counter, unsigned long long key) {
    lf_philox_words w = lf_philox_block(counter, key);
    return (unsigned long long)w.w0 | ((unsigned long long)w.w1 << 32);
}

// As lazyfuse_core::philox::pair: words 2 (counter % 2) and the next of
// the block at counter / 2 (the first low).
LF_D unsigned long long lf_philox_pair(unsigned long long counter, unsigned long long key) {
    lf_philox_words w = lf_philox_block(counter >> 1, key);
    unsigned int low = (counter & 1) ? w.w2 : w.w0, high = (counter & 1) ? w.w3 : w.w1;
    return (unsigned long long)low | ((unsigned long long)high << 32);
}

// As lazyfuse_core::philox::word: word counter % 4 of the block at counter / 4.
LF_D unsigned long long lf_philox_word(unsigned long long counter, unsigned long long key) {
    lf_philox_words w = lf_philox_block(counter >> 2, key);
    unsigned int low = (counter & 1) ? w.w1 : w.w0, high = (counter & 1) ? w.w3 : w.w2;
    return (counter & 2) ? high : low;
}

// bool: logical operations, and minimum/maximum/add/multiply as NumPy's.
LF_COMPARE(bool)
LF_D bool lf_logical_and(bool a, bool b) { return a && b; }
LF_D bool lf_logical_or(bool a, bool b) { return a || b; }
LF_D bool lf_logical_xor(bool a, bool b) { return a != b; }
LF_D bool lf_logical_not(bool a) { return !a; }
LF_D bool lf_minimum(bool a, bool b) { return a && b; }
LF_D bool lf_maximum(bool a, bool b) { return a || b; }
LF_D bool lf_add(bool a, bool b) { return a || b; }
LF_D bool lf_multiply(bool a, bool b) { return a && b; }

// Float to integer: saturating, NaN to 0 (Rust's `as`).
#define LF_F2I(T, NAME, LO, HI)                                         \
    LF_D T NAME(double x) {                                             \
        if (isnan(x)) return 0;                                         \
        if (x <= (double)(LO)) return (T)(LO);                          \
        if (x >= (double)(HI)) return (T)(HI);                          \
        return (T)x;                                                    \
    }
LF_F2I(signed char, lf_f2i8, -128, 127)
LF_F2I(short, lf_f2i16, -32768, 32767)
LF_F2I(int, lf_f2i32, (-2147483647 - 1), 2147483647)
LF_F2I(long long, lf_f2i64, (-9223372036854775807LL - 1), 9223372036854775807LL)
LF_F2I(unsigned char, lf_f2u8, 0, 255)
LF_F2I(unsigned short, lf_f2u16, 0, 65535)
LF_F2I(unsigned int, lf_f2u32, 0, 4294967295U)
LF_F2I(unsigned long long, lf_f2u64, 0, 18446744073709551615ULL)

// Casts: lf_to_<dtype>(x), one overload per source type.
#define LF_INT_SOURCES(TO, NAME, F2I)                                   \
    LF_D TO NAME(signed char x) { return (TO)x; }                       \
    LF_D TO NAME(short x) { return (TO)x; }                             \
    LF_D TO NAME(int x) { return (TO)x; }                               \
    LF_D TO NAME(long long x) { return (TO)x; }                         \
    LF_D TO NAME(unsigned char x) { return (TO)x; }                     \
    LF_D TO NAME(unsigned short x) { return (TO)x; }                    \
    LF_D TO NAME(unsigned int x) { return (TO)x; }                      \
    LF_D TO NAME(unsigned long long x) { return (TO)x; }                \
    LF_D TO NAME(bool x) { return (TO)(x ? 1 : 0); }                    \
    LF_D TO NAME(float x) { return F2I((double)x); }                    \
    LF_D TO NAME(double x) { return F2I(x); }                           \
    LF_D TO NAME(__half x) { return F2I((double)__half2float(x)); }     \
    LF_D TO NAME(__nv_bfloat16 x) { return F2I((double)__bfloat162float(x)); }

LF_INT_SOURCES(signed char, lf_to_i8, lf_f2i8)
LF_INT_SOURCES(short, lf_to_i16, lf_f2i16)
LF_INT_SOURCES(int, lf_to_i32, lf_f2i32)
LF_INT_SOURCES(long long, lf_to_i64, lf_f2i64)
LF_INT_SOURCES(unsigned char, lf_to_u8, lf_f2u8)
LF_INT_SOURCES(unsigned short, lf_to_u16, lf_f2u16)
LF_INT_SOURCES(unsigned int, lf_to_u32, lf_f2u32)
LF_INT_SOURCES(unsigned long long, lf_to_u64, lf_f2u64)

#define LF_IDENTITY(x) (x)
#define LF_FLOAT_SOURCES(TO, NAME)                                      \
    LF_D TO NAME(signed char x) { return (TO)x; }                       \
    LF_D TO NAME(short x) { return (TO)x; }                             \
    LF_D TO NAME(int x) { return (TO)x; }                               \
    LF_D TO NAME(long long x) { return (TO)x; }                         \
    LF_D TO NAME(unsigned char x) { return (TO)x; }                     \
    LF_D TO NAME(unsigned short x) { return (TO)x; }                    \
    LF_D TO NAME(unsigned int x) { return (TO)x; }                      \
    LF_D TO NAME(unsigned long long x) { return (TO)x; }                \
    LF_D TO NAME(bool x) { return x ? (TO)1 : (TO)0; }                  \
    LF_D TO NAME(float x) { return (TO)x; }                             \
    LF_D TO NAME(double x) { return (TO)x; }                            \
    LF_D TO NAME(__half x) { return (TO)__half2float(x); }              \
    LF_D TO NAME(__nv_bfloat16 x) { return (TO)__bfloat162float(x); }

LF_FLOAT_SOURCES(float, lf_to_f32)
LF_FLOAT_SOURCES(double, lf_to_f64)

// To f16/bf16: integers round through f64 as lazyfuse_core does.
#define LF_HALF_TARGET(H, NAME, FROM_F, FROM_D, TO_F)                   \
    LF_D H NAME(signed char x) { return FROM_D((double)x); }            \
    LF_D H NAME(short x) { return FROM_D((double)x); }                  \
    LF_D H NAME(int x) { return FROM_D((double)x); }                    \
    LF_D H NAME(long long x) { return FROM_D((double)x); }              \
    LF_D H NAME(unsigned char x) { return FROM_D((double)x); }          \
    LF_D H NAME(unsigned short x) { return FROM_D((double)x); }         \
    LF_D H NAME(unsigned int x) { return FROM_D((double)x); }           \
    LF_D H NAME(unsigned long long x) { return FROM_D((double)x); }     \
    LF_D H NAME(bool x) { return FROM_F(x ? 1.0f : 0.0f); }             \
    LF_D H NAME(float x) { return FROM_F(x); }                          \
    LF_D H NAME(double x) { return FROM_D(x); }

LF_HALF_TARGET(__half, lf_to_f16, __float2half_rn, __double2half, __half2float)
LF_HALF_TARGET(__nv_bfloat16, lf_to_bf16, __float2bfloat16_rn, __double2bfloat16, __bfloat162float)
LF_D __half lf_to_f16(__half x) { return x; }
LF_D __half lf_to_f16(__nv_bfloat16 x) { return __float2half_rn(__bfloat162float(x)); }
LF_D __nv_bfloat16 lf_to_bf16(__nv_bfloat16 x) { return x; }
LF_D __nv_bfloat16 lf_to_bf16(__half x) { return __float2bfloat16_rn(__half2float(x)); }

// Bitcasts (NumPy's view): lf_bits_<dtype>(x), the bits of x read as a
// type of the same size.
LF_D signed char lf_bits_i8(unsigned char x) { return (signed char)x; }
LF_D unsigned char lf_bits_u8(signed char x) { return (unsigned char)x; }
LF_D short lf_bits_i16(unsigned short x) { return (short)x; }
LF_D unsigned short lf_bits_u16(short x) { return (unsigned short)x; }
LF_D int lf_bits_i32(unsigned int x) { return (int)x; }
LF_D unsigned int lf_bits_u32(int x) { return (unsigned int)x; }
LF_D long long lf_bits_i64(unsigned long long x) { return (long long)x; }
LF_D unsigned long long lf_bits_u64(long long x) { return (unsigned long long)x; }
LF_D int lf_bits_i32(float x) { return __float_as_int(x); }
LF_D unsigned int lf_bits_u32(float x) { return __float_as_uint(x); }
LF_D float lf_bits_f32(int x) { return __int_as_float(x); }
LF_D float lf_bits_f32(unsigned int x) { return __uint_as_float(x); }
LF_D long long lf_bits_i64(double x) { return __double_as_longlong(x); }
LF_D unsigned long long lf_bits_u64(double x) { return (unsigned long long)__double_as_longlong(x); }
LF_D double lf_bits_f64(long long x) { return __longlong_as_double(x); }
LF_D double lf_bits_f64(unsigned long long x) { return __longlong_as_double((long long)x); }
LF_D short lf_bits_i16(__half x) { return __half_as_short(x); }
LF_D unsigned short lf_bits_u16(__half x) { return __half_as_ushort(x); }
LF_D __half lf_bits_f16(short x) { return __short_as_half(x); }
LF_D __half lf_bits_f16(unsigned short x) { return __ushort_as_half(x); }
LF_D short lf_bits_i16(__nv_bfloat16 x) { return __bfloat16_as_short(x); }
LF_D unsigned short lf_bits_u16(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
LF_D __nv_bfloat16 lf_bits_bf16(short x) { return __short_as_bfloat16(x); }
LF_D __nv_bfloat16 lf_bits_bf16(unsigned short x) { return __ushort_as_bfloat16(x); }
LF_D __nv_bfloat16 lf_bits_bf16(__half x) { return __ushort_as_bfloat16(__half_as_ushort(x)); }
LF_D __half lf_bits_f16(__nv_bfloat16 x) { return __ushort_as_half(__bfloat16_as_ushort(x)); }

#define LF_TRUTHY(T) LF_D bool lf_to_bool(T x) { return x != 0; }
LF_TRUTHY(signed char) LF_TRUTHY(short) LF_TRUTHY(int) LF_TRUTHY(long long)
LF_TRUTHY(unsigned char) LF_TRUTHY(unsigned short) LF_TRUTHY(unsigned int)
LF_TRUTHY(unsigned long long) LF_TRUTHY(float) LF_TRUTHY(double)
LF_D bool lf_to_bool(bool x) { return x; }
LF_D bool lf_to_bool(__half x) { return __half2float(x) != 0.0f; }
LF_D bool lf_to_bool(__nv_bfloat16 x) { return __bfloat162float(x) != 0.0f; }
// a * b + c rounded once (CUDA's fma; the half types' in float, rounded once more).
LF_D bool lf_fma(bool a, bool b, bool c) { return (a && b) || c; }
LF_D __half lf_fma(__half a, __half b, __half c) {
    return __float2half_rn(fmaf(__half2float(a), __half2float(b), __half2float(c)));
}
LF_D __nv_bfloat16 lf_fma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
    return __float2bfloat16_rn(fmaf(__bfloat162float(a), __bfloat162float(b), __bfloat162float(c)));
}

// Atomics of user kernels: lf_atomic_<op>(address, [compare,] value)
// returns the old value. Signed 64-bit and float variants go through the
// unsigned or bit-pattern forms; float min/max are CAS loops; CAS compares
// bit patterns.
LF_D int lf_atomic_add(int *p, int v) { return atomicAdd(p, v); }
LF_D unsigned int lf_atomic_add(unsigned int *p, unsigned int v) { return atomicAdd(p, v); }
LF_D unsigned long long lf_atomic_add(unsigned long long *p, unsigned long long v) { return atomicAdd(p, v); }
LF_D long long lf_atomic_add(long long *p, long long v) {
    return (long long)atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
LF_D float lf_atomic_add(float *p, float v) { return atomicAdd(p, v); }
#define LF_F2B(x) ((unsigned int)__float_as_uint(x))
#define LF_B2F(x) __uint_as_float(x)
#define LF_D2B(x) ((unsigned long long)__double_as_longlong(x))
#define LF_B2D(x) __longlong_as_double((long long)(x))
LF_D double lf_atomic_add(double *p, double v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600
    return atomicAdd(p, v);
#else
    // No native double atomicAdd before sm_60: a CAS loop.
    unsigned long long *q = (unsigned long long *)p;
    unsigned long long old = *q, assumed;
    do {
        assumed = old;
        old = atomicCAS(q, assumed, LF_D2B(LF_B2D(assumed) + v));
    } while (assumed != old);
    return LF_B2D(old);
#endif
}
#define LF_ATOMIC_MINMAX_INT(T)                                         \
    LF_D T lf_atomic_min(T *p, T v) { return atomicMin(p, v); }         \
    LF_D T lf_atomic_max(T *p, T v) { return atomicMax(p, v); }         \
    LF_D T lf_atomic_nanmin(T *p, T v) { return atomicMin(p, v); }      \
    LF_D T lf_atomic_nanmax(T *p, T v) { return atomicMax(p, v); }
LF_ATOMIC_MINMAX_INT(int)
LF_ATOMIC_MINMAX_INT(unsigned int)
LF_ATOMIC_MINMAX_INT(long long)
LF_ATOMIC_MINMAX_INT(unsigned long long)
// Float min/max as Numba's: a NaN on either side leaves memory as it is
// (`v < old ? v : old`); nanmin/nanmax as fmin/fmax (NaN is missing).
LF_D float lf_keep_min(float a, float b) { return b < a ? b : a; }
LF_D float lf_keep_max(float a, float b) { return b > a ? b : a; }
LF_D double lf_keep_min(double a, double b) { return b < a ? b : a; }
LF_D double lf_keep_max(double a, double b) { return b > a ? b : a; }
#define LF_ATOMIC_FLOAT_CAS(T, BITS, TO_BITS, FROM_BITS, NAME, F)       \
    LF_D T lf_atomic_##NAME(T *p, T v) {                                \
        BITS *q = (BITS *)p;                                            \
        BITS old = *q, assumed;                                         \
        do {                                                            \
            assumed = old;                                              \
            BITS next = TO_BITS(F(FROM_BITS(assumed), v));              \
            if (next == assumed) break;                                 \
            old = atomicCAS(q, assumed, next);                          \
        } while (assumed != old);                                       \
        return FROM_BITS(old);                                          \
    }
LF_ATOMIC_FLOAT_CAS(float, unsigned int, LF_F2B, LF_B2F, min, lf_keep_min)
LF_ATOMIC_FLOAT_CAS(float, unsigned int, LF_F2B, LF_B2F, max, lf_keep_max)
LF_ATOMIC_FLOAT_CAS(float, unsigned int, LF_F2B, LF_B2F, nanmin, fminf)
LF_ATOMIC_FLOAT_CAS(float, unsigned int, LF_F2B, LF_B2F, nanmax, fmaxf)
LF_ATOMIC_FLOAT_CAS(double, unsigned long long, LF_D2B, LF_B2D, min, lf_keep_min)
LF_ATOMIC_FLOAT_CAS(double, unsigned long long, LF_D2B, LF_B2D, max, lf_keep_max)
LF_ATOMIC_FLOAT_CAS(double, unsigned long long, LF_D2B, LF_B2D, nanmin, fmin)
LF_ATOMIC_FLOAT_CAS(double, unsigned long long, LF_D2B, LF_B2D, nanmax, fmax)
LF_D int lf_atomic_sub(int *p, int v) { return atomicSub(p, v); }
LF_D unsigned int lf_atomic_sub(unsigned int *p, unsigned int v) { return atomicSub(p, v); }
LF_D unsigned long long lf_atomic_sub(unsigned long long *p, unsigned long long v) {
    return atomicAdd(p, 0ull - v);
}
LF_D long long lf_atomic_sub(long long *p, long long v) {
    return (long long)atomicAdd((unsigned long long *)p, 0ull - (unsigned long long)v);
}
LF_D float lf_atomic_sub(float *p, float v) { return lf_atomic_add(p, -v); }
LF_D double lf_atomic_sub(double *p, double v) { return lf_atomic_add(p, -v); }
#define LF_ATOMIC_BITWISE(NAME, CUDA)                                                       \
    LF_D int lf_atomic_##NAME(int *p, int v) { return CUDA(p, v); }                         \
    LF_D unsigned int lf_atomic_##NAME(unsigned int *p, unsigned int v) { return CUDA(p, v); } \
    LF_D unsigned long long lf_atomic_##NAME(unsigned long long *p, unsigned long long v) {  \
        return CUDA(p, v);                                                                  \
    }                                                                                       \
    LF_D long long lf_atomic_##NAME(long long *p, long long v) {                            \
        return (long long)CUDA((unsigned long long *)p, (unsigned long long)v);             \
    }
LF_ATOMIC_BITWISE(and, atomicAnd)
LF_ATOMIC_BITWISE(or, atomicOr)
LF_ATOMIC_BITWISE(xor, atomicXor)
// CUDA's wrapping counters: inc `old >= v ? 0 : old + 1`, dec
// `(old == 0 || old > v) ? v : old - 1`; 64-bit ones are CAS loops.
LF_D unsigned int lf_atomic_inc(unsigned int *p, unsigned int v) { return atomicInc(p, v); }
LF_D unsigned int lf_atomic_dec(unsigned int *p, unsigned int v) { return atomicDec(p, v); }
LF_D unsigned long long lf_atomic_inc(unsigned long long *p, unsigned long long v) {
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, assumed >= v ? 0ull : assumed + 1);
    } while (assumed != old);
    return old;
}
LF_D unsigned long long lf_atomic_dec(unsigned long long *p, unsigned long long v) {
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, (assumed == 0 || assumed > v) ? v : assumed - 1);
    } while (assumed != old);
    return old;
}
LF_D int lf_atomic_exchange(int *p, int v) { return atomicExch(p, v); }
LF_D unsigned int lf_atomic_exchange(unsigned int *p, unsigned int v) { return atomicExch(p, v); }
LF_D unsigned long long lf_atomic_exchange(unsigned long long *p, unsigned long long v) { return atomicExch(p, v); }
LF_D long long lf_atomic_exchange(long long *p, long long v) {
    return (long long)atomicExch((unsigned long long *)p, (unsigned long long)v);
}
LF_D float lf_atomic_exchange(float *p, float v) { return atomicExch(p, v); }
LF_D double lf_atomic_exchange(double *p, double v) {
    return LF_B2D(atomicExch((unsigned long long *)p, LF_D2B(v)));
}
LF_D int lf_atomic_cas(int *p, int c, int v) { return atomicCAS(p, c, v); }
LF_D unsigned int lf_atomic_cas(unsigned int *p, unsigned int c, unsigned int v) { return atomicCAS(p, c, v); }
LF_D unsigned long long lf_atomic_cas(unsigned long long *p, unsigned long long c, unsigned long long v) {
    return atomicCAS(p, c, v);
}
LF_D long long lf_atomic_cas(long long *p, long long c, long long v) {
    return (long long)atomicCAS((unsigned long long *)p, (unsigned long long)c, (unsigned long long)v);
}
LF_D float lf_atomic_cas(float *p, float c, float v) {
    return LF_B2F(atomicCAS((unsigned int *)p, LF_F2B(c), LF_F2B(v)));
}
LF_D double lf_atomic_cas(double *p, double c, double v) {
    return LF_B2D(atomicCAS((unsigned long long *)p, LF_D2B(c), LF_D2B(v)));
}

// f16/bf16 operations, computed in f32 and rounded once (generated per op).
