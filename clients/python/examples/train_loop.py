#!/usr/bin/env python3
"""A training loop that records its run as evidence for the placement service.

    PYTHONPATH=build/release/proto/python:clients/python \\
    python3 clients/python/examples/train_loop.py --server 127.0.0.1:50051 \\
        --pool l40s-adapters --sku L40S-PCIE-48GB --steps 50

With PyTorch and a GPU it trains a small MLP and the recorder reads
torch.cuda.max_memory_allocated() itself; without them it simulates the steps
(and states their memory) so the example runs anywhere.
"""

import argparse
import random
import sys
import time

from placement_client import RunRecorder

# The recipe this job is: the settings that decide its memory and step time.
RECIPE = {
    "model": "Llama-3.1-8B",
    "method": "lora",
    "lora_rank": 16,
    "target_modules": ["q", "v"],
    "sequence_length": 2048,
    "micro_batch_size": 4,
    "gradient_accumulation_steps": 8,
    "precision": "bf16",
    "optimizer": "adamw",
    "activation_checkpointing": True,
    "flash_attention": True,
    "gpu_count": 1,
    "parallelism": "single",
}
TOKENS_PER_STEP = 4 * 2048 * 8


def make_step():
    """One optimizer step; returns the loss."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                    torch.nn.Linear(4096, 1024)).cuda()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            x = torch.randn(64, 1024, device="cuda")
            loss = (model(x) - x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch.cuda.synchronize()
            return loss.item(), None  # the recorder reads torch's peak itself
        return step

    def simulated():
        time.sleep(0.01)
        return 2.0 + random.random(), 31.5  # loss, allocated GB
    return simulated


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=None)
    parser.add_argument("--pool", required=True)
    parser.add_argument("--sku", default=None,
                        help="exact catalog SKU (default: placement-agent detect)")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--plan_id", default="")
    parser.add_argument("--spool_dir", default=None)
    args = parser.parse_args()

    step = make_step()
    with RunRecorder(args.server, pool=args.pool, sku=args.sku, recipe=RECIPE,
                     plan_id=args.plan_id, spool_dir=args.spool_dir) as rec:
        for _ in range(args.steps):
            start = time.monotonic()
            loss, memory_gb = step()
            rec.step(step_time_s=time.monotonic() - start,
                     tokens=TOKENS_PER_STEP, loss=loss,
                     memory_allocated_gb=memory_gb)
    print(f"run {rec.run_id}: {'uploaded' if rec.uploaded else 'spooled'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
