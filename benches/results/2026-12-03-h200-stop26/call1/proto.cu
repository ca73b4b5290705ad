// Prototype of the 1-D f32 look-back scan (192 x 16 vec4 staged tile, the library's layout)
// to test where the tile publishes its aggregate. Compile-time switches:
//   EARLY=1: each unit sums its striped loads as they arrive; the tile total (warp sums, then
//            the six warp sums in order) is known at the first barrier, published at once, and
//            the first warp looks back (and publishes the inclusive prefix) before folding its
//            own chunk, so the look-back overlaps the other warps' folds.
//   EARLY=0: the library's order: fold, cube scan, publish the aggregate, look back.
//   PREFIXED=1: no look-back; prefixes read from an array (the bound).
// State: word 0 unused, tile k's value in words 1+2k, 2+2k as 16-bit halves with tag
// (epoch*4+status)<<16, as cubeprim's tile_state does.
#include <cuda_runtime.h>
#ifndef EARLY
#define EARLY 0
#endif
#ifndef PREFIXED
#define PREFIXED 0
#endif
#ifndef STAMPS
#define STAMPS 0
#endif
#define T 192
#define VPT 16
#define TV (T * VPT)
#define TE (TV * 4)
#define CHUNK (VPT * 4)
#ifndef PAD4
#define PAD4 0
#endif
#ifndef CPASYNC
#define CPASYNC 0
#endif
#ifdef MINB
#define BOUNDS __launch_bounds__(T, MINB)
#else
#define BOUNDS __launch_bounds__(T)
#endif
#if CPASYNC && (!PAD4 || EARLY)
#error "CPASYNC needs PAD4 and not EARLY"
#endif
#if PAD4
// four pad floats after each unit's chunk: 16-byte slots, conflict-free float4 accesses
#define SLOT(e) ((e) + 4 * ((e) / CHUNK))
#define STAGE_LEN (TE + 4 * (TE / CHUNK))
#else
#define SLOT(e) ((e) + (e) / CHUNK)
#define STAGE_LEN (TE + TE / CHUNK)
#endif
#define NW (T / 32)
#define MAXWIN 8

__device__ __forceinline__ unsigned ldv(const unsigned* p) { return *(volatile const unsigned*)p; }

__device__ __forceinline__ void publish(unsigned* state, unsigned tile, float v, unsigned status, unsigned epoch) {
    unsigned b = __float_as_uint(v);
    unsigned tag = (epoch * 4 + status) << 16;
    atomicExch(state + 1 + 2 * tile, tag | (b & 0xffff));
    atomicExch(state + 2 + 2 * tile, tag | (b >> 16));
}

__device__ __forceinline__ unsigned long long gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Warp 0: the exclusive prefix of `tile` (> 0): the left fold, oldest first, of the nearest
// inclusive prefix and the aggregates after it. Windows of 32 tiles that hold no prefix are
// parked in `lbv` (shared). Returns it in every lane; `rounds` counts polls.
__device__ __noinline__ float lookback(const unsigned* state, unsigned tile, unsigned epoch, unsigned lane,
                                       unsigned& rounds, float* lbv) {
    int end = (int)tile;  // this window: tiles end-32 .. end-1 (lane 31 = end-1)
    int nwin = 0;
    while (true) {
        int p = end - 32 + (int)lane;
        unsigned st = 2;
        float v = 0.f;
        rounds++;
        if (p >= 0) {
            unsigned w0 = ldv(state + 1 + 2 * p), w1 = ldv(state + 2 + 2 * p);
            unsigned t0 = w0 >> 16;
            bool ok = t0 == (w1 >> 16) && (t0 >> 2) == epoch && (t0 & 3) != 0;
            st = ok ? (t0 & 3) : 0;
            v = __uint_as_float((w0 & 0xffff) | (w1 << 16));
        }
        unsigned pre = __ballot_sync(~0u, st == 2);
        unsigned notready = __ballot_sync(~0u, st == 0);
        int k = pre ? 31 - __clz(pre) : -1;
        unsigned need = k >= 0 ? (k == 31 ? 0u : (~0u << (k + 1))) : ~0u;
        if (notready & need) continue;
        if (k < 0 && nwin < MAXWIN) {
            lbv[nwin * 32 + lane] = v;
            nwin++;
            end -= 32;
            continue;
        }
        if (k < 0) continue;  // out of parking: poll this window until a prefix shows
        __syncwarp();
        float run = 0.f;
        lbv[MAXWIN * 32 + lane] = v;
        __syncwarp();
        if (lane == 0) {
            run = lbv[MAXWIN * 32 + k];
            for (int l = k + 1; l < 32; ++l) run = run + lbv[MAXWIN * 32 + l];
            for (int w = nwin - 1; w >= 0; --w)
                for (int l = 0; l < 32; ++l) run = run + lbv[w * 32 + l];
        }
        return __shfl_sync(~0u, run, 0);
    }
}

