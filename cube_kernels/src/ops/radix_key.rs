//! The order of sort keys as unsigned bits (CUB's "twiddling"), for every key type.
//!
//! A key maps to an unsigned integer whose natural order is the sort order:
//! - unsigned integers: the bits as they are;
//! - signed integers: the sign bit flipped;
//! - floats: the sign bit set for positive values, negative ones negated as integers
//!   (`!b + 1`), so that `-inf < … < -0.0 = +0.0 < … < +inf`: the negation takes `-0.0` to
//!   `+0.0`'s key at no extra operation (CUB canonicalises `-0.0` first), so the two zeros
//!   are equal keys (a stable sort keeps their input order; the keys written out are the
//!   input's, signs kept), as in PyTorch; every NaN (any sign, any payload) becomes the
//!   largest key, so NaN sorts last in ascending order (first in descending order), as in
//!   PyTorch and NumPy;
//! - f16 / bf16: the same on their own 16 bits (16-bit keys: two 8-bit digits).
//!
//! Keys of at most 4 bytes order as `u32`, 8-byte keys as `u64`.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use cubecl::ir::{ElemType, FloatKind};
use cubecl::prelude::*;

/// The 16 bits of an f16 value given as the bits of the (exactly converted) f32.
#[cube]
fn f16_bits_of_f32(b: u32) -> u32 {
    let s = (b >> 16) & 0x8000u32;
    let e = (b >> 23) & 0xffu32;
    let m = b & 0x7f_ffffu32;
    let mut h = s;
    if e == 0xffu32 {
        h = s | 0x7c00u32 | (m >> 13) | select(m != 0u32, 0x200u32, 0u32);
    } else if e >= 113u32 {
        h = s | ((e - 112u32) << 10) | (m >> 13);
    } else if e >= 103u32 {
        h = s | ((m | 0x80_0000u32) >> (126u32 - e));
    }
    h
}

/// The ordered bits of a key of at most 4 bytes (16 significant bits for f16 / bf16).
#[cube]
#[allow(unused_assignments)] // every comptime branch assigns `o`
pub fn ordered_key32<T: Numeric>(x: T) -> u32 {
    let ty = type_of::<T>();
    let elem = comptime![ty.elem_type()];
    let mut o = 0u32;
    if comptime![elem.is_float()] {
        if comptime![ty.size() == 4] {
            let b = u32::reinterpret(x);
            // Negative: `0 - b` (`!b + 1`) reverses their order and takes -0.0 to +0.0's key.
            o = select((b >> 31) == 1u32, 0u32 - b, b | 0x8000_0000u32);
            if (b & 0x7fff_ffffu32) > 0x7f80_0000u32 {
                o = u32::MAX;
            }
        } else {
            let b32 = u32::reinterpret(f32::cast_from(x));
            let mut h = b32 >> 16;
            if comptime![elem != ElemType::Float(FloatKind::BF16)] {
                h = f16_bits_of_f32(b32);
            }
            o = select((h >> 15) == 1u32, 0x1_0000u32 - h, h | 0x8000u32);
            if (h & 0x7fffu32) > 0x7c00u32 && comptime![elem != ElemType::Float(FloatKind::BF16)] {
                o = 0xffffu32;
            }
            if (h & 0x7fffu32) > 0x7f80u32 && comptime![elem == ElemType::Float(FloatKind::BF16)] {
                o = 0xffffu32;
            }
        }
    } else {
        o = u32::reinterpret(x);
        if comptime![elem.is_signed_int()] {
            o ^= 0x8000_0000u32;
        }
    }
    o
}

/// The ordered bits of an 8-byte key.
#[cube]
pub fn ordered_key64<T: Numeric>(x: T) -> u64 {
    let ty = type_of::<T>();
    let elem = comptime![ty.elem_type()];
    let b = u64::reinterpret(x);
    let sign = 0x8000_0000_0000_0000u64;
    let mut o = b;
    if comptime![elem.is_float()] {
        o = select((b >> 63u64) == 1u64, 0u64 - b, b | sign);
        if (b & !sign) > 0x7ff0_0000_0000_0000u64 {
            o = u64::MAX;
        }
    } else if comptime![elem.is_signed_int()] {
        o = b ^ sign;
    }
    o
}

/// The radix digit `(ordered(x) >> shift) & mask`, each bit flipped when `flip` is all ones
/// (descending order: flipping every digit reverses the order and keeps equal keys equal).
#[cube]
pub fn radix_digit<T: Numeric>(x: T, shift: u32, mask: u32, flip: u32) -> u32 {
    let ty = type_of::<T>();
    if comptime![ty.size() == 8] {
        let o = ordered_key64::<T>(x);
        let d = u32::cast_from((o >> u64::cast_from(shift)) & u64::cast_from(mask));
        (d ^ flip) & mask
    } else if comptime![ty.elem_type().is_signed_int()] {
        // `ordered_key32`'s sign flip only reaches the digit that holds bit 31: folded into
        // `flip` (the same for every key), it costs no operation per key, so i32 keys extract
        // digits exactly as cheaply as u32 keys.
        let f = flip ^ (0x8000_0000u32 >> shift);
        ((u32::reinterpret(x) >> shift) ^ f) & mask
    } else {
        let d = (ordered_key32::<T>(x) >> shift) & mask;
        (d ^ flip) & mask
    }
}

/// `a < b` in the ascending sort order (NaN last, `-0.0 == +0.0`).
#[cube]
pub fn key_less<T: Numeric>(a: T, b: T) -> bool {
    let ty = type_of::<T>();
    if comptime![ty.size() == 8] {
        ordered_key64::<T>(a) < ordered_key64::<T>(b)
    } else {
        ordered_key32::<T>(a) < ordered_key32::<T>(b)
    }
}
