use cubecl::prelude::CubePrimitive;
use half::{bf16, f16};
use std::fmt;

/// Element types cubeprim handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// IEEE half precision (`half::f16`); accumulates in f32.
    F16,
    /// bfloat16 (`half::bf16`); accumulates in f32. Not on Vulkan (lavapipe) or Metal.
    BF16,
    /// 64-bit float, where the runtime has it.
    F64,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer (also the dtype of device counts).
    U32,
    /// 64-bit signed integer, where the runtime has it (the index dtype there).
    I64,
    /// 64-bit unsigned integer, where the runtime has it.
    U64,
    /// Bytes (u8 / bool masks): the flags of the compaction ops (select, partition,
    /// masked_select, nonzero, count), read four to a word on every runtime. Other ops
    /// reject it.
    U8,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::U8 => 1,
            DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }
    /// Whether the dtype is a floating-point type (f32, f16, bf16, f64).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
    }
    /// Bytes of the type the scans accumulate in (f32 for f16 / bf16).
    pub fn accumulator_size(self) -> usize {
        self.size().max(4)
    }
    /// Every dtype the ops take as data (all but [`DType::U8`], which only flags and masks
    /// may be).
    pub const ALL: [DType; 8] = [
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::F64,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
    ];
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::U8 => "u8",
        };
        f.write_str(s)
    }
}

/// A host element type with its [`DType`].
pub trait Element: bytemuck::Pod + CubePrimitive + PartialOrd + fmt::Debug + Send + Sync {
    /// The dtype of a tensor of this element type.
    const DTYPE: DType;
    /// The value as an `f64` (exact for every type but the 64-bit integers past 2^53).
    fn to_f64(self) -> f64;
    /// The value nearest `v` (integers truncate and saturate as `as` casts do).
    fn from_f64(v: f64) -> Self;
}

macro_rules! element {
    ($t:ty, $d:ident, |$v:ident| $to:expr, |$w:ident| $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 {
                let $v = self;
                $to
            }
            fn from_f64($w: f64) -> Self {
                $from
            }
        }
    };
}
element!(f32, F32, |v| v as f64, |w| w as f32);
element!(f64, F64, |v| v, |w| w);
element!(f16, F16, |v| v.to_f64(), |w| f16::from_f64(w));
element!(bf16, BF16, |v| v.to_f64(), |w| bf16::from_f64(w));
element!(i32, I32, |v| v as f64, |w| w as i32);
element!(u32, U32, |v| v as f64, |w| w as u32);
element!(i64, I64, |v| v as f64, |w| w as i64);
element!(u64, U64, |v| v as f64, |w| w as u64);
element!(u8, U8, |v| v as f64, |w| w as u8);

/// The lowest finite value of a float dtype (f32's for the other dtypes): the floor the
/// logcumsumexp backward passes put in place of `log 0` (as PyTorch's).
#[cfg(any(feature = "burn", feature = "candle"))]
pub(crate) fn lowest_finite(d: DType) -> f64 {
    match d {
        DType::F64 => f64::MIN,
        DType::F16 => half::f16::MIN.to_f64(),
        DType::BF16 => half::bf16::MIN.to_f64(),
        _ => f64::from(f32::MIN),
    }
}

/// The dtype a dtype's scans and folds accumulate in (f32 for f16 / bf16).
pub(crate) fn accumulator_dtype(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        DType::U8 => DType::U32,
        d => d,
    }
}
