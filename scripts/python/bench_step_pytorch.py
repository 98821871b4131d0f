"""PyTorch's side of the training-step benchmark (benches/training_step.rs), and the table.

The same three models, batch sizes and step as saturate's bench (benches/common/mod.rs):
MLP 8-16-4 (batch 64), MLP 784-128-10 (batch 128), SmallCNN(16) on 1x28x28 (batch 128: conv3x3
1->16 pad 1, relu, maxpool 2, conv3x3 16->32 pad 1, relu, maxpool 2, dropout 0.3, linear
1568->10); one step = forward, mean cross-entropy, backward, plain SGD `p -= lr * g` with member
i's learning rate 0.01 * (i + 1). K members trained:

- sequential: K separate nn.Modules stepped one after another;
- vmap: torch.func.vmap over the K stacked parameter sets (functional_call, dropout
  randomness "different");
- grouped (CNN only): ONE model whose convolutions hold the K members side by side (first
  convolution K*16 output channels on the shared input, second groups=K), a batched final
  linear layer, the K losses summed (each member's gradient is its own).

usage: bench_step_pytorch.py [--threads 2] [--steps 20] [--ks 1,8] [--saturate divan.txt]
                             [--device cuda] [--gpu-check results.csv]
With --saturate, the divan output of `cargo bench --bench training_step` is read and ONE table
is printed with both sides and the ratios. With --device cuda the arms run on the GPU, each
timed like the bench's SATURATE_PROFILE mode (one untimed step, then the mean of --steps steps
with the device synchronised before the clock stops); --gpu-check reads saturate's arms from
scripts/gpu-check.sh's results.csv instead of divan's output.
"""

import argparse
import copy
import os
import re
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

MODELS = {
    # name: (features, batch, classes)
    "mlp8": (8, 64, 4),
    "mlp784": (784, 128, 10),
    "cnn": (784, 128, 10),
}
LABELS = {"mlp8": "MLP 8-16-4", "mlp784": "MLP 784-128-10", "cnn": "SmallCNN(16)"}
# The divan bench functions of benches/training_step.rs.
DIVAN = {
    "mlp8": ("mlp_8_16_4_sequential", "mlp_8_16_4_grouped"),
    "mlp784": ("mlp_784_128_10_sequential", "mlp_784_128_10_grouped"),
    "cnn": ("cnn_sequential", "cnn_grouped"),
}


