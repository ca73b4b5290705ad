//! Run-time dtype / operator → kernel type parameters, shared by every launcher.

/// Runs `$body` with `$T` bound to the dtype's storage type and `$A` to its accumulator
/// (f32 for f16 / bf16; see [`accumulator_dtype`](crate::dtype::accumulator_dtype)).
macro_rules! with_dtype {
    ($dtype:expr, |$T:ident, $A:ident| $body:expr) => {
        match $dtype {
            $crate::DType::F32 => {
                type $T = f32;
                type $A = f32;
                $body
            }
            $crate::DType::F16 => {
                type $T = half::f16;
                type $A = f32;
                $body
            }
            $crate::DType::BF16 => {
                type $T = half::bf16;
                type $A = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                type $A = f64;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                type $A = i32;
                $body
            }
            $crate::DType::U32 => {
                type $T = u32;
                type $A = u32;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                type $A = i64;
                $body
            }
            $crate::DType::U64 => {
                type $T = u64;
                type $A = u64;
                $body
            }
            // Byte flags never reach a kernel as data: `with_flags!` reads them as u32 words and
            // every entry point rejects U8 data with a typed error first. No arm, so no kernel
            // is instantiated for u8.
            $crate::DType::U8 => unreachable!("u8 is a flag dtype only, rejected before dispatch"),
        }
    };
}

/// Runs `$body` with `$O` bound to the operator's kernel type.
macro_rules! with_op {
    ($op:expr, |$O:ident| $body:expr) => {
        match $op {
            $crate::ScanOp::Sum => {
                type $O = cubeprim_kernels::ops::Add;
                $body
            }
            $crate::ScanOp::Prod => {
                type $O = cubeprim_kernels::ops::Mul;
                $body
            }
            $crate::ScanOp::Max => {
                type $O = cubeprim_kernels::ops::Max;
                $body
            }
            $crate::ScanOp::Min => {
                type $O = cubeprim_kernels::ops::Min;
                $body
            }
            $crate::ScanOp::LogSumExp => {
                type $O = cubeprim_kernels::ops::LogAddExp;
                $body
            }
        }
    };
}

pub(crate) use {with_dtype, with_op};
