//! Trust under long runs, shared state and hostile arguments: each test here failed before the
//! fix it names, or shows that a predicted defect does not exist.

use crate::common::{client, rng, R};
use cubeprim::sort::Route;
use cubeprim::{DeviceTensor, IndexType, Payload, ScanOp, ScanOptions, SortOptions, Workspace};
use rand::Rng;

/// The look-back epoch wraps inside the scans nested in a device-wide sort: the restart must
/// clear only look-back state, never the sort's live scratch (its counts and ping-pong keys).
/// Before the fix, the wrap zero-filled the whole workspace and the sort came back unsorted.
#[test]
fn epoch_wrap_inside_a_sort_keeps_its_scratch() {
    let Some(c) = client() else { return };
    let mut r = rng(351);
    let n = 1 << 18;
    let keys: Vec<f32> = (0..n).map(|_| r.random_range(-1e6f32..1e6)).collect();
    let mut want = keys.clone();
    want.sort_by(f32::total_cmp);
    let plan = cubeprim::sort_plan(
        &c,
        &[n],
        cubeprim::DType::F32,
        Payload::None,
        false,
        SortOptions::default(),
    )
    .unwrap();
    assert_eq!(
        plan.route,
        Route::DeviceWide,
        "the case needs a device-wide sort"
    );
    let x = DeviceTensor::<R>::from_slice(&c, &keys, &[n]).unwrap();
    let mut ws = Workspace::new();
    // Warm up once, then put the wrap at every pass's scan in turn.
    cubeprim::sort(&c, &x, SortOptions::default(), &mut ws).unwrap();
    for before in 0..=plan.passes + 1 {
        ws.wrap_epoch_after_for_test(before);
        let got = cubeprim::sort(&c, &x, SortOptions::default(), &mut ws).unwrap();
        let got: Vec<f32> = got.to_vec(&c);
        assert!(
            got.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "sorted wrongly with the wrap after {before} leases"
        );
    }
}

