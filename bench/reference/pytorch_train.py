#!/usr/bin/python3
"""The PyTorch side of `strata_bench train`: the same models, batch, optimizer, precision and
synthetic data, timed the same way, printed in the same format (one table from both).

Not part of the build. CPU: Debian's python3-torch (1.13) is enough. GPU: any PyTorch with CUDA
(written against 1.13 and 2.x APIs alike).
  /usr/bin/python3 bench/reference/pytorch_train.py --model resnet20 --batch 128 --steps 20
  python3 bench/reference/pytorch_train.py --model resnet56 --device gpu --dtype bf16 --steps 100
  python3 bench/reference/pytorch_train.py --model mnist_cnn --device gpu --epoch
  RANK=r WORLD_SIZE=2 /usr/bin/python3 bench/reference/pytorch_train.py --ddp --threads 1 \
      --init_method file:///tmp/ddp_store --batch 64 --steps 50      (r = 0 and 1, together)

Models (the parameter counts printed must equal strata_bench's):
  mnist_cnn  apps/mnist's seed_cnn: Conv2d(1, 32, 3) + ReLU -> Flatten -> Linear(21632, 128) +
             ReLU -> Linear(128, 10), cross-entropy on the logits; Keras' glorot_uniform / zero
             initialisation; default optimizer SGD(0.01). 2,770,634 parameters.
  resnet<N>  apps/resnet_cifar/resnet_model.cc (TensorFlow's official resnet_cifar_model), N in
             20, 32, 44, 56, 110: conv3x3(16) -> BN -> ReLU, 3 stages of (N - 2) / 6 basic
             blocks (16, 32, 64 filters; each stage's first block has a 1x1 conv + BN projection
             shortcut, stride 2 in stages 3 and 4), global average pooling, Linear(64, 10).
             No conv biases; BN momentum 0.997 in Keras' convention (PyTorch's 0.003) and eps
             1e-5; conv kernels he_normal (Keras' truncated normal), the classifier N(0, 0.01).
             L2 2e-4 on every conv kernel and the classifier's kernel and bias: Keras adds
             2e-4 * sum(w^2) to the loss, whose gradient 4e-4 * w is what SGD's weight_decay=4e-4
             adds to those parameters' gradients (PyTorch's idiomatic, cheaper way to the same
             update). Strata's softmax head + sparse categorical cross-entropy on probabilities is
             cross_entropy on the logits here. Default optimizer SGD(0.1, momentum 0.9). ResNet-20:
             274,362 parameters (272,762 trainable; the rest are BN's running mean and variance).

Timing, as strata_bench's default `fit` loop: warm-up steps, then the timed steps with the host
waiting for the device (torch.cuda.synchronize) only every --sync_every steps, the clock read
there; the loss is summed on the device and read once at the end (--sync_every 1 waits after
every step, like strata_bench --loop train_on_batch). --epoch times one epoch over
--epoch_samples synthetic samples held on the host and shuffled, each batch gathered on the host
and copied through pinned memory (what Strata's fit does with host tensors); --epoch_data device
keeps the samples on the GPU instead (PyTorch's best case).
--dtype bf16|fp16 runs the forward pass and loss under torch.autocast (the weights stay float32,
as Keras' mixed_bfloat16 / mixed_float16 policies), fp16 with a GradScaler (dynamic loss
scaling, initial scale 2^15 as Keras' LossScaleOptimizer). On a GPU the model and inputs are
channels_last (NHWC, Strata's layout), cudnn.benchmark is on, and float32 convolutions and
matmuls may use TF32 tensor cores as in Strata (and TensorFlow) by default, unless turned off.

--ddp: one process of a DistributedDataParallel job (torch.distributed, gloo backend; the peer of
strata_bench --strategy multi_worker_mirrored): RANK and WORLD_SIZE from the environment, the
rendezvous through --init_method (env://: MASTER_ADDR and MASTER_PORT; or file://PATH, a file
none of the processes has yet). --batch is each process's batch (weak scaling), its synthetic
samples seeded by its rank; DDP as it is usually run (25 MB gradient buckets all-reduced during
the backward pass, BatchNorm buffers broadcast from rank 0 every step). Every timed group ends
with a barrier, so rank 0's clock covers the slowest rank; only rank 0 prints, and its samples/s
are the global ones (batch x WORLD_SIZE per step).
"""
import argparse
import contextlib
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