extern "C" __global__ void BOUNDS scan(const float4* __restrict__ in, float4* out,
        unsigned* state, const float* __restrict__ prefixes, unsigned n_vec, unsigned epoch,
        unsigned* counters, unsigned long long* stamps) {
    extern __shared__ float smem[];
    float* stage = smem;
    float* uexcl = smem + STAGE_LEN;
    __shared__ float wsum[NW];
    __shared__ float wsum2[NW];
    __shared__ float s_prefix;
    __shared__ float lbv[(MAXWIN + 1) * 32];
    const unsigned t = threadIdx.x, lane = t & 31, w = t >> 5;
    const unsigned tile = blockIdx.x;
    const unsigned base = tile * TV;
#if STAMPS
    unsigned long long t0 = gtime();
#endif
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        unsigned j = k * T + t;
        unsigned q = base + j;
        unsigned e = j * 4;
#if CPASYNC
        float* dst = &stage[SLOT(e)];
        if (q < n_vec) {
            unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(in + q) : "memory");
        } else {
            *(float4*)dst = make_float4(0.f, 0.f, 0.f, 0.f);
        }
#else
        float4 v = q < n_vec ? in[q] : make_float4(0.f, 0.f, 0.f, 0.f);
#if PAD4
        *(float4*)&stage[SLOT(e)] = v;
#else
        stage[SLOT(e)] = v.x;
        stage[SLOT(e + 1)] = v.y;
        stage[SLOT(e + 2)] = v.z;
        stage[SLOT(e + 3)] = v.w;
#endif
#endif
#if EARLY
        acc = acc + ((v.x + v.y) + (v.z + v.w));
#endif
    }
#if CPASYNC
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
#if EARLY
#pragma unroll
    for (int o = 16; o; o >>= 1) acc = acc + __shfl_xor_sync(~0u, acc, o);
    if (lane == 0) wsum[w] = acc;
#endif
    __syncthreads();
#if STAMPS
    unsigned long long t1 = gtime();
    unsigned long long t2 = 0;
#endif
    unsigned rounds = 0;
    float prefix = 0.f;
#if EARLY && !PREFIXED
    {
        float total = wsum[0];
#pragma unroll
        for (int i = 1; i < NW; ++i) total = total + wsum[i];
        if (w == 0) {
            if (tile == 0) {
                if (lane == 0) publish(state, 0, total, 2, epoch);
            } else {
                if (lane == 0) publish(state, tile, total, 1, epoch);
                float ex = lookback(state, tile, epoch, lane, rounds, lbv);
                if (lane == 0) {
                    publish(state, tile, ex + total, 2, epoch);
                    s_prefix = ex;
                }
            }
#if STAMPS
            t2 = gtime();
#endif
        }
    }
#endif
    // fold the unit's blocked chunk in place (groups of 8), leaving running prefixes
    const unsigned first = t * CHUNK;
    float run = 0.f;
