"""A short PyTorch workload for `sightline capture` (run by run_gpu_tests.sh when torch and a GPU
are present): a few matmuls and a ReLU inside NVTX ranges, on the default stream and a side stream."""
import torch

assert torch.cuda.is_available(), "no CUDA device"
x = torch.randn(1024, 1024, device="cuda")
side = torch.cuda.Stream()
for step in range(5):
    with torch.cuda.nvtx.range(f"step {step}"):
        y = torch.relu(x @ x)
        with torch.cuda.stream(side):
            z = x.sum()
        torch.cuda.current_stream().wait_stream(side)
        x = y / (y.norm() + z.abs() + 1)
torch.cuda.synchronize()
print("done", float(x.sum()))