/// Every wait of the look-back is bounded, the deepest window's too: with
/// [`STALL_PREFIXES`](cubeprim::scan::STALL_PREFIXES) no tile publishes its inclusive prefix (as
/// when a predecessor that has published its aggregate is never scheduled again), so every cube
/// more than a window from its row's start must fold its prefix itself, and every third tile
/// publishes nothing, so the folds reduce silent tiles themselves. Before the bounded
/// fallback those cubes waited forever (a hang on CUDA, a loop cut short by llvmpipe). The
/// result must be the CPU's, and bit for bit the normal look-back's (the same left fold).
#[test]
fn stalled_predecessors_are_folded_not_awaited() {
    use cubeprim::{PlaneOps, ScanAlgorithm, ScanTuning};
    let Some(c) = client() else { return };
    let mut r = rng(357);
    let (rows, n) = (3, 9_001);
    let data: Vec<f32> = (0..rows * n)
        .map(|_| r.random_range(-1.0f32..1.0))
        .collect();
    let x = DeviceTensor::<R>::from_slice(&c, &data, &[rows, n]).unwrap();
    let normal = ScanTuning {
        threads: 32,
        vectors_per_thread: 1,
        windows: 1,
        spins: 4,
        stage: false,
        async_copy: false,
    };
    let stalled = ScanTuning {
        spins: cubeprim::scan::STALL_PREFIXES | 2,
        ..normal
    };
    let mut ws = Workspace::new();
    for plane in [PlaneOps::Force, PlaneOps::Off] {
        for op in [ScanOp::Sum, ScanOp::Max] {
            for reverse in [false, true] {
                let mut base = ScanOptions::default()
                    .algorithm(ScanAlgorithm::DecoupledLookback)
                    .plane_ops(plane);
                base.reverse = reverse;
                let what = format!("{plane:?} {op:?} reverse {reverse}");
                let a: Vec<f32> = cubeprim::scan(&c, &x, 1, op, base.tuning(stalled), &mut ws)
                    .unwrap()
                    .to_vec(&c);
                let b: Vec<f32> = cubeprim::scan(&c, &x, 1, op, base.tuning(normal), &mut ws)
                    .unwrap()
                    .to_vec(&c);
                assert!(
                    a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "{what}: the folded prefixes changed the bits"
                );
                let want = cubeprim::cpu::scan(&data, &[rows, n], 1, op, base).unwrap();
                for row in 0..rows {
                    let mut run = 0.0f64;
                    for j in 0..n {
                        let i = if reverse {
                            row * n + n - 1 - j
                        } else {
                            row * n + j
                        };
                        run += data[i].abs() as f64;
                        assert!(
                            ((a[i] - want[i]) as f64).abs() <= 1e-5 * (run + 1.0),
                            "{what} at {i}: {} vs {}",
                            a[i],
                            want[i]
                        );
                    }
                }
            }
        }
        // With indices (cummax): ties and the index travel through the folded prefix too.
        let opts = ScanOptions::default()
            .algorithm(ScanAlgorithm::DecoupledLookback)
            .plane_ops(plane);
        let q: Vec<f32> = data.iter().map(|v| (v * 8.0).round()).collect();
        let xq = DeviceTensor::<R>::from_slice(&c, &q, &[rows, n]).unwrap();
        let (v, i) =
            cubeprim::scan_with_indices(&c, &xq, 1, ScanOp::Max, opts.tuning(stalled), &mut ws)
                .unwrap();
        let (wv, wi) =
            cubeprim::cpu::scan_with_indices(&q, &[rows, n], 1, ScanOp::Max, opts).unwrap();
        assert_eq!(v.to_vec::<f32>(&c), wv, "{plane:?}: cummax values");
        let got_i: Vec<i64> = match i.dtype {
            cubeprim::DType::I64 => i.to_vec::<i64>(&c),
            _ => i.to_vec::<i32>(&c).into_iter().map(i64::from).collect(),
        };
        assert_eq!(got_i, wi, "{plane:?}: cummax indices");
    }
}

/// A workspace is bound to the stream (thread, in cubecl) and device of its first use: cubecl
/// orders a buffer's uses across streams only against the stream that allocated it, so scratch
/// shared by two threads could be overwritten under a running kernel. Another thread's call is
/// a typed error, and the workspace still works on its own thread afterwards.
#[test]
fn a_workspace_refuses_another_thread() {
    let Some(c) = client() else { return };
    // Long enough for a look-back scan, which leases the workspace.
    let keys: Vec<u32> = (0..200_000u32).rev().collect();
    let x = DeviceTensor::<R>::from_slice(&c, &keys, &[keys.len()]).unwrap();
    let mut ws = Workspace::new();
    let scan = |ws: &mut Workspace<R>| {
        cubeprim::scan(&c, &x, 0, ScanOp::Sum, ScanOptions::default(), ws)
            .map(|y| y.to_vec::<u32>(&c))
    };
    let first = scan(&mut ws).unwrap();
    let other = std::thread::scope(|s| s.spawn(|| scan(&mut ws)).join().unwrap());
    assert!(
        matches!(other, Err(cubeprim::Error::WorkspaceMismatch(_))),
        "another thread's call: {:?}",
        other.map(|v| v.len())
    );
    assert_eq!(scan(&mut ws).unwrap(), first);
    // Each thread with its own workspace is the supported way.
    let own = std::thread::scope(|s| s.spawn(|| scan(&mut Workspace::new())).join().unwrap());
    assert_eq!(own.unwrap(), first);
}