BN_MOMENTUM = 1.0 - 0.997  # Keras' BATCH_NORM_DECAY 0.997 is PyTorch's momentum 0.003
BN_EPSILON = 1e-5
L2_WEIGHT_DECAY = 2e-4     # Keras' l2(2e-4) penalty: 2e-4 * sum(w^2)
RESNET_SIZES = (20, 32, 44, 56, 110)


def keras_he_normal_(w):
    """Keras' he_normal: a normal with stddev sqrt(2 / fan_in) truncated at two stddevs (the
    stddev divided by 0.8796..., the truncated distribution's own stddev, to keep the variance)."""
    fan_in = w[0].numel()  # in_channels * kh * kw (conv) or in_features (linear)
    std = math.sqrt(2.0 / fan_in) / 0.87962566103423978
    nn.init.trunc_normal_(w, 0.0, std, -2.0 * std, 2.0 * std)


def bn(channels):
    return nn.BatchNorm2d(channels, eps=BN_EPSILON, momentum=BN_MOMENTUM)


def conv(cin, cout, kernel, stride):
    # Keras' "same" padding: the output is ceil(input / stride) wide, as with kernel // 2 here.
    c = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False)
    keras_he_normal_(c.weight)
    return c


class Block(nn.Module):
    """ResNet v1 basic block: conv3x3 -> BN -> ReLU -> conv3x3 -> BN, + shortcut, ReLU; the
    shortcut of a stage's first block is a 1x1 conv + BN projection."""

    def __init__(self, cin, cout, stride, project):
        super().__init__()
        self.conv1, self.bn1 = conv(cin, cout, 3, stride), bn(cout)
        self.conv2, self.bn2 = conv(cout, cout, 3, 1), bn(cout)
        self.proj = nn.Sequential(conv(cin, cout, 1, stride), bn(cout)) if project else None

    def forward(self, x):
        shortcut = self.proj(x) if self.proj is not None else x
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + shortcut)


def resnet(size):
    blocks = (size - 2) // 6
    layers = [conv(3, 16, 3, 1), bn(16), nn.ReLU()]
    cin = 16
    for stage, cout in enumerate([16, 32, 64]):
        for b in range(blocks):
            layers.append(Block(cin, cout, 2 if (b == 0 and stage > 0) else 1, project=b == 0))
            cin = cout
    fc = nn.Linear(64, 10)
    nn.init.normal_(fc.weight, 0.0, 0.01)
    nn.init.zeros_(fc.bias)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), fc]
    return nn.Sequential(*layers)


def seed_cnn():
    model = nn.Sequential(nn.Unflatten(1, (1, 28)), nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Flatten(),
                          nn.Linear(26 * 26 * 32, 128), nn.ReLU(), nn.Linear(128, 10))
    for m in model.modules():  # Keras' defaults: glorot_uniform kernels, zero biases
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return model


def param_counts(model):
    """(total, trainable) as Keras counts them: BN's running mean and variance are the
    non-trainable weights (num_batches_tracked has no Keras counterpart)."""
    trainable = sum(p.numel() for p in model.parameters())
    buffers = sum(b.numel() for name, b in model.named_buffers()
                  if not name.endswith("num_batches_tracked"))
    return trainable + buffers, trainable


def make_optimizer(name, model, lr, decayed):
    """SGD / SGD with momentum 0.9 / Adam(1e-3); L2 as weight decay on the `decayed` parameters."""
    ids = {id(p) for p in decayed}
    groups = [{"params": [p for p in model.parameters() if id(p) in ids],
               "weight_decay": 2.0 * L2_WEIGHT_DECAY},
              {"params": [p for p in model.parameters() if id(p) not in ids], "weight_decay": 0.0}]
    groups = [g for g in groups if g["params"]]
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr)
    if name == "sgd_momentum":
        return torch.optim.SGD(groups, lr=lr, momentum=0.9)
    return torch.optim.Adam(groups, lr=1e-3)


