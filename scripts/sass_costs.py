"""The fixed machine figures of scripts/sass-report.py's model, with sources.

Committed before the kernel work it judges (issue 37) so that the model
cannot be tuned to the result: change a figure only with a new source cited
beside it, never to move an estimate.

Cycles are SM clock cycles. "Per SMSP" figures are per SM sub-partition
(4 per SM on sm_80 and sm_90, each with one warp scheduler that dispatches
one warp instruction per cycle); "per SM" figures are pipes the four
sub-partitions share (shared memory, L1).

Sources:
  [A100]  NVIDIA A100 Tensor Core GPU Architecture (whitepaper, 2020):
          108 SMs, 1410 MHz boost, 312 TFLOP/s dense f16/bf16 tensor,
          156 TF32, 19.5 f32 FMA; 64 FP32 lanes per SM; 4 SMSPs per SM.
  [H100]  NVIDIA H100 Tensor Core GPU Architecture (whitepaper, 2022), SXM5:
          132 SMs, 989.4 TFLOP/s dense f16/bf16 tensor (wgmma), 494.7 TF32,
          66.9 f32 FMA; 128 FP32 lanes per SM; 4 SMSPs per SM.
  [LUO]   W. Luo et al., "Benchmarking and Dissecting the Nvidia Hopper GPU
          Architecture", arXiv:2402.13499 (2024): pointer-chase latencies of
          L2 hits (about 260 cycles on A100 and H800) and DRAM (about 470),
          shared memory (about 30); mma.sync on Hopper measured well below
          wgmma's dense peak.
  [JIA]   Z. Jia et al., "Dissecting the Ampere GPU architecture through
          microbenchmarking" (GTC 2021): dependent-issue latencies of about
          4 cycles for FFMA and integer ALU ops, about 30 for HMMA.16816,
          about 30 for LDS/LDSM.
  [SMEM]  CUDA C++ Best Practices Guide, "Shared Memory": 32 banks of 4
          bytes, one 128-byte wavefront per cycle per SM; a wider or
          conflicting access takes one cycle per wavefront.
  [L1TEX] Nsight Compute Kernel Profiling Guide, "L1TEX": one request per
          cycle in the tag stage, 128 bytes (4 sectors) per data-stage cycle.

Derived rates (FLOP per cycle = peak / (SMs x clock)):
  A100 f16: 312e12 / (108 x 1.41e9) = 2048 per SM = 512 per SMSP, so one
  HMMA.16816 (2 x 16 x 8 x 16 = 4096 FLOP) every 8 cycles per SMSP; TF32
  half that rate.  H100 wgmma f16: 989.4e12 / (132 x 1.83e9) = 4096 per SM
  (1.83 GHz is the clock at which the whitepaper's tensor peak holds; we
  convert every H100 cycle count to time at it, which is conservative for
  FMA work quoted at 1.98 GHz).  H100 mma.sync: ASSUMED at A100's per-SM
  rate per cycle, half wgmma's ([LUO] measures it below wgmma; the first
  GPU day's ncu figures did not isolate it): to be measured, then cited.
"""

# Per architecture: what converts cycles to time, and the pipes' rates.
CHIPS = {
    "sm_80": {
        "name": "A100 SXM4",
        "sms": 108,                  # [A100]
        "clock_ghz": 1.41,           # [A100]
        "smsp_per_sm": 4,            # [A100]
        # Tensor FLOP per cycle per SMSP by multiplicand type, mma.sync.
        "mma_flop_per_smsp": {"f16": 512, "bf16": 512, "tf32": 256},  # [A100]
        "wgmma_flop_per_sm": None,   # no wgmma before sm_90
        "ffma_cycles": 2,            # 16 FP32 lanes per SMSP [A100]
        "latency": {"global": 260, "shared": 30, "mma": 30, "alu": 4,
                    "barrier": 20, "special": 20},  # [LUO], [JIA]
    },
    "sm_90": {
        "name": "H100 SXM5",
        "sms": 132,                  # [H100]
        "clock_ghz": 1.83,           # [H100], see "Derived rates"
        "smsp_per_sm": 4,            # [H100]
        "mma_flop_per_smsp": {"f16": 512, "bf16": 512, "tf32": 256},  # ASSUMED, [LUO]
        "wgmma_flop_per_sm": {"f16": 4096, "bf16": 4096, "tf32": 2048},  # [H100]
        "ffma_cycles": 1,            # 32 FP32 lanes per SMSP [H100]
        "latency": {"global": 265, "shared": 30, "mma": 30, "alu": 4,
                    "barrier": 20, "special": 20},  # [LUO], [JIA]
    },
}
# sm_90a runs the sm_90 figures (the same chip; "a" only unlocks wgmma/TMA).
CHIPS["sm_90a"] = CHIPS["sm_90"]

# Shared memory and L1: bytes per SM per cycle ([SMEM], [L1TEX]).
WAVEFRONT_BYTES = 128

# Issue: one warp instruction per cycle per SMSP (Volta and later; [A100],
# [H100]).
ISSUE_CYCLES = 1