class Mlp(nn.Module):
    def __init__(self, inp, hidden, out):
        super().__init__()
        self.hidden = nn.Linear(inp, hidden)
        self.out = nn.Linear(hidden, out)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.dropout = nn.Dropout(0.3)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = x.reshape(x.shape[0], 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(x)
        return self.fc(x.flatten(1))


class GroupedCnn(nn.Module):
    """K SmallCNNs as one model: grouped convolutions, a batched final linear layer."""

    def __init__(self, k):
        super().__init__()
        self.k = k
        self.conv1 = nn.Conv2d(1, 16 * k, 3, padding=1)
        self.conv2 = nn.Conv2d(16 * k, 32 * k, 3, padding=1, groups=k)
        self.dropout = nn.Dropout(0.3)
        self.fc_w = nn.Parameter(torch.randn(k, 32 * 7 * 7, 10) * (32 * 7 * 7) ** -0.5)
        self.fc_b = nn.Parameter(torch.zeros(k, 10))

    def forward(self, x):
        n = x.shape[0]
        x = x.reshape(n, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(x).reshape(n, self.k, 32 * 7 * 7).transpose(0, 1)  # [K, N, 1568]
        return torch.bmm(x, self.fc_w) + self.fc_b[:, None, :]  # [K, N, 10]


def make(model):
    return {"mlp8": lambda: Mlp(8, 16, 4), "mlp784": lambda: Mlp(784, 128, 10), "cnn": SmallCnn}[
        model
    ]()


def lrs(k):
    return [0.01 * (i + 1) for i in range(k)]


DEVICE = torch.device("cpu")


def sequential_step(k):
    def setup(model, x, y):
        nets = [make(model).to(DEVICE) for _ in range(k)]
        rates = lrs(k)

        def step():
            for net, lr in zip(nets, rates):
                loss = F.cross_entropy(net(x), y)
                params = list(net.parameters())
                grads = torch.autograd.grad(loss, params)
                with torch.no_grad():
                    for p, g in zip(params, grads):
                        p.sub_(lr * g)

        return step

    return setup


def vmap_step(k):
    def setup(model, x, y):
        nets = [make(model).to(DEVICE) for _ in range(k)]
        params, buffers = stack_module_state(nets)
        base = copy.deepcopy(nets[0]).to("meta")
        rate = torch.tensor(lrs(k), device=DEVICE)

        def loss_one(p, b, x, y):
            return F.cross_entropy(functional_call(base, (p, b), (x,)), y)

        batched = vmap(loss_one, in_dims=(0, 0, None, None), randomness="different")
        names = list(params)

        def step():
            losses = batched(params, buffers, x, y)
            grads = torch.autograd.grad(losses.sum(), [params[n] for n in names])
            with torch.no_grad():
                for n, g in zip(names, grads):
                    p = params[n]
                    p.sub_(rate.reshape([k] + [1] * (p.dim() - 1)) * g)

        return step

    return setup


def grouped_step(k):
    def setup(model, x, y):
        assert model == "cnn"
        net = GroupedCnn(k).to(DEVICE)
        rate = torch.tensor(lrs(k), device=DEVICE)
        # Each parameter's member axis and how to broadcast the K rates over it.
        member_rate = {
            "conv1.weight": rate.repeat_interleave(16).reshape(-1, 1, 1, 1),
            "conv1.bias": rate.repeat_interleave(16),
            "conv2.weight": rate.repeat_interleave(32).reshape(-1, 1, 1, 1),
            "conv2.bias": rate.repeat_interleave(32),
            "fc_w": rate.reshape(k, 1, 1),
            "fc_b": rate.reshape(k, 1),
        }
        named = list(net.named_parameters())

        def step():
            logits = net(x)  # [K, N, 10]
            loss = F.cross_entropy(logits.reshape(-1, 10), y.repeat(k), reduction="sum")
            loss = loss / x.shape[0]  # the sum of the K members' mean losses
            grads = torch.autograd.grad(loss, [p for _, p in named])
            with torch.no_grad():
                for (n, p), g in zip(named, grads):
                    p.sub_(member_rate[n] * g)

        return step

    return setup


def time_steps(step, steps, warmup=3):
    if DEVICE.type == "cuda":
        # As the bench's SATURATE_PROFILE mode times a GPU: one untimed step (and the warm-up
        # steps), then the mean of `steps` steps with the device synchronised at both ends.
        for _ in range(warmup):
            step()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e3 / steps
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


UNITS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_divan(path):
    """{(bench function, K): median ms} from divan's text output."""
    out = {}
    current = None
    time_re = r"([0-9.]+)\s*(ns|µs|us|ms|s)\b"
    for line in open(path, encoding="utf-8"):
        name = re.match(r"^[├╰]─ (\w+)\s", line)
        if name:
            current = name.group(1)
            continue
        arg = re.match(r"^│?\s*[├╰]─ (\d+)\s+(.*)$", line)
        if arg and current:
            times = re.findall(time_re, arg.group(2))
            if len(times) >= 3:  # fastest, slowest, median, mean
                value, unit = times[2]
                out[(current, int(arg.group(1)))] = float(value) * UNITS[unit]
    return out


def parse_gpu_check(path):
    """{(bench function, K): ms per step} from scripts/gpu-check.sh's results.csv."""
    out = {}
    with open(path, encoding="utf-8") as f:
        head = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(head, line.strip().split(",")))
            if row.get("status") != "ok" or row.get("model") not in DIVAN:
                continue
            seq_fn, grp_fn = DIVAN[row["model"]]
            name = grp_fn if row["arm"] == "grouped" else seq_fn
            out[(name, int(row["K"]))] = float(row["ms_per_step"])
    return out


def fmt(ms):
    if ms is None:
        return "-"
    return f"{ms:,.2f}" if ms < 10 else f"{ms:,.1f}" if ms < 100 else f"{ms:,.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20, help="timed steps per arm (median)")
    ap.add_argument("--cnn-steps", type=int, default=7, help="timed steps per CNN arm")
    ap.add_argument("--ks", default="1,8")
    ap.add_argument("--models", default="mlp8,mlp784,cnn")
    ap.add_argument("--saturate", help="divan output of cargo bench --bench training_step")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--gpu-check", help="results.csv of scripts/gpu-check.sh (saturate's arms)")
    args = ap.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    ks = [int(k) for k in args.ks.split(",")]
    torch_ms = {}
    for model in args.models.split(","):
        features, n, classes = MODELS[model]
        x = torch.randn(n, features).to(DEVICE)
        y = torch.randint(0, classes, (n,)).to(DEVICE)
        steps = args.cnn_steps if model == "cnn" else args.steps
        for k in ks:
            arms = {"sequential": sequential_step(k), "vmap": vmap_step(k)}
            if model == "cnn":
                arms["grouped"] = grouped_step(k)
            for arm, setup in arms.items():
                ms = time_steps(setup(model, x, y), steps)
                torch_ms[(model, k, arm)] = ms
                print(f"torch {model} K={k} {arm}: {ms:.3f} ms", file=sys.stderr, flush=True)
    sat = parse_divan(args.saturate) if args.saturate else {}
    if args.gpu_check:
        sat.update(parse_gpu_check(args.gpu_check))
    if DEVICE.type == "cuda":
        where = f"{torch.cuda.get_device_name(DEVICE)}; means of {args.steps} (CNN: {args.cnn_steps}) steps"
    else:
        where = (
            f"{args.threads} threads, CPU capability {torch.backends.cpu.get_cpu_capability()}"
            f" (MKL_ENABLE_INSTRUCTIONS={os.environ.get('MKL_ENABLE_INSTRUCTIONS', 'unset')},"
            f" ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA', 'unset')}); medians"
        )
    print(
        f"\ntorch {torch.__version__}, {where} in ms per training step "
        f"(forward, cross-entropy, backward, SGD) of K members\n"
    )
    head = (
        "| model | K | PyTorch sequential | PyTorch vmap | PyTorch grouped conv "
        "| saturate sequential (Burn) | saturate grouped | grouped / best PyTorch |"
    )
    print(head)
    print("|---" * 8 + "|")
    for model in args.models.split(","):
        for k in ks:
            t = [torch_ms.get((model, k, a)) for a in ("sequential", "vmap", "grouped")]
            seq_fn, grp_fn = DIVAN[model]
            s_seq, s_grp = sat.get((seq_fn, k)), sat.get((grp_fn, k))
            best = min(v for v in t if v is not None)
            ratio = f"{s_grp / best:.2f}x" if s_grp is not None else "-"
            print(
                f"| {LABELS[model]} | {k} | {fmt(t[0])} | {fmt(t[1])} | {fmt(t[2])} "
                f"| {fmt(s_seq)} | {fmt(s_grp)} | {ratio} |"
            )


if __name__ == "__main__":
    main()
