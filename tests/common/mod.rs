//! Shared test helpers: the device, random data, comparison with the CPU reference.
#![allow(dead_code)]

use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
use cubecl::Runtime;
use cubeprim::{DType, DeviceTensor, Element};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub type R = WgpuRuntime;
pub type Client = cubecl::client::ComputeClient<R>;

/// The wgpu device (lavapipe in CI). Under `CI=true` a missing device fails the test; elsewhere
/// the test is skipped with a message.
pub fn client() -> Option<Client> {
    let got = std::panic::catch_unwind(|| {
        let c = WgpuRuntime::client(&WgpuDevice::default());
        let _ = c.properties();
        c
    });
    match got {
        Ok(c) => Some(c),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true but no wgpu device was found: install mesa-vulkan-drivers (lavapipe)")
        }
        Err(_) => {
            eprintln!("no wgpu device: kernel test skipped (set CI=true to make this a failure)");
            None
        }
    }
}

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Random values of `dtype` (as f64) suited to each op: small integers, or floats in a range
/// where products stay finite.
pub fn random_values(rng: &mut StdRng, n: usize, dtype: DType, for_prod: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            if for_prod {
                if dtype.is_float() {
                    rng.random_range(0.9..1.1)
                } else {
                    rng.random_range(1..=3) as f64
                }
            } else if dtype.is_float() {
                rng.random_range(-4.0..4.0)
            } else if matches!(dtype, DType::U32 | DType::U64) {
                rng.random_range(0..1000) as f64
            } else {
                rng.random_range(-1000..1000) as f64
            }
        })
        .collect()
}

pub fn to_elems<E: Element>(v: &[f64]) -> Vec<E> {
    v.iter().map(|&x| E::from_f64(x)).collect()
}

pub fn upload<E: Element>(c: &Client, v: &[E], shape: &[usize]) -> DeviceTensor<R> {
    DeviceTensor::from_slice(c, v, shape)
}