/// Scratch past the device's largest buffer is a typed error before anything is allocated or
/// launched, and the client stays usable; a sort whose ping-pong keys would not fit beside the
/// rest of its scratch keeps them in buffers of their own and runs. Before the check, cubecl's
/// server thread panicked ("can't allocate buffer of size") and every later call on that
/// client failed (seen on an H100 through Vulkan with a sort of 2^28 keys; lavapipe's largest
/// buffer is 128 MiB, so an argsort of 2^24 keys reaches it here).
#[test]
fn scratch_past_the_largest_buffer_is_an_error() {
    use cubeprim::Error;
    let Some(c) = client() else { return };
    let max = cubeprim::max_buffer_bytes(&c);
    assert!(matches!(
        Workspace::<R>::try_with_capacity(&c, max + 1),
        Err(Error::BufferTooLarge { .. })
    ));
    let mut fixed = Workspace::<R>::with_capacity(&c, max + 1);
    let small = DeviceTensor::<R>::from_slice(&c, &[3u32, 1, 2], &[3]).unwrap();
    // A sort whose scratch is past the limit, keys from a one-element buffer (stride 0).
    let n = 1usize << 24;
    let one = DeviceTensor::<R>::from_slice(&c, &[7u32], &[1]).unwrap();
    let x = DeviceTensor::<R>::from_parts(one.handle.clone(), vec![n], vec![0], 0, one.dtype);
    // An argsort's keys do not chain through an output (it writes none): two ping-pong
    // regions of them (u64 words where it packs each key with its position). Inside the
    // workspace they would pass the largest buffer, so they are buffers of their own and the
    // workspace keeps the rest (before, the whole scratch was one buffer: `BufferTooLarge`
    // here, and for 2^28 u32 keys through Vulkan on an H100).
    let plan = cubeprim::argsort_plan(
        &c,
        &[n],
        cubeprim::DType::U32,
        IndexType::U32,
        false,
        SortOptions::default(),
    )
    .unwrap();
    let need = plan.workspace_bytes();
    let ping_pong = 2 * n * if plan.packed { 8 } else { 4 };
    if plan.temp.apart {
        let with_keys = cubeprim::workspace_bytes(plan.state_bytes, plan.temp.total + ping_pong);
        assert!(with_keys > max, "apart at {with_keys} bytes, largest {max}");
    }
    // On lavapipe (128 MiB) the two ping-pong regions alone fill the largest buffer.
    assert!(plan.temp.apart || ping_pong < max, "largest buffer {max}");
    assert!(need <= max, "{need} bytes of scratch, largest buffer {max}");
    let mut ws = Workspace::new();
    let got = cubeprim::argsort(&c, &x, IndexType::U32, SortOptions::default(), &mut ws);
    // Equal keys keep their order.
    let got = got.unwrap().to_vec::<u32>(&c);
    assert!(got.iter().enumerate().all(|(i, &j)| j == i as u32));
    // The sort of the same keys writes them: its keys ping-pong through its output.
    let got = cubeprim::sort(&c, &x, SortOptions::default(), &mut ws);
    assert!(got.unwrap().to_vec::<u32>(&c).iter().all(|&k| k == 7));
    // The client and both workspaces still work.
    for ws in [&mut ws, &mut Workspace::new()] {
        let y = cubeprim::sort(&c, &small, SortOptions::default(), ws).unwrap();
        assert_eq!(y.to_vec::<u32>(&c), vec![1, 2, 3]);
    }
    let long = DeviceTensor::<R>::from_slice(&c, &vec![1u32; 200_000], &[200_000]).unwrap();
    let y = cubeprim::scan(
        &c,
        &long,
        0,
        ScanOp::Sum,
        ScanOptions::default(),
        &mut fixed,
    );
    assert!(
        matches!(y, Err(Error::BufferTooLarge { .. })),
        "{:?}",
        y.map(|_| ())
    );
}