#if PAD4
    float4* ch = (float4*)&stage[SLOT(first)];
#pragma unroll
    for (int g = 0; g < CHUNK / 8; ++g) {
        float4 a = ch[2 * g], b = ch[2 * g + 1];
        if (g == 0) run = a.x; else { run = run + a.x; a.x = run; }
        run = run + a.y; a.y = run;
        run = run + a.z; a.z = run;
        run = run + a.w; a.w = run;
        run = run + b.x; b.x = run;
        run = run + b.y; b.y = run;
        run = run + b.z; b.z = run;
        run = run + b.w; b.w = run;
        ch[2 * g] = a;
        ch[2 * g + 1] = b;
    }
#else
#pragma unroll
    for (int g = 0; g < CHUNK / 8; ++g) {
        float r[8];
#pragma unroll
        for (int m = 0; m < 8; ++m) r[m] = stage[SLOT(first + g * 8 + m)];
#pragma unroll
        for (int m = 0; m < 8; ++m) {
            if (g == 0 && m == 0) run = r[0];
            else { run = run + r[m]; r[m] = run; }
        }
#pragma unroll
        for (int m = 0; m < 8; ++m)
            if (g > 0 || m > 0) stage[SLOT(first + g * 8 + m)] = r[m];
    }
#endif
    // cube exclusive scan of the unit totals
    float incl = run;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        float y = __shfl_up_sync(~0u, incl, o);
        if (lane >= o) incl = incl + y;
    }
    if (lane == 31) wsum2[w] = incl;
    __syncthreads();
    float woff = 0.f, total2 = 0.f;
#pragma unroll
    for (int i = 0; i < NW; ++i) {
        if (i < (int)w) woff = (i == 0) ? wsum2[0] : woff + wsum2[i];
        total2 = (i == 0) ? wsum2[0] : total2 + wsum2[i];
    }
    float ex_unit = (w == 0 ? 0.f : woff);
    float inwarp = __shfl_up_sync(~0u, incl, 1);
    if (lane > 0) ex_unit = (w == 0) ? inwarp : ex_unit + inwarp;
    uexcl[t] = ex_unit;
#if !EARLY && !PREFIXED
    if (w == 0) {
        if (tile == 0) {
            if (lane == 0) publish(state, 0, total2, 2, epoch);
        } else {
            if (lane == 0) publish(state, tile, total2, 1, epoch);
            float ex = lookback(state, tile, epoch, lane, rounds, lbv);
            if (lane == 0) {
                publish(state, tile, ex + total2, 2, epoch);
                s_prefix = ex;
            }
        }
#if STAMPS
        t2 = gtime();
#endif
    }
#endif
    __syncthreads();
#if PREFIXED
    prefix = prefixes[tile];
#else
    prefix = tile > 0 ? s_prefix : 0.f;
#endif
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        unsigned j = k * T + t;
        unsigned q = base + j;
        if (q < n_vec) {
            float p = prefix + uexcl[j / VPT];
            unsigned e = j * 4;
            float4 o;
#if PAD4
            float4 sv = *(const float4*)&stage[SLOT(e)];
            o.x = p + sv.x;
            o.y = p + sv.y;
            o.z = p + sv.z;
            o.w = p + sv.w;
#else
            o.x = p + stage[SLOT(e)];
            o.y = p + stage[SLOT(e + 1)];
            o.z = p + stage[SLOT(e + 2)];
            o.w = p + stage[SLOT(e + 3)];
#endif
            out[q] = o;
        }
    }
    if (t == 0) atomicAdd(counters, rounds);
#if STAMPS
    if (t == 0) {
        unsigned long long t3 = gtime();
        stamps[4 * tile + 0] = t0;
        stamps[4 * tile + 1] = t1;
        stamps[4 * tile + 2] = t2;
        stamps[4 * tile + 3] = t3;
    }
#endif
}