def make_grad_scaler():
    # torch.amp.GradScaler("cuda") from 2.3 on; torch.cuda.amp.GradScaler before (deprecated since).
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda", init_scale=2.0 ** 15)
    return torch.cuda.amp.GradScaler(init_scale=2.0 ** 15)


def set_tf32(enabled):
    """TF32 for float32 convolutions and matmuls: PyTorch 2.9's fp32_precision settings where they
    exist (the allow_tf32 flags are deprecated there), the allow_tf32 flags before."""
    matmul = torch.backends.cuda.matmul
    # hasattr cannot tell: older versions' matmul object raises AssertionError for unknown names.
    major, minor = (int(v) for v in torch.__version__.split(".")[:2])
    if (major, minor) >= (2, 9):
        mode = "tf32" if enabled else "ieee"
        matmul.fp32_precision = mode
        torch.backends.cudnn.conv.fp32_precision = mode
    else:
        matmul.allow_tf32 = enabled
        torch.backends.cudnn.allow_tf32 = enabled


def with_commas(n):
    return f"{n:,}"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["mnist_cnn"] + [f"resnet{n}" for n in RESNET_SIZES],
                   default="resnet20")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=10, help="timed steps (ignored with --epoch)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--device", choices=["cpu", "gpu", "cuda"], default="cpu",
                   help="gpu (or cuda): cuda:0")
    p.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32")
    p.add_argument("--optimizer", choices=["sgd", "sgd_momentum", "adam"], default=None,
                   help="default: sgd for mnist_cnn, sgd_momentum for the ResNets")
    p.add_argument("--sync_every", type=int, default=10,
                   help="steps between host waits for the device (strata_bench's default)")
    p.add_argument("--epoch", action="store_true",
                   help="time one epoch over --epoch_samples shuffled samples")
    p.add_argument("--epoch_samples", type=int, default=0,
                   help="0: 60,000 (mnist_cnn) or 50,000 (ResNets), the real training sets")
    p.add_argument("--epoch_data", choices=["host", "device"], default="host",
                   help="where the --epoch samples live")
    p.add_argument("--threads", type=int, default=os.cpu_count(),
                   help="CPU intra-op threads (default: all cores, as Strata)")
    p.add_argument("--channels_last", action=argparse.BooleanOptionalAction, default=None,
                   help="NHWC model and inputs (default: on with --device gpu)")
    p.add_argument("--cudnn_benchmark", action=argparse.BooleanOptionalAction, default=True,
                   help="let cuDNN pick convolution algorithms by timing them (default: on)")
    p.add_argument("--tf32", action=argparse.BooleanOptionalAction, default=True,
                   help="float32 convolutions and matmuls on TF32 tensor cores (default: on, as "
                        "Strata's config::tensor_float_32_execution_enabled and TensorFlow; "
                        "PyTorch's own default leaves matmuls off)")
    p.add_argument("--ddp", action="store_true",
                   help="one process of a DistributedDataParallel job (gloo; RANK, WORLD_SIZE "
                        "from the environment); --batch is per process")
    p.add_argument("--init_method", default="env://",
                   help="--ddp's rendezvous: env:// (MASTER_ADDR, MASTER_PORT) or file://PATH")
    a = p.parse_args()
    if a.device == "cuda":
        a.device = "gpu"
    if a.batch < 1 or a.steps < 1 or a.warmup < 0 or a.sync_every < 1 or a.epoch_samples < 0:
        p.error("--batch, --steps and --sync_every must be >= 1, --warmup and --epoch_samples >= 0")
    if a.device == "gpu" and not torch.cuda.is_available():
        p.error(f"--device gpu: torch {torch.__version__} sees no CUDA GPU "
                f"(torch.cuda.is_available() is False); use --device cpu")
    if a.device == "cpu" and a.dtype == "fp16":
        p.error("--dtype fp16 needs --device gpu (loss scaling with GradScaler is GPU-only in "
                "older PyTorch); use bf16 on the CPU")
    if a.channels_last is None:
        a.channels_last = a.device == "gpu"
    if a.ddp and (a.device != "cpu" or a.epoch):
        p.error("--ddp runs on the CPU (gloo) over the repeated batch: no --device gpu or --epoch")
    return a