/// An op whose output would pass the runtime's largest buffer returns `BufferTooLarge` (it
/// used to panic in `DeviceTensor::empty`: `unique_consecutive` with i64 counts of 2^28 keys
/// through Vulkan on an H100), and the client still runs. The outputs: i64 indices of an
/// argsort, i64 counts of `unique_consecutive`, where the runtime has i64; inputs of half the
/// output's bytes, so the inputs fit.
#[test]
fn an_output_past_the_largest_buffer_is_an_error() {
    use cubeprim::{DType, Error};
    let Some(c) = client() else { return };
    let max = cubeprim::max_buffer_bytes(&c);
    if max > 1 << 30 || !cubeprim::supports_dtype(&c, DType::I64) {
        // A real GPU's limit (several GiB of input to reach it), or no i64 outputs.
        return;
    }
    let n = max / 8 + 1;
    let mut ws = Workspace::new();
    let keys = DeviceTensor::<R>::from_slice(&c, &vec![1i32; n], &[n]).unwrap();
    let got = cubeprim::argsort(&c, &keys, IndexType::I64, SortOptions::default(), &mut ws);
    assert!(
        matches!(got, Err(Error::BufferTooLarge { .. })),
        "argsort: {:?}",
        got.map(|_| ())
    );
    if cubeprim::scan::index_dtype(&c) == DType::I64 {
        let got = cubeprim::unique_consecutive(&c, &keys, n, false, true, &mut ws);
        assert!(
            matches!(got, Err(Error::BufferTooLarge { .. })),
            "unique_consecutive: {:?}",
            got.map(|_| ())
        );
    }
    drop(keys);
    let x = DeviceTensor::<R>::from_slice(&c, &[3i32, 1, 2], &[3]).unwrap();
    let i = cubeprim::argsort(&c, &x, IndexType::I64, SortOptions::default(), &mut ws).unwrap();
    assert_eq!(i.to_vec::<i64>(&c), vec![1, 2, 0]);
}

/// A tensor past the device's largest buffer is refused before cubecl sees it: `try_empty`
/// and `from_slice` return [`cubeprim::Error::BufferTooLarge`], `empty` panics on the caller's
/// thread, and the client stays usable. (On an H100 through Vulkan, `DeviceTensor::empty` of
/// 2^28 i64 positions, 2 GiB against a largest buffer of 2 GiB - 64 bytes, panicked cubecl's
/// server thread instead, and every later call of that client failed.)
#[test]
fn a_tensor_past_the_largest_buffer_is_refused_on_the_callers_thread() {
    use cubeprim::{DType, Error};
    let Some(c) = client() else { return };
    let max = cubeprim::max_buffer_bytes(&c);
    let n = max / 8 + 1;
    let got = DeviceTensor::<R>::try_empty(&c, &[n], DType::I64);
    assert!(
        matches!(got, Err(Error::BufferTooLarge { .. })),
        "{:?}",
        got.map(|_| ())
    );
    let empty = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        DeviceTensor::<R>::empty(&c, &[n], DType::I64)
    }));
    assert!(empty.is_err(), "empty of {n} i64 past {max} bytes");
    // An upload past the limit (where the host copy is small enough to make here).
    if max <= 1 << 30 {
        let bytes = vec![0u8; max + 1];
        let up = DeviceTensor::<R>::from_slice(&c, &bytes, &[max + 1]);
        assert!(
            matches!(up, Err(Error::BufferTooLarge { .. })),
            "{:?}",
            up.map(|_| ())
        );
    }
    // The client still allocates and runs.
    let ok = DeviceTensor::<R>::try_empty(&c, &[1000], DType::F32).unwrap();
    assert_eq!(ok.shape, vec![1000]);
    let x = DeviceTensor::<R>::from_slice(&c, &[1u32, 2, 3], &[3]).unwrap();
    let y = cubeprim::scan(
        &c,
        &x,
        0,
        ScanOp::Sum,
        ScanOptions::default(),
        &mut Workspace::new(),
    )
    .unwrap();
    assert_eq!(y.to_vec::<u32>(&c), vec![1, 3, 6]);
}
