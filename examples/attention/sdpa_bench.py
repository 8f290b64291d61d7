"""PyTorch's scaled_dot_product_attention on the shapes of examples/attention (run on the
GPU machine beside the Rust benchmark): bf16, batch 16 x heads 16 at head dim 128 and batch
32 x heads 32 at head dim 64, sequence 512..16384, causal and not, with the flash
(FlashAttention-2) and cuDNN back ends.
TFLOP/s counts FlashAttention's way (4*B*H*S^2*D, halved for causal); CUDA events, median
of 20 runs after 5 warm-ups."""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

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

print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
print("| backend | head dim | seq | causal | ms | TFLOP/s |\n| --- | ---: | ---: | --- | ---: | ---: |")
for dim, batch, heads in ((128, 16, 16), (64, 32, 32)):
    for causal in (False, True):
        for seq in (512, 1024, 2048, 4096, 8192, 16384):
            q, k, v = (torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            flops = 4 * batch * heads * seq * seq * dim / (2 if causal else 1)
            for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                try:
                    with sdpa_kernel(backend):
                        ms = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
                    print(f"| {name} | {dim} | {seq} | {causal} | {ms:.3f} | {flops / ms / 1e9:.1f} |")
                except RuntimeError as error:
                    print(f"| {name} | {dim} | {seq} | {causal} | unavailable: {str(error).splitlines()[0]} | |")
            del q, k, v