class Run:
    """The model, optimizer, precision and device of one benchmark, and its training step."""

    def __init__(self, a):
        self.dev = torch.device("cuda:0" if a.device == "gpu" else "cpu")
        self.is_cnn = a.model == "mnist_cnn"
        if self.is_cnn:
            model = seed_cnn()
            decayed = []
            self.sample_shape, self.epoch_samples = (28, 28), 60000
        else:
            model = resnet(int(a.model[len("resnet"):]))
            decayed = [m.weight for m in model.modules() if isinstance(m, nn.Conv2d)]
            decayed += [model[-1].weight, model[-1].bias]
            # Synthetic images are made NHWC, as Strata's: permuting to NCHW is then a
            # channels_last view without a copy.
            self.sample_shape, self.epoch_samples = (32, 32, 3), 50000
        self.channels_last = a.channels_last and not self.is_cnn
        self.total_params, self.trainable_params = param_counts(model)
        model = model.to(self.dev)
        if self.channels_last:
            model = model.to(memory_format=torch.channels_last)
        model.train()
        if a.ddp:  # broadcasts rank 0's parameters and buffers
            model = nn.parallel.DistributedDataParallel(model)
        self.model = model
        self.optimizer_name = a.optimizer or ("sgd" if self.is_cnn else "sgd_momentum")
        self.opt = make_optimizer(self.optimizer_name, model, 0.01 if self.is_cnn else 0.1, decayed)
        self.amp_dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
        self.scaler = make_grad_scaler() if a.dtype == "fp16" else None

    def synthetic(self, n, seed, device):
        """n samples like strata_bench's: U(0, 1) MNIST-sized images or N(0, 1) CIFAR-sized ones,
        labels uniform in [0, 10)."""
        g = torch.Generator().manual_seed(seed)
        shape = (n,) + self.sample_shape
        x = torch.rand(shape, generator=g) if self.is_cnn else torch.randn(shape, generator=g)
        y = torch.randint(0, 10, (n,), generator=g)
        return x.to(device), y.to(device)

    def to_input(self, x):
        # NHWC [n, 32, 32, 3] -> NCHW shape; channels_last strides when permuted without a copy.
        if self.is_cnn:
            return x
        x = x.permute(0, 3, 1, 2)
        return x if self.channels_last else x.contiguous()

    def step(self, x, y):
        """One training step on inputs made by to_input; returns the loss (on the device, not
        read)."""
        self.opt.zero_grad(set_to_none=True)
        autocast = (torch.autocast(device_type=self.dev.type, dtype=self.amp_dtype)
                    if self.amp_dtype is not None else contextlib.nullcontext())
        with autocast:
            loss = F.cross_entropy(self.model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        return loss.detach()

    def synchronize(self):
        if self.dev.type == "cuda":
            torch.cuda.synchronize(self.dev)
        if dist.is_initialized():  # rank 0's clock waits for the slowest rank
            dist.barrier()


def epoch_batches(run, a, x, y, samples):
    """One shuffled pass in batches of a.batch, each on the device (host data: gathered on the
    host, copied through pinned memory without blocking the host)."""
    perm = torch.randperm(samples, device=x.device)
    for start in range(0, samples, a.batch):
        idx = perm[start:start + a.batch]
        xb, yb = x.index_select(0, idx), y.index_select(0, idx)
        if xb.device != run.dev:
            xb, yb = xb.pin_memory().to(run.dev, non_blocking=True), \
                yb.pin_memory().to(run.dev, non_blocking=True)
        yield run.to_input(xb), yb


def main():
    a = parse_args()
    torch.set_num_threads(a.threads)
    rank, world = 0, 1
    if a.ddp:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        dist.init_process_group("gloo", init_method=a.init_method, rank=rank, world_size=world)
        if rank != 0:  # rank 0 speaks for the job
            import sys
            sys.stdout = open(os.devnull, "w")
    torch.manual_seed(42)
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    set_tf32(a.tf32)
    build_start = time.perf_counter()
    run = Run(a)
    x, y = run.synthetic(a.batch, 1 + 100 * rank, run.dev)
    x = run.to_input(x)
    samples = a.epoch_samples or run.epoch_samples
    epoch_steps = (samples + a.batch - 1) // a.batch

    timed = f"1 timed epoch ({epoch_steps} steps)" if a.epoch else f"{a.steps} timed steps"
    print(f"pytorch {torch.__version__} train: model {a.model} ({run.total_params} params), "
          f"batch {a.batch}{' per process' if a.ddp else ''}, optimizer {run.optimizer_name}, {torch.get_num_threads()} threads, "
          f"{a.warmup} warm-up + {timed}, channels_last={run.channels_last}"
          f"{f', DDP gloo, {world} processes' if a.ddp else ''}")
    print(f"params            {with_commas(run.total_params)} total, "
          f"{with_commas(run.trainable_params)} trainable")
    device = (f"{run.dev} ({torch.cuda.get_device_name(run.dev)}), cudnn.benchmark "
              f"{'on' if a.cudnn_benchmark else 'off'}, TF32 {'on' if a.tf32 else 'off'}"
              if run.dev.type == "cuda" else f"{run.dev} ({torch.get_num_threads()} threads)")
    precision = {"fp32": "float32", "bf16": "autocast bfloat16",
                 "fp16": "autocast float16 + GradScaler"}[a.dtype]
    print(f"device            {device}, dtype {a.dtype} ({precision})")
    if a.epoch:
        print(f"loop              python loop, one epoch of {with_commas(samples)} {a.epoch_data} "
              f"samples, shuffled; the host waits for the device every {a.sync_every} steps")
    else:
        print(f"loop              python loop over one batch on the device: the host waits for "
              f"the device every {a.sync_every} steps")

    first_loss = None
    for _ in range(a.warmup):
        loss = run.step(x, y)
        if first_loss is None:
            first_loss = loss.item()
    if a.epoch:
        data_device = run.dev if a.epoch_data == "device" else torch.device("cpu")
        xe, ye = run.synthetic(samples, 3, data_device)
        if a.warmup > 0 and samples % a.batch:  # the last, smaller batch: new shapes
            rest = samples % a.batch
            run.step(run.to_input(xe[:rest].to(run.dev)), ye[:rest].to(run.dev))
        batches = epoch_batches(run, a, xe, ye, samples)
    else:
        batches = ((x, y) for _ in range(a.steps))
    run.synchronize()
    setup_s = time.perf_counter() - build_start

    # Groups of sync_every steps: (ms per step, steps) each, as strata_bench's StepTimes.
    groups, in_group = [], 0
    loss_sum = torch.zeros((), device=run.dev)
    steps = 0
    last = start = time.perf_counter()
    for xb, yb in batches:
        loss_sum += run.step(xb, yb).float()
        steps += 1
        in_group += 1
        if in_group == a.sync_every:
            run.synchronize()
            now = time.perf_counter()
            groups.append(((now - last) * 1e3 / in_group, in_group))
            last, in_group = now, 0
    if in_group:
        run.synchronize()
        now = time.perf_counter()
        groups.append(((now - last) * 1e3 / in_group, in_group))
        last = now
    total_s = last - start
    mean_loss = loss_sum.item() / steps
    if first_loss is None:
        first_loss = mean_loss
    per_step = sorted(ms for ms, n in groups for _ in range(n))

    print(f"build + warm-up   {setup_s:.2f} s")
    if a.epoch:
        print(f"epoch             {total_s:.2f} s ({with_commas(samples)} samples, {steps} steps)")
    timed_samples = samples if a.epoch else a.batch * world * steps
    where = f"pytorch DDP gloo, {world} processes" if a.ddp else "pytorch, 1 device"
    print(f"samples/s         {timed_samples / total_s:.1f} ({where})")
    print(f"ms/step           mean {total_s * 1e3 / steps:.2f}  median "
          f"{per_step[len(per_step) // 2]:.2f}  best {per_step[0]:.2f}"
          f"{' (median and best over groups of steps)' if a.sync_every > 1 else ''}")
    print(f"loss              {first_loss:.4f} (first step) -> {mean_loss:.4f} "
          f"(mean of the timed steps)")
    if run.dev.type == "cuda":
        print(f"peak GPU memory   {torch.cuda.max_memory_allocated(run.dev) / 2 ** 20:.1f} MiB "
              f"({run.dev}, tensors in use at most)")
    if a.ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
