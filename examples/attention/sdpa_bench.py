"""PyTorch's scaled_dot_product_attention on the shapes of examples/attention (run on the
GPU machine beside the Rust benchmark), with the flash (FlashAttention-2) and cuDNN back
ends: batch 16 x heads 16 at head dim 128, batch 32 x heads 32 at head dim 64 and batch
16 x heads 16 at head dim 256, bf16 and f16, sequence 512..16384, causal and not.
TFLOP/s counts FlashAttention's way (4*B*H*S^2*D, halved for causal); CUDA events, median
of 20 runs after 5 warm-ups.

    python3 sdpa_bench.py [--csv FILE] [--dtypes bf16,f16] [--dims 128,64,256]

--csv writes the rows in the columns of `attention --csv` (impl = flash or cudnn, no KV
tile), which plot.py reads beside cudajit's."""
import argparse

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

CONFIGS = {128: (16, 16), 64: (32, 32), 256: (16, 16)}
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
SEQUENCES = (512, 1024, 2048, 4096, 8192, 16384)
BACKENDS = (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION))


def median_ms(fn, runs=20, warmup=5):
    times = []
    for i in range(warmup + runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv")
    parser.add_argument("--dtypes", default="bf16,f16")
    parser.add_argument("--dims", default="128,64,256")
    args = parser.parse_args()
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        print("impl,dtype,dim,kv,batch,heads,seq,causal,ms,tflops", file=csv)
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| backend | dtype | head dim | batch x heads | seq | causal | ms | TFLOP/s |")
    print("| --- | --- | ---: | --- | ---: | --- | ---: | ---: |")
    for dtype in args.dtypes.split(","):
        for dim in map(int, args.dims.split(",")):
            batch, heads = CONFIGS[dim]
            for seq in SEQUENCES:
                q, k, v = (
                    torch.randn(batch, heads, seq, dim, device="cuda", dtype=DTYPES[dtype])
                    for _ in range(3)
                )
                for causal in (False, True):
                    flops = 4 * batch * heads * seq * seq * dim / (2 if causal else 1)
                    for name, backend in BACKENDS:
                        where = f"| {name} | {dtype} | {dim} | {batch} x {heads} | {seq} | {causal} |"
                        try:
                            with sdpa_kernel(backend):
                                ms = median_ms(
                                    lambda: torch.nn.functional.scaled_dot_product_attention(
                                        q, k, v, is_causal=causal
                                    )
                                )
                        except RuntimeError as error:
                            print(f"{where} unavailable: {str(error).splitlines()[0]} | |")
                            continue
                        tflops = flops / ms / 1e9
                        print(f"{where} {ms:.3f} | {tflops:.1f} |")
                        if csv:
                            print(
                                f"{name},{dtype},{dim},,{batch},{heads},{seq},{str(causal).lower()},{ms:.4f},{tflops:.2f}",
                                file=csv,
                            )
                del q, k, v
    if csv:
        csv.close()


if __name__ == "__main__":
    main()
